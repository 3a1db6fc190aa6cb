// Every way the first look at a cluster can fail, in one real VS Code, as a developer meets them
// (docs/extension-errors.md): the kubeconfig ($KUBECONFIG, rewritten between steps) points at
//   a closed loopback port → a CA that did not sign the real API server → a bearer token the
//   API server refuses (401) → a credential plugin that is not installed (kubelogin) → one that
//   fails (a script printing a token-bearing error on stderr) → a Kubernetes user without the
//   developer role (403),
// and for each the Queue Splits view shows that class's welcome text and buttons, and an error
// notification says what failed in editor words with the buttons that fix it. The view's
// "Retry" button moves from one to the next; "Copy RoleBinding Command" puts the command on the
// clipboard, the admin binding it is what lets the same user in. Then "Start Split…" with relay
// delivery to a closed local RabbitMQ: the sidecar's `broker-unreachable` error line is shown
// naming the setting (never the sidecar flag), and its "Open Setting" opens it.
// Screenshots: test-results/e2e/error-classes-in-the-view-and-notifications/ (the committed
// copies: docs/images/extension/).
import assert from 'node:assert/strict';
import { execFileSync, spawnSync } from 'node:child_process';
import * as fs from 'node:fs';
import * as path from 'node:path';
import { after, before, test } from 'node:test';
import type { Locator, Page } from 'playwright-core';
import { parse, stringify } from 'yaml';
import { applyObjects } from '../../../deploy/apply';
import { developerBinding } from '../../../deploy/manifests';
import { userKubeconfig } from '../../env/k8s/kubeconfig';
import { runDir } from '../../env/paths';
import { freePort } from '../harness/codeServer';
import { removeTempDir, tempDir } from '../harness/exitCleanup';
import { acceptQuickInput, clickDialogButton, waitForDialog } from '../harness/quickInput';
import { withWorkbench } from '../harness/session';
import type { Steps } from '../harness/steps';
import { openViewContainer, runCommand, waitForNotification, waitForTreeRow } from '../harness/workbench';
import { prepareSplitFixture, workloadManifest, type SplitFixture } from '../support/cluster';

interface KubeconfigFile {
  clusters: { name: string; cluster: Record<string, unknown> }[];
  users: { name: string; user: Record<string, unknown> }[];
  contexts: { name: string; context: Record<string, string> }[];
  'current-context': string;
}

let fixture: SplitFixture;
let dir: string;
let user: string;
let developerKubeconfig: string;
before(async () => {
  fixture = await prepareSplitFixture('qs-e2e-err');
  dir = tempDir('qs-e2e-errors-');
  // A Kubernetes user (a client certificate), bound to nothing yet.
  user = `dev-err-${fixture.namespace.slice(-6)}`;
  developerKubeconfig = path.join(dir, 'developer.kubeconfig');
  await userKubeconfig(
    fixture.admin,
    user,
    fixture.namespace,
    path.join(runDir, 'k8s', 'pki', 'ca.crt'),
    developerKubeconfig,
  );
});
after(async () => {
  if (dir !== undefined) removeTempDir(dir);
  await fixture?.close();
});

/** The admin kubeconfig's cluster and user, changed as a step needs; context "dev" in the fixture's namespace. */
function variant(change: { server?: string; ca?: string; user?: Record<string, unknown> }): string {
  const admin = parse(fs.readFileSync(fixture.services.kubeconfig, 'utf8')) as KubeconfigFile;
  const cluster = { ...admin.clusters[0]!.cluster };
  if (change.server !== undefined) cluster.server = change.server;
  if (change.ca !== undefined) cluster['certificate-authority-data'] = change.ca;
  return stringify({
    apiVersion: 'v1',
    kind: 'Config',
    clusters: [{ name: 'qs-e2e', cluster }],
    users: [{ name: 'qs-e2e-user', user: change.user ?? admin.users[0]!.user }],
    contexts: [
      { name: 'dev', context: { cluster: 'qs-e2e', user: 'qs-e2e-user', namespace: fixture.namespace } },
    ],
    'current-context': 'dev',
  });
}

