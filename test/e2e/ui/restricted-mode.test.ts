// Workspace Trust in a real VS Code started without --disable-workspace-trust, on a cloned
// repository nobody trusted: the startup prompt is answered "No, I don't trust the authors", and
// the window is in Restricted Mode. Queue Split is enabled there (untrustedWorkspaces: limited):
// its view shows the cluster — through the kubeconfig of the user's settings, although the
// workspace's .vscode/settings.json names another (queueSplit.kubeconfig is machine-scoped, so
// is the sidecar's Node) — with a message saying what needs trust; Start Split… and Send Test
// Message… say "Trust the workspace to …" and create nothing; Set Broker Password… works: the
// local RabbitMQ's password typed into it goes to VS Code's secret storage (the row says stored).
// Trusting the workspace from that notification lifts it: the message goes, Start Split… asks
// its questions. Screenshots: test-results/e2e/restricted-mode/ (copies in docs/images/extension/).
import assert from 'node:assert/strict';
import * as fs from 'node:fs';
import * as path from 'node:path';
import { after, before, test } from 'node:test';
import type { Page } from 'playwright-core';
import { waitForServerLog } from '../harness/codeServer';
import {
  clickDialogButton,
  fillQuickInput,
  quickPickRows,
  waitForDialog,
  waitForQuickInput,
} from '../harness/quickInput';
import { withWorkbench } from '../harness/session';
import { openViewContainer, runCommand, waitForNotification, waitForTreeRow } from '../harness/workbench';
import { prepareSplitFixture, splitNamesIn, workloadManifest, type SplitFixture } from '../support/cluster';

const RESTRICTED_MESSAGE =
  'Restricted Mode: you see the splits and can stop yours. Trust the workspace to start a split or send a test message.';

let fixture: SplitFixture;
before(async () => {
  fixture = await prepareSplitFixture('qs-e2e-trust');
});
after(async () => {
  await fixture?.close();
});

