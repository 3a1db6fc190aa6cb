// A user's view of the extension in a real VS Code (code-server + headless Chromium): the
// workbench loads with the extension under development, and "Queue Split: Show Logs" from the
// command palette opens the Output panel on the extension's channel.
// Screenshots: test-results/e2e/show-logs-opens-the-queue-split-output-channel/.
import { test } from 'node:test';
import { withWorkbench } from '../harness/session';
import { runCommand, waitForOutput } from '../harness/workbench';

test('Show Logs opens the Queue Split output channel', async () => {
  await withWorkbench('Show Logs opens the Queue Split output channel', {}, async ({ page, steps }) => {
    await steps.shot('workbench loaded');

    await runCommand(page, 'Queue Split: Show Logs');
    await steps.shot('show logs ran');

    await waitForOutput(page, 'Queue Split', /Queue Split \d+\.\d+\.\d+ activated/);
    await steps.shot('output channel');
  });
});
