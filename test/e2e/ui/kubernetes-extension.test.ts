// Following the Kubernetes extension (ms-kubernetes-tools.vscode-kubernetes-tools) in a real VS
// Code. The real extension is not installed here (no marketplace), so a NARROW STAND-IN with its
// id publishes the same API shape its npm package vscode-kubernetes-tools-api documents: an API
// broker whose get('configuration', 'v1_1') gives getKubeconfigPath() and the
// onDidChangeKubeconfigPath / onDidChangeContext / onDidChangeNamespace events. Like the real
// one, its "Set Kubeconfig" switches the file it uses and its "Use Namespace" writes the namespace
// into that kubeconfig (the real one runs `kubectl config set-context --current --namespace`).
// With no queueSplit.kubeconfig setting (and $KUBECONFIG pointing nowhere) the Queue Splits view
// follows the stand-in's kubeconfig, its switch to another file, and its namespace switch.
// Screenshots: test-results/e2e/kubernetes-extension-stand-in/.
import assert from 'node:assert/strict';
import * as fs from 'node:fs';
import * as path from 'node:path';
import { after, before, test } from 'node:test';
import { parse } from 'yaml';
import { waitForServerLog } from '../harness/codeServer';
import { removeTempDir, tempDir } from '../harness/exitCleanup';
import { fillQuickInput } from '../harness/quickInput';
import { withWorkbench } from '../harness/session';
import { openViewContainer, runCommand, waitForTreeRow } from '../harness/workbench';
import { prepareSplitFixture, type SplitFixture } from '../support/cluster';

const VIEW = 'Queue Splits';

/** The stand-in: package.json and extension.js (plain CommonJS, no dependencies). */
const STAND_IN_PACKAGE = {
  name: 'vscode-kubernetes-tools',
  publisher: 'ms-kubernetes-tools',
  displayName: 'Kubernetes (Queue Split test stand-in)',
  version: '0.0.1',
  engines: { vscode: '^1.60.0' },
  main: './extension.js',
  activationEvents: [],
  contributes: {
    commands: [
      { command: 'standIn.setKubeconfig', title: 'Kubernetes Stand-in: Set Kubeconfig' },
      { command: 'standIn.useNamespace', title: 'Kubernetes Stand-in: Use Namespace' },
    ],
  },
};
const STAND_IN_MAIN = `
const fs = require('fs');
const vscode = require('vscode');
exports.activate = (context) => {
  let kubeconfig = process.env.QS_STAND_IN_KUBECONFIG;
  const pathChanged = new vscode.EventEmitter();
  const contextChanged = new vscode.EventEmitter();
  const namespaceChanged = new vscode.EventEmitter();
  const hostPath = () => ({ pathType: 'host', hostPath: kubeconfig });
  context.subscriptions.push(
    vscode.commands.registerCommand('standIn.setKubeconfig', async () => {
      const file = await vscode.window.showInputBox({ title: 'Stand-in: kubeconfig file' });
      if (!file) return;
      kubeconfig = file;
      pathChanged.fire(hostPath());
    }),
    vscode.commands.registerCommand('standIn.useNamespace', async () => {
      const namespace = await vscode.window.showInputBox({ title: 'Stand-in: namespace' });
      if (!namespace) return;
      const config = JSON.parse(fs.readFileSync(kubeconfig, 'utf8'));
      const current = config.contexts.find((c) => c.name === config['current-context']);
      current.context.namespace = namespace;
      fs.writeFileSync(kubeconfig, JSON.stringify(config));
      namespaceChanged.fire(namespace);
    }),
  );
  const configuration = {
    getKubeconfigPath: hostPath,
    onDidChangeKubeconfigPath: pathChanged.event,
    onDidChangeContext: contextChanged.event,
    onDidChangeNamespace: namespaceChanged.event,
  };
  return {
    get: (component, version) =>
      component === 'configuration' && version === 'v1_1'
        ? { available: true, api: configuration }
        : { available: false, reason: 'version-unknown' },
  };
};
`;

let fixture: SplitFixture;
let dir: string;
before(async () => {
  fixture = await prepareSplitFixture('qs-e2e-k8sx');
  dir = tempDir('qs-e2e-k8s-ext-');
  const standIn = path.join(dir, 'stand-in');
  fs.mkdirSync(standIn);
  fs.writeFileSync(path.join(standIn, 'package.json'), JSON.stringify(STAND_IN_PACKAGE, null, 2));
  fs.writeFileSync(path.join(standIn, 'extension.js'), STAND_IN_MAIN);
});
after(async () => {
  removeTempDir(dir);
  await fixture?.close();
});

/** A kubeconfig (JSON, which is YAML) with one context of the fixture's cluster, current. */
function kubeconfig(name: string, context: string): string {
  const admin = parse(fs.readFileSync(fixture.services.kubeconfig, 'utf8')) as {
    clusters: { name: string }[];
    users: { name: string }[];
  };
  const file = path.join(dir, name);
  fs.writeFileSync(
    file,
    JSON.stringify({
      ...admin,
      contexts: [
        {
          name: context,
          context: {
            cluster: admin.clusters[0]!.name,
            user: admin.users[0]!.name,
            namespace: fixture.namespace,
          },
        },
      ],
      'current-context': context,
    }),
    { mode: 0o600 },
  );
  return file;
}

test('kubernetes extension stand-in', async () => {
  const one = kubeconfig('one', 'qs-k8s-one');
  const two = kubeconfig('two', 'qs-k8s-two');
  const env = { KUBECONFIG: '/nonexistent/kubeconfig', QS_STAND_IN_KUBECONFIG: one };
  const settings = { 'queueSplit.owner': fixture.owner };
  const installExtensions = [path.join(dir, 'stand-in')];
  await withWorkbench(
    'kubernetes extension stand-in',
    { settings, env, installExtensions },
    async ({ page, server, steps }) => {
      await openViewContainer(page, 'Queue Split');
      await waitForTreeRow(page, VIEW, 'qs-k8s-one', 60_000);
      await waitForServerLog(
        server,
        'Queue Split.log',
        `following the Kubernetes extension's kubeconfig (${one})`,
      );
      await steps.shot("the Kubernetes extension's kubeconfig");

      // Its "Set Kubeconfig": onDidChangeKubeconfigPath, and the view follows the other file.
      await runCommand(page, 'Kubernetes Stand-in: Set Kubeconfig');
      await fillQuickInput(page, 'Stand-in: kubeconfig file', two);
      const row = await waitForTreeRow(page, VIEW, 'qs-k8s-two', 30_000);
      assert.match((await row.textContent()) ?? '', /kubeconfig's current/);
      await steps.shot('its other kubeconfig');

      // Its "Use Namespace" (written to that kubeconfig): the view follows to `default`, which
      // has no annotated workload (so the welcome view; the log says what it looks at).
      await runCommand(page, 'Kubernetes Stand-in: Use Namespace');
      await fillQuickInput(page, 'Stand-in: namespace', 'default');
      await waitForServerLog(
        server,
        'Queue Split.log',
        "now context qs-k8s-two (kubeconfig's current), namespace default",
        30_000,
      );
      await page
        .locator('.welcome-view-content')
        .filter({ hasText: 'No Deployment or StatefulSet' })
        .waitFor({ state: 'visible', timeout: 30_000 });
      await steps.shot('its namespace');
    },
  );
});