/** A CA of its own: it signed nothing the API server presents. */
function otherCa(): string {
  const key = path.join(dir, 'other-ca.key');
  const crt = path.join(dir, 'other-ca.crt');
  execFileSync(
    'openssl',
    [
      'req',
      '-x509',
      '-newkey',
      'rsa:2048',
      '-nodes',
      '-keyout',
      key,
      '-out',
      crt,
      '-subj',
      '/CN=not-the-cluster-ca',
      '-days',
      '1',
    ],
    { stdio: ['ignore', 'ignore', 'pipe'] },
  );
  return fs.readFileSync(crt).toString('base64');
}

const onPath = (binary: string) => spawnSync('sh', ['-c', `command -v ${binary}`]).status === 0;

const FAILING_PLUGIN = `#!/bin/sh
echo "error: your session for dev@example.com has expired (refresh_token=rt-9f8e7d6c5b4a3f2e1d0c)" >&2
echo "second line: never shown" >&2
exit 1
`;

/** The notification toast whose text matches, and the titles of its buttons. */
async function toast(
  page: Page,
  text: RegExp,
  timeoutMs = 60_000,
): Promise<{ text: string; buttons: string[]; el: Locator }> {
  const el = await waitForNotification(page, text, timeoutMs);
  const buttons = await el
    .locator('.notification-list-item-buttons-container .monaco-button')
    .evaluateAll((bs) => bs.map((b) => (b.textContent ?? '').trim()));
  return { text: ((await el.textContent()) ?? '').replace(/\s+/g, ' '), buttons, el };
}

/** The Queue Splits welcome view showing `text`, and the labels of its buttons. */
async function welcome(
  page: Page,
  text: RegExp,
  timeoutMs = 60_000,
): Promise<{ el: Locator; buttons: string[] }> {
  const el = page.locator('.welcome-view-content').filter({ hasText: text }).first();
  await el.waitFor({ state: 'visible', timeout: timeoutMs });
  const buttons = await el
    .locator('.monaco-button')
    .evaluateAll((bs) => bs.map((b) => (b.textContent ?? '').trim()));
  return { el, buttons };
}

async function clearNotifications(page: Page): Promise<void> {
  await runCommand(page, 'Notifications: Clear All Notifications');
  await page
    .locator('.notifications-toasts .notification-toast')
    .first()
    .waitFor({ state: 'hidden', timeout: 10_000 })
    .catch(() => undefined);
}

