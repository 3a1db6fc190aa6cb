// Several namespaces in the Queue Splits view, and the restart confirmation of a debug launch, in
// a real VS Code (code-server + headless Chromium) as a developer bound to the
// queuesplit-developer role in one namespace only (never the admin kubeconfig):
//   queueSplit.namespaces names a namespace the user may not read, then theirs → each is a node;
//   expanding the unreadable one shows its 403 on its own node while the other lists its workload
//   → a debug launch naming a split of that workload asks before restarting its pods, and Cancel
//   starts nothing (no QueueSplit on the API server, no debuggee, a line in the log) → Select
//   Context/Namespace… makes the unreadable namespace the selected one → Start Split… from the
//   workload's row in the other (not selected) namespace creates the split there, while the same
//   command from the palette acts in the selected namespace (and is refused there).
// Screenshots: test-results/e2e/several-namespaces-and-the-debug-launch-confirmation/ (the tree's
// is docs/images/extension/tree-two-namespaces.png).
import assert from 'node:assert/strict';
import * as fs from 'node:fs';
import * as path from 'node:path';
import { after, before, test } from 'node:test';
import { applyObjects } from '../../../deploy/apply';
import { developerBinding } from '../../../deploy/manifests';
import { userKubeconfig } from '../../env/k8s/kubeconfig';
import { runDir } from '../../env/paths';
import { createNamespace, deleteNamespace } from '../../support/kube';
import { waitForServerLog } from '../harness/codeServer';
import { removeTempDir, tempDir } from '../harness/exitCleanup';
import { acceptQuickInput, clickDialogButton, fillQuickInput, waitForDialog } from '../harness/quickInput';
import { withWorkbench } from '../harness/session';
import { openViewContainer, runCommand, waitForNotification, waitForTreeRow } from '../harness/workbench';
import { pollUntil, prepareSplitFixture, type SplitFixture } from '../support/cluster';

const VIEW = 'Queue Splits';
let fixture: SplitFixture;
/** A namespace the developer may not read (no binding there). */
let forbidden: string;
let dir: string;
let user: string;
let kubeconfig: string;

before(async () => {
  fixture = await prepareSplitFixture('qs-e2e-ns');
  forbidden = await createNamespace(fixture.admin, 'qs-e2e-nsx');
  user = `dev-ns-${fixture.namespace.slice(-6)}`;
  await applyObjects(fixture.admin, [developerBinding(fixture.namespace, { kind: 'User', name: user })]);
  dir = tempDir('qs-e2e-ns-');
  kubeconfig = path.join(dir, 'developer.kubeconfig');
  // Its context's namespace is the fixture's: the selected namespace.
  await userKubeconfig(
    fixture.admin,
    user,
    fixture.namespace,
    path.join(runDir, 'k8s', 'pki', 'ca.crt'),
    kubeconfig,
  );
});
after(async () => {
  if (forbidden !== undefined) await deleteNamespace(fixture.admin, forbidden);
  await fixture?.close();
  if (dir !== undefined) removeTempDir(dir);
});

