// Checks the harness's own helpers against VS Code's built-in UI, so that when a VS Code upgrade
// moves a selector this test says "the harness broke" before a product test says something
// misleading. Nothing here depends on Queue Split.
import { test } from 'node:test';
import { withWorkbench } from '../harness/session';
import { openViewContainer, runCommand, waitForNotification, waitForTreeRow } from '../harness/workbench';

test('harness self-check: tree rows, command palette, notifications', async () => {
  const workspaceFiles = { 'hello.txt': 'hello\n', 'src/app.ts': 'export {};\n' };
  await withWorkbench('harness self-check', { workspaceFiles }, async ({ page, steps }) => {
    await openViewContainer(page, 'Explorer');
    // The Explorer's folder section is titled with the workspace folder's name.
    await waitForTreeRow(page, /qs-e2e-workspace-/i, 'hello.txt');
    await waitForTreeRow(page, /qs-e2e-workspace-/i, 'src');
    await steps.shot('explorer rows');

    // The built-in Emmet extension answers any of its commands with a notification when no
    // editor is open: a notification that needs no network, no extension of ours, no setup.
    await runCommand(page, 'Emmet: Balance (outward)');
    await waitForNotification(page, 'No editor is active');
    await steps.shot('notification');
  });
});