test('error classes in the view and notifications', async () => {
  const kubeconfig = path.join(dir, 'kubeconfig');
  const closed = await freePort();
  const closedAmqp = await freePort();
  const plugin = path.join(dir, 'sso-login-plugin');
  fs.writeFileSync(plugin, FAILING_PLUGIN, { mode: 0o755 });
  // kubelogin is not installed on these machines; should it ever be, its own PATH hides it.
  const emptyDir = fs.mkdtempSync(path.join(dir, 'empty-'));
  const kubelogin = {
    apiVersion: 'client.authentication.k8s.io/v1beta1',
    command: 'kubelogin',
    args: ['get-token', '--server-id', 'example'],
    interactiveMode: 'Never',
    ...(onPath('kubelogin') ? { env: [{ name: 'PATH', value: emptyDir }] } : {}),
  };
  fs.writeFileSync(kubeconfig, variant({ server: `https://127.0.0.1:${closed}` }), { mode: 0o600 });

  const settings = {
    'queueSplit.delivery.mode': 'relay',
    'queueSplit.delivery.relayAmqpUrl': `amqp://guest:guest@127.0.0.1:${closedAmqp}`,
  };
  const workspaceFiles = { 'k8s/deployment.yaml': workloadManifest(fixture.workload) };
  // The kubeconfig by $KUBECONFIG (as select-context.test.ts explains): what changes between the
  // steps is the file, read again on every look, and the view's own Retry button looks again.
  const env = { KUBECONFIG: kubeconfig };

  await withWorkbench(
    'error classes in the view and notifications',
    { settings, env, workspaceFiles },
    async ({ page, steps }) => {
      await openViewContainer(page, 'Queue Split');

      // 1. Nothing listens: the API "does not answer".
      const unreachable = await welcome(page, /does not answer/);
      assert.deepEqual(unreachable.buttons, ['Retry', 'Select Context/Namespace', 'Show Logs']);
      const t1 = await toast(page, /context "dev" does not answer \(ECONNREFUSED\)/);
      assert.match(t1.text, /Check that the cluster runs and that this machine reaches it \(VPN, proxy/);
      assert.deepEqual(t1.buttons, ['Retry', 'Select Context…', 'Show Logs']);
      await steps.shot('unreachable');

      // 2. TLS: a CA that did not sign the real API server.
      // (No client certificate in this one: its "Open Kubeconfig" below shows the file.)
      await next(
        page,
        steps,
        variant({ ca: otherCa(), user: { token: 'unused-the-handshake-fails-first' } }),
        kubeconfig,
        unreachable.el,
      );
      const tls = await welcome(page, /is not trusted/);
      assert.deepEqual(tls.buttons, ['Open Kubeconfig', 'Select Context/Namespace', 'Retry']);
      const t2 = await toast(
        page,
        /context "dev" is not trusted: the server's certificate is not signed by the certificate authority in the kubeconfig \(UNABLE_TO_VERIFY_LEAF_SIGNATURE\)/,
      );
      assert.doesNotMatch(t2.text, /VPN/);
      assert.deepEqual(t2.buttons, ['Open Kubeconfig', 'Retry', 'Show Logs']);
      await steps.shot('tls untrusted');
      // Its "Open Kubeconfig" opens the file the context comes from, where the CA is fixed.
      await t2.el.locator('.monaco-button', { hasText: 'Open Kubeconfig' }).click();
      await page
        .locator('.tabs-container .tab', { hasText: path.basename(kubeconfig) })
        .first()
        .waitFor({ state: 'visible', timeout: 30_000 });
      // Closed again: the kubeconfigs of later steps hold client keys, never to be in a screenshot.
      await runCommand(page, 'View: Close All Editors');

      // 3. 401: a token the API server does not accept (an expired login).
      await next(page, steps, variant({ user: { token: 'expired-or-revoked-token' } }), kubeconfig, tls.el);
      const unauthorized = await welcome(page, /has expired or was refused \(401 Unauthorized\)/);
      assert.deepEqual(unauthorized.buttons, ['Retry', 'Open Kubeconfig', 'Select Context/Namespace']);
      const t3 = await toast(
        page,
        /Your login to the cluster of context "dev" has expired or was refused \(401 Unauthorized\)/,
      );
      assert.match(t3.text, /Log in again/);
      assert.doesNotMatch(t3.text, /expired-or-revoked-token/);
      assert.deepEqual(t3.buttons, ['Open Kubeconfig', 'Retry', 'Show Logs']);
      await steps.shot('unauthorized');

      // 4. The credential plugin is not installed.
      await next(page, steps, variant({ user: { exec: kubelogin } }), kubeconfig, unauthorized.el);
      const missing = await welcome(page, /credential plugin .* that VS Code cannot find on its PATH/);
      assert.deepEqual(missing.buttons, ['Retry', 'Open Kubeconfig', 'Show Logs']);
      const t4 = await toast(
        page,
        /credential plugin kubelogin, which is not installed: VS Code finds no kubelogin on its PATH/,
      );
      assert.match(t4.text, /Install Azure kubelogin: `az aks install-cli`/);
      assert.match(t4.text, /put it on the PATH VS Code starts with/);
      assert.doesNotMatch(t4.text, /VPN|does not answer/);
      assert.deepEqual(t4.buttons, ['Retry', 'Open Kubeconfig', 'Show Logs']);
      await steps.shot('credential plugin missing');

      // 5. The credential plugin fails: its stderr's first line, the token in it masked.
      await next(
        page,
        steps,
        variant({
          user: {
            exec: {
              apiVersion: 'client.authentication.k8s.io/v1beta1',
              command: plugin,
              interactiveMode: 'Never',
            },
          },
        }),
        kubeconfig,
        missing.el,
      );
      const failing = await welcome(page, /credential plugin your kubeconfig logs in with .* failed/);
      assert.deepEqual(failing.buttons, ['Retry', 'Open Kubeconfig', 'Show Logs']);
      const t5 = await toast(
        page,
        /The credential plugin sso-login-plugin of context "dev" failed: error: your session for dev@example.com has expired \(refresh_token=\*\*\*\)/,
      );
      assert.doesNotMatch(t5.text, /rt-9f8e7d6c|second line/);
      assert.deepEqual(t5.buttons, ['Open Kubeconfig', 'Retry', 'Show Logs']);
      await steps.shot('credential plugin failed');

      // 6. 403: a Kubernetes user without the developer role.
      await next(page, steps, fs.readFileSync(developerKubeconfig, 'utf8'), kubeconfig, failing.el);
      const forbidden = await welcome(page, /may not read what Queue Split needs in this namespace/);
      assert.deepEqual(forbidden.buttons, [
        'Retry',
        'Select Context/Namespace',
        'Show Logs',
        'Copy RoleBinding Command',
      ]);
      const command = `kubectl create rolebinding queuesplit-developer-${user} --clusterrole=queuesplit-developer --user=${user} -n ${fixture.namespace}`;
      const t6 = await toast(
        page,
        new RegExp(
          `Your Kubernetes user ${user} \\(context "${user}"\\) may not list queuesplits\\.queuesplit\\.dev in namespace ${fixture.namespace}\\.`,
        ),
      );
      assert.ok(t6.text.includes(command), t6.text);
      assert.deepEqual(t6.buttons, ['Copy RoleBinding Command', 'Retry', 'Show Logs']);
      await steps.shot('forbidden');
      // The welcome view's button copies the command an admin runs.
      await clearNotifications(page);
      await forbidden.el.locator('.monaco-button', { hasText: 'Copy RoleBinding Command' }).click();
      await toast(page, /Copied the RoleBinding command \(for your cluster admin\) to the clipboard/);
      assert.equal(await page.evaluate('navigator.clipboard.readText()'), command);
      await steps.shot('rolebinding command copied');
      // The admin runs it (the same RoleBinding, by the install code): Retry lets the user in.
      await applyObjects(fixture.admin, [developerBinding(fixture.namespace, { kind: 'User', name: user })]);
      await clearNotifications(page);
      await forbidden.el.locator('.monaco-button', { hasText: 'Retry' }).click();
      await waitForTreeRow(page, 'Queue Splits', fixture.workload, 60_000);
      await steps.shot('after the rolebinding');

      // 7. A sidecar error line: relay delivery to a local RabbitMQ that is not running.
      await runCommand(page, 'Queue Split: Start Split…');
      await acceptQuickInput(page, /queues of orders-app/, 60_000);
      await acceptQuickInput(page, 'header filter');
      await acceptQuickInput(page, 'delivery');
      // The first split of orders-app would restart its pods: asked first (split-lifecycle reads it).
      await clickDialogButton(
        await waitForDialog(page, 'Starting this split restarts', 30_000),
        'Start Split',
      );
      const t7 = await toast(
        page,
        /Preflight \(relay delivery\): Your local broker .*does not answer/,
        120_000,
      );
      assert.match(t7.text, /the queueSplit\.delivery\.relayAmqpUrl setting/);
      // No sidecar flag or "(sidecar: --x)" aside; the sidecar's sentence is marked as its own.
      assert.doesNotMatch(t7.text, /--relay-amqp-url|\(sidecar:/);
      assert.match(
        t7.text,
        /\(The sidecar: Cannot connect to RabbitMQ \(local RabbitMQ amqp:\/\/\*\*\*:\*\*\*@127\.0\.0\.1:\d+\)/,
      );
      assert.equal(t7.text.split('Nothing was created').length, 2, 'said once');
      assert.match(t7.text, /Nothing was created/);
      assert.deepEqual(t7.buttons, ['Open Setting', 'Change Delivery Mode', 'Show Logs']);
      assert.deepEqual(await fixture.splits(), [], 'the preflight created nothing');
      await steps.shot('sidecar error broker unreachable');
      await t7.el.locator('.monaco-button', { hasText: 'Open Setting' }).click();
      // A machine setting: in this remote window (code-server), the Settings editor's Remote tab.
      await page
        .locator('.settings-editor .setting-item-contents', { hasText: 'Relay Amqp Url' })
        .first()
        .waitFor({ state: 'visible', timeout: 30_000 });
      assert.match(
        (await page.locator('.settings-editor .settings-tabs-widget .checked').first().textContent()) ?? '',
        /Remote/,
      );
      await steps.shot('open setting');
    },
  );
});

/** Clears the toasts, writes the next kubeconfig, presses the current welcome view's Retry. */
async function next(
  page: Page,
  steps: Steps,
  content: string,
  file: string,
  current: Locator,
): Promise<void> {
  void steps;
  await clearNotifications(page);
  fs.writeFileSync(file, content, { mode: 0o600 });
  await current.locator('.monaco-button', { hasText: 'Retry' }).click();
}