test('several namespaces and the debug launch confirmation', async () => {
  const started = Date.now();
  const debuggeeRan = 'debuggee-ran.txt';
  const workspaceFiles = {
    'app.js': `require('fs').writeFileSync(${JSON.stringify(debuggeeRan)}, 'ran');\n`,
    '.vscode/launch.json': JSON.stringify({
      version: '0.2.0',
      configurations: [
        {
          type: 'node',
          request: 'launch',
          name: 'Debug orders',
          program: '${workspaceFolder}/app.js',
          cwd: '${workspaceFolder}',
          env: { QUEUE_SPLIT: 'orders' },
        },
      ],
    }),
    '.vscode/queue-split.json': JSON.stringify({
      splits: {
        orders: { workload: `deployment/${fixture.workload}`, queues: ['orders'], delivery: 'http' },
      },
    }),
  };
  // The kubeconfig by $KUBECONFIG: queueSplit.kubeconfig is machine-scoped, and code-server
  // drops a machine setting from the user's settings a moment after the start (the view then
  // turned to the server's own kubeconfig mid-test); select-context.test.ts says more.
  const env = { KUBECONFIG: kubeconfig };
  const settings = {
    // The unreadable one first: the developer's own namespace is the second node.
    'queueSplit.namespaces': [forbidden, fixture.namespace],
    'queueSplit.leaseSeconds': 30,
    'queueSplit.delivery.httpTarget': 'http://127.0.0.1:9/',
    'debug.openDebug': 'neverOpen',
  };

  await withWorkbench(
    'several namespaces and the debug launch confirmation',
    { workspaceFiles, settings, env },
    async (session) => {
      const { page, steps, server } = session;
      await openViewContainer(page, 'Queue Split');
      // A wider side bar, so that the rows' descriptions (the refusal) are readable in the screenshot.
      const sidebar = await page.locator('.part.sidebar').boundingBox();
      if (sidebar !== null) {
        const edge = sidebar.x + sidebar.width;
        await page.mouse.move(edge, 400);
        await page.mouse.down();
        await page.mouse.move(edge + 520, 400, { steps: 5 });
        await page.mouse.up();
      }
      // Both namespaces are nodes; the selected one opens and lists its workload.
      const forbiddenRow = await waitForTreeRow(page, VIEW, forbidden, 60_000);
      const mineRow = await waitForTreeRow(page, VIEW, fixture.namespace);
      assert.match((await mineRow.textContent()) ?? '', /selected/);
      await waitForTreeRow(page, VIEW, fixture.workload, 60_000);
      // The unreadable one loads when expanded: its error is on its own node. A click toggles
      // it, and the row may be redrawn under the pointer as the other namespace loads: click
      // again until the row says it is expanded.
      await forbiddenRow.click();
      await pollUntil(
        'the refused namespace expanded',
        async () => {
          const row = await waitForTreeRow(page, VIEW, forbidden);
          const expanded = await row.getAttribute('aria-expanded');
          if (expanded === 'true') return expanded;
          await row.click();
          await page.waitForTimeout(1_000); // the expansion's own redraw, before looking again
          return (await waitForTreeRow(page, VIEW, forbidden)).getAttribute('aria-expanded');
        },
        (expanded) => expanded === 'true',
        30_000,
      );
      const failed = await waitForTreeRow(page, VIEW, new RegExp(`${forbidden}.*may not`), 30_000);
      assert.match((await failed.textContent()) ?? '', /may not (list|watch)/);
      // The refusal, with what to ask for, is also the first row under it.
      await waitForTreeRow(page, VIEW, /may not watch .*Ask your cluster admin/, 30_000);
      // The error stands alone: no "Loading…" promising a list that is not coming.
      assert.equal(
        await page.locator('.monaco-list-row').filter({ hasText: 'Loading…' }).count(),
        0,
        'no Loading… row under the refused namespace',
      );
      // …and the other namespace still works.
      await waitForTreeRow(page, VIEW, new RegExp(`${fixture.workload}.*Deployment`), 5_000);
      await page.mouse.move(600, 600); // no hover in the screenshot
      await steps.shot('two namespaces, one with an error');
      console.log(
        `two namespaces shown, the error on its node: ${((Date.now() - started) / 1000).toFixed(1)}s`,
      );

      // A debug launch naming a split of orders-app: its first split, so it asks first.
      const launchStarted = Date.now();
      await runCommand(page, 'Debug: Start Debugging');
      const restart = await waitForDialog(
        page,
        `Starting this split restarts Deployment ${fixture.workload} in ${fixture.namespace}`,
        60_000,
      );
      await steps.shot('debug launch asks before restarting the pods');
      await clickDialogButton(restart, 'Cancel');
      await waitForServerLog(
        server,
        'Queue Split.log',
        `launch "Debug orders" cancelled at the confirmation that it restarts Deployment ${fixture.workload} in ${fixture.namespace}: nothing was created`,
        10_000,
      );
      // Nothing on the API server, no debuggee.
      await new Promise((r) => setTimeout(r, 2_000));
      assert.deepEqual(await fixture.splits(), [], 'Cancel created no QueueSplit');
      assert.equal(fs.existsSync(path.join(session.workspace, debuggeeRan)), false, 'no debuggee ran');
      console.log(
        `debug launch → confirmation → Cancel: ${((Date.now() - launchStarted) / 1000).toFixed(1)}s`,
      );

      // The unreadable namespace becomes the selected one (typed: the developer may not list
      // namespaces). A palette command now acts there; a row keeps acting in its own namespace.
      await runCommand(page, 'Queue Split: Select Context/Namespace…');
      await acceptQuickInput(page, 'Kubernetes context', 30_000);
      await fillQuickInput(page, /namespace in/, forbidden, 30_000);
      await pollUntil(
        'the unreadable namespace marked selected',
        async () => (await waitForTreeRow(page, VIEW, forbidden)).textContent(),
        (text) => /selected/.test(text ?? ''),
        30_000,
      );
      await runCommand(page, 'Queue Split: Start Split…');
      const refusedHere = await waitForNotification(
        page,
        new RegExp(`may not .*${forbidden}|${forbidden}.*may not`),
      );
      assert.doesNotMatch((await refusedHere.textContent()) ?? '', new RegExp(fixture.namespace));
      await steps.shot('a palette command acts in the selected namespace');
      assert.deepEqual(await fixture.splits(), [], 'the refused palette start created nothing');

      // Start Split… on the workload of the second namespace (not the selected one): the row's own inline action, which
      // passes the row (and so its namespace) to the command. (The right-click menu's entries
      // are read in split-lifecycle; a click on a menu item did not run it in code-server.)
      const startStarted = Date.now();
      // Its namespace node stays expanded across the change of selection (or is opened again).
      await pollUntil(
        'the other namespace expanded',
        async () => {
          const row = await waitForTreeRow(page, VIEW, fixture.namespace);
          if ((await row.getAttribute('aria-expanded')) !== 'true') await row.click();
          return page
            .locator('.monaco-list-row', { hasText: new RegExp(`${fixture.workload}.*Deployment`) })
            .count();
        },
        (rows) => rows > 0,
        30_000,
      );
      // One click: a namespace watch's change redraws only the rows it changed, so the row keeps
      // its handle (a whole-tree redraw made VS Code run the action without its row, and the
      // command acted in the selected namespace: unit treeRowsKept.test.ts).
      const workloadRow = await waitForTreeRow(page, VIEW, new RegExp(`${fixture.workload}.*Deployment`));
      await workloadRow.hover();
      await workloadRow.locator('.action-label[aria-label^="Start Split"]').first().click();
      await acceptQuickInput(page, new RegExp(`queues of ${fixture.workload}`), 60_000);
      await acceptQuickInput(page, 'header filter', 30_000);
      await acceptQuickInput(page, 'delivery', 30_000);
      await acceptQuickInput(page, 'http target', 30_000);
      const again = await waitForDialog(
        page,
        `restarts Deployment ${fixture.workload} in ${fixture.namespace}`,
      );
      await clickDialogButton(again, 'Start Split');
      const names = await pollUntil(
        'the split created in the second namespace',
        fixture.splits,
        (n) => n.length === 1,
        60_000,
      );
      assert.match(names[0] ?? '', new RegExp(fixture.workload));
      await waitForTreeRow(page, VIEW, new RegExp(`${user} \\(you\\)`), 60_000);
      await page.mouse.move(600, 600);
      await steps.shot('a split started in the second namespace');
      console.log(
        `Start Split… in the second namespace → QueueSplit there: ${((Date.now() - startStarted) / 1000).toFixed(1)}s`,
      );
    },
  );
});
