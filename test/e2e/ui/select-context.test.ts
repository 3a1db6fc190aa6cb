// "Select Context/Namespace…" in a real VS Code: with a kubeconfig holding two contexts of the
// local cluster ("qs-first", current, namespace default; "qs-second", no namespace), picking
// qs-second and the fixture's namespace in the command's two quick picks switches what the
// Queue Splits view talks to (the context row and the annotated workload of that namespace), and
// the choice is remembered for the workspace: after a window reload the view still shows it,
// also when the window is reloaded the moment the command is done (the workbench writes its
// workspaceState out only a little later; see extension/selectionStore.ts).
// Screenshots: test-results/e2e/select-context-and-namespace/.
import assert from 'node:assert/strict';
import * as fs from 'node:fs';
import * as path from 'node:path';
import { after, before, test } from 'node:test';
import { parse, stringify } from 'yaml';
import { waitForServerLog } from '../harness/codeServer';
import { removeTempDir, tempDir } from '../harness/exitCleanup';
import { fillQuickInput, quickPickRows, waitForQuickInput } from '../harness/quickInput';
import { withWorkbench } from '../harness/session';
import { openViewContainer, runCommand, waitForTreeRow } from '../harness/workbench';
import { prepareSplitFixture, type SplitFixture } from '../support/cluster';

interface KubeconfigFile {
  clusters: { name: string }[];
  users: { name: string }[];
  contexts: { name: string; context: Record<string, string> }[];
  'current-context': string;
}

let fixture: SplitFixture;
let dir: string;
before(async () => {
  fixture = await prepareSplitFixture('qs-e2e-ctx');
  dir = tempDir('qs-e2e-kubeconfig-');
});
after(async () => {
  removeTempDir(dir);
  await fixture?.close();
});

/** The admin kubeconfig with two contexts of the same cluster and user. */
function twoContextKubeconfig(): string {
  const admin = parse(fs.readFileSync(fixture.services.kubeconfig, 'utf8')) as KubeconfigFile;
  const cluster = admin.clusters[0]!.name;
  const user = admin.users[0]!.name;
  const file = path.join(dir, 'kubeconfig');
  fs.writeFileSync(
    file,
    stringify({
      ...admin,
      contexts: [
        { name: 'qs-first', context: { cluster, user, namespace: 'default' } },
        { name: 'qs-second', context: { cluster, user } },
      ],
      'current-context': 'qs-first',
    }),
    { mode: 0o600 },
  );
  return file;
}

test('select context and namespace', async (t) => {
  // The kubeconfig comes by $KUBECONFIG, not the queueSplit.kubeconfig setting: code-server,
  // reloaded on a loaded machine, now and then starts the extension host without the user's
  // settings and never sends them (seen in CI: the extension read $KUBECONFIG and no settings
  // change ever arrived), and what is tested here is the selection, not settings delivery.
  const env = { KUBECONFIG: twoContextKubeconfig() };
  const settings = { 'queueSplit.owner': fixture.owner };
  await withWorkbench('select context and namespace', { settings, env }, async ({ page, server, steps }) => {
    const view = 'Queue Splits';
    await openViewContainer(page, 'Queue Split');
    // The kubeconfig's current context first (its namespace, default, has no annotated workload).
    await page
      .locator('.welcome-view-content, .monaco-list-row')
      .filter({ hasText: /qs-first|No Deployment or StatefulSet/ })
      .first()
      .waitFor({ state: 'visible', timeout: 60_000 });
    await steps.shot('first context');

    await runCommand(page, 'Queue Split: Select Context/Namespace…');
    await waitForQuickInput(page, 'Kubernetes context');
    const contexts = await quickPickRows(page);
    assert.ok(
      contexts.some((r) => r.includes('qs-first')) && contexts.some((r) => r.includes('qs-second')),
      `both contexts offered: ${contexts.join(' | ')}`,
    );
    await steps.shot('context pick');
    await fillQuickInput(page, 'Kubernetes context', 'qs-second');
    await waitForQuickInput(page, 'namespace in qs-second');
    await steps.shot('namespace pick');
    await fillQuickInput(page, 'namespace in qs-second', fixture.namespace);

    const row = await waitForTreeRow(page, view, 'qs-second', 60_000);
    assert.match((await row.textContent()) ?? '', new RegExp(`namespace ${fixture.namespace}`));
    await waitForTreeRow(page, view, fixture.workload, 60_000);
    await steps.shot('second context, the fixture namespace');

    // Remembered for this workspace: a reloaded window comes back to the same choice.
    await page.reload({ waitUntil: 'domcontentloaded' });
    await page.locator('.monaco-workbench').waitFor({ timeout: 60_000 });
    await openViewContainer(page, 'Queue Split');
    const again = await waitForTreeRow(page, view, 'qs-second', 60_000);
    assert.match((await again.textContent()) ?? '', new RegExp(`namespace ${fixture.namespace}`));
    await waitForTreeRow(page, view, fixture.workload, 60_000);
    await steps.shot('after reload');

    // Same workbench (a second one would cost CI half a minute), its own name for the bug.
    await t.test('a window reloaded the moment the pick is done still shows the choice', async () => {
      await runCommand(page, 'Queue Split: Select Context/Namespace…');
      await fillQuickInput(page, 'Kubernetes context', 'qs-first');
      await fillQuickInput(page, 'namespace in qs-first', fixture.namespace);
      // The command logs this after the choice is saved: reload at once, as an impatient user.
      await waitForServerLog(
        server,
        'Queue Split.log',
        `selected context qs-first, namespace ${fixture.namespace}`,
      );
      await page.reload({ waitUntil: 'domcontentloaded' });
      await page.locator('.monaco-workbench').waitFor({ timeout: 60_000 });
      await openViewContainer(page, 'Queue Split');
      const first = await waitForTreeRow(page, view, 'qs-first', 60_000);
      assert.match((await first.textContent()) ?? '', new RegExp(`namespace ${fixture.namespace}`));
      await steps.shot('reloaded at once');
    });
  });
});