test('restricted mode', async () => {
  const { namespace, workload, owner } = fixture;
  const workspaceFiles = {
    'k8s/deployment.yaml': workloadManifest(workload),
    // What a cloned repository could try: its own kubeconfig (a kubeconfig can run commands
    // through exec credential plugins), its own Node for the sidecar, its own delivery target.
    '.vscode/settings.json': JSON.stringify(
      {
        'queueSplit.kubeconfig': '/from/the/workspace/kubeconfig',
        'queueSplit.sidecar.nodePath': '/from/the/workspace/node',
        'queueSplit.install.image': 'registry.example.com/from-the-workspace:1',
        'queueSplit.delivery.httpTarget': 'http://192.0.2.1/from-the-workspace',
      },
      null,
      2,
    ),
  };
  const settings = {
    'queueSplit.kubeconfig': fixture.services.kubeconfig,
    'queueSplit.namespace': namespace,
    'queueSplit.owner': owner,
    // The user's own local broker for relay delivery, without its password.
    'queueSplit.delivery.relayAmqpUrl': 'amqp://guest@127.0.0.1:5672',
  };
  await withWorkbench(
    'restricted mode',
    { workspaceFiles, settings, workspaceTrust: true },
    async (session) => {
      const { page, steps } = session;
      const prompt = await waitForDialog(
        page,
        /Do you trust the authors of the files in this folder\?/,
        60_000,
      );
      await steps.shot('trust prompt');
      await clickDialogButton(prompt, "No, I don't trust the authors");
      await restrictedModeIndicator(page).waitFor({ state: 'visible', timeout: 30_000 });

      // The view works, from the user's kubeconfig: the workspace's was not even tried.
      await openViewContainer(page, 'Queue Split');
      await waitForTreeRow(page, 'Queue Splits', 'queuesplit-admin', 60_000);
      await waitForTreeRow(page, 'Queue Splits', workload);
      await waitForTreeRow(page, 'Queue Splits', /orders.*no routes/);
      await viewMessage(page)
        .filter({ hasText: RESTRICTED_MESSAGE })
        .waitFor({ state: 'visible', timeout: 30_000 });
      await steps.shot('queue splits view in restricted mode');
      const log = await serverLogText(session.server.logsDir, 'Queue Split.log');
      assert.ok(!log.includes('/from/the/workspace'), 'the workspace kubeconfig was never read');

      // What needs trust says so, and does nothing.
      await runCommand(page, 'Queue Split: Start Split…');
      const refused = await waitForNotification(
        page,
        /Trust the workspace to start a split: it acts on your cluster/,
      );
      assert.match((await refused.textContent()) ?? '', /Manage Workspace Trust/);
      await steps.shot('start split asks for trust');
      await runCommand(page, 'Notifications: Clear All Notifications');
      await runCommand(page, 'Queue Split: Send Test Message…');
      await waitForNotification(page, /Trust the workspace to send a test message/);
      await steps.shot('send test message asks for trust');
      await runCommand(page, 'Notifications: Clear All Notifications');
      await runCommand(page, 'Queue Split: Add Queue Split to Launch Configuration');
      await waitForNotification(
        page,
        /Trust the workspace to add Queue Split to a launch configuration: VS Code starts no debug session in Restricted Mode/,
      );
      await runCommand(page, 'Notifications: Clear All Notifications');
      assert.deepEqual(await splitNamesIn(fixture.admin, namespace), [], 'no QueueSplit was created');

      // What works without trust: keeping a broker password, in VS Code's secret storage.
      await runCommand(page, 'Queue Split: Set Broker Password…');
      await waitForQuickInput(page, 'Set Broker Password', 30_000);
      await steps.shot('set broker password offered');
      const rows = await quickPickRows(page);
      assert.ok(
        rows.some((r) => /Local RabbitMQ \(relay delivery\).*amqp:\/\/guest@127\.0\.0\.1:5672/.test(r)),
        JSON.stringify(rows),
      );
      await page
        .locator('.quick-input-widget .quick-input-list .monaco-list-row', { hasText: 'Local RabbitMQ' })
        .first()
        .click();
      const passwordBox = await waitForQuickInput(page, 'Set Broker Password: local RabbitMQ', 30_000);
      assert.equal(await passwordBox.getAttribute('type'), 'password', 'typed hidden');
      await fillQuickInput(page, 'Set Broker Password: local RabbitMQ', 'guest');
      await waitForNotification(
        page,
        /The password for amqp:\/\/guest@127\.0\.0\.1:5672 is in VS Code's secret storage/,
      );
      await steps.shot('broker password stored');
      await runCommand(page, 'Notifications: Clear All Notifications');
      await runCommand(page, 'Queue Split: Set Broker Password…');
      await waitForQuickInput(page, 'Set Broker Password', 30_000);
      assert.ok(
        (await quickPickRows(page)).some((r) => /Local RabbitMQ.*· stored/.test(r)),
        'the row says the password is stored',
      );
      await page.keyboard.press('Escape');
      const userSettings = fs.readFileSync(
        path.join(session.server.userDataDir, 'User', 'settings.json'),
        'utf8',
      );
      assert.ok(!userSettings.includes('guest:guest'), 'the password is not in settings.json');

      // Trust, from the refusal's own button: the gate lifts without a reload.
      await runCommand(page, 'Queue Split: Start Split…');
      const again = await waitForNotification(page, /Trust the workspace to start a split/);
      await again.locator('.monaco-button', { hasText: 'Manage Workspace Trust' }).first().click();
      const trustEditor = page.locator('.workspace-trust-editor');
      await trustEditor.waitFor({ state: 'visible', timeout: 30_000 });
      await steps.shot('workspace trust editor');
      await trustEditor
        .locator('.monaco-button', { hasText: /^Trust$/ })
        .first()
        .click();
      await restrictedModeIndicator(page).waitFor({ state: 'hidden', timeout: 30_000 });
      await runCommand(page, 'View: Close All Editors');
      await openViewContainer(page, 'Queue Split');
      await viewMessage(page)
        .filter({ hasText: RESTRICTED_MESSAGE })
        .waitFor({ state: 'hidden', timeout: 30_000 });
      await runCommand(page, 'Queue Split: Start Split…');
      await waitForQuickInput(page, /queues of/, 60_000);
      await steps.shot('trusted: start split asks its questions');
      await page.keyboard.press('Escape');

      // Trusted now, and still the machine-scoped settings come from the user only: the log of
      // the view's connection names the user's kubeconfig.
      await waitForServerLog(session.server, 'Queue Split.log', 'Queue Split', 10_000);
      const after = await serverLogText(session.server.logsDir, 'Queue Split.log');
      assert.ok(
        !after.includes('/from/the/workspace'),
        'a trusted workspace cannot set machine-scoped settings either',
      );
      assert.deepEqual(await splitNamesIn(fixture.admin, namespace), [], 'Escape created nothing');
    },
  );
});

/** The status bar's "Restricted Mode" entry. */
function restrictedModeIndicator(page: Page) {
  return page
    .locator('#workbench\\.parts\\.statusbar .statusbar-item', { hasText: 'Restricted Mode' })
    .first();
}

/** The message a tree view shows above its rows (TreeView.message). */
function viewMessage(page: Page) {
  return page
    .locator('.pane')
    .filter({ has: page.locator('.pane-header', { hasText: 'Queue Splits' }) })
    .locator('.message');
}

/** Every "Queue Split.log" the server wrote so far, concatenated. */
async function serverLogText(logsDir: string, file: string): Promise<string> {
  if (!fs.existsSync(logsDir)) return '';
  return fs
    .readdirSync(logsDir, { recursive: true, encoding: 'utf8' })
    .filter((f) => path.basename(f) === file)
    .map((f) => fs.readFileSync(path.join(logsDir, f), 'utf8'))
    .join('\n');
}
