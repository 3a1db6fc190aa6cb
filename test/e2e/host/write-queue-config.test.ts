// "Write Queue Config Annotation…" in the real VS Code against the real cluster, for two
// Deployments that declare nothing yet (no replicas: only their pod templates matter):
//   a Kafka consumer — the command, its quick picks accepted as proposed (VS Code's own accept
//   command), opens the diff of the workload's YAML with the proposed annotation and offers
//   Apply / Copy as Patch (the runner's screenshot, test-results/e2e/extension-host-N/
//   NN-write-queue-config-diff.png, is what docs/images/extension/write-queue-config-diff.png
//   copies);
//   a RabbitMQ consumer — a developer bound to the queuesplit-developer role only is refused
//   Apply with the missing right named, copies the patch instead, and that patch, applied by an
//   admin, declares the workload; then Apply with the rights writes the Kafka declaration and the
//   Queue Splits view lists the workload with its queues.
import assert from 'node:assert/strict';
import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';
import { after, before, describe, it } from 'mocha';
import * as vscode from 'vscode';
import { parse } from 'yaml';
import {
  AppsV1Api,
  PatchStrategy,
  setHeaderOptions,
  type KubeConfig,
  type V1Deployment,
} from '@kubernetes/client-node';
import type { QueueSplitApi } from '../../../extension/extension';
import type {
  WriteQueueConfigArgs,
  WriteQueueConfigResult,
} from '../../../extension/commands/writeQueueConfig';
import type { TreeNode } from '../../../extension/model/tree';
import { parseQueueConfig } from '../../../core/queueConfig/parseQueueConfig';
import type { WorkloadLike } from '../../../core/queueConfig/podTemplate';
import { resolveWorkload } from '../../../core/queueConfig/resolveWorkload';
import { QUEUE_CONFIG_ANNOTATION } from '../../../core/queueConfig/schema';
import { formatFieldError } from '../../../core/result';
import { applyObjects } from '../../../deploy/apply';
import { developerBinding } from '../../../deploy/manifests';
import { userKubeconfig } from '../../env/k8s/kubeconfig';
import { runDir } from '../../env/paths';
import { adminConfig, createNamespace, deleteNamespace, fixtureDeployment } from '../../support/kube';
import { pollUntil } from '../../support/poll';
import { loadServices } from '../../support/services';
import { activateExtension, HostSettings, leaveHost, screenshot } from '../support/host';

const COMMAND = 'queueSplit.writeQueueConfig';
const settings = new HostSettings();
let admin: KubeConfig;
let adminKubeconfig: string;
let namespace: string;
let developerKubeconfig: string;
let dir: string;
let api: QueueSplitApi;

const secretRef = (name: string, key: string) => ({ secretKeyRef: { name, key } });

async function createWorkload(
  name: string,
  env: NonNullable<Parameters<typeof fixtureDeployment>[0]['env']>,
) {
  const body = fixtureDeployment({ name, image: 'queuesplit/fixture-kafka-consumer', replicas: 0, env });
  await admin.makeApiClient(AppsV1Api).createNamespacedDeployment({ namespace, body });
}

async function readWorkload(name: string): Promise<V1Deployment> {
  return admin.makeApiClient(AppsV1Api).readNamespacedDeployment({ name, namespace });
}

function run(args: WriteQueueConfigArgs): Thenable<WriteQueueConfigResult | undefined> {
  return vscode.commands.executeCommand<WriteQueueConfigResult | undefined>(COMMAND, args);
}

/** The diff editor the command opened, if it is the active one. */
function activeDiff(): vscode.TabInputTextDiff | undefined {
  const input = vscode.window.tabGroups.activeTabGroup.activeTab?.input;
  return input instanceof vscode.TabInputTextDiff && input.modified.scheme === 'queuesplit-annotation'
    ? input
    : undefined;
}

/** Rows of the Queue Splits view under the context: workload name → its description. */
async function workloadRows(): Promise<Map<string, string>> {
  const rows = new Map<string, string>();
  for (const context of await api.tree.getChildren())
    for (const child of await api.tree.getChildren(context as TreeNode))
      if (child.kind === 'workload')
        rows.set(child.workload.name, String(api.tree.getTreeItem(child).description));
  return rows;
}

describe('Write Queue Config Annotation: proposal, diff, Apply and Copy as Patch (real cluster)', function () {
  this.timeout(120_000);

  before(async () => {
    const services = loadServices();
    adminKubeconfig = services.kubeconfig;
    admin = adminConfig(adminKubeconfig);
    namespace = await createNamespace(admin, 'qs-e2e-annot');
    dir = fs.mkdtempSync(path.join(os.tmpdir(), 'qs-e2e-annot-'));
    await createWorkload('orders-app', [
      { name: 'KAFKA_BOOTSTRAP_SERVERS', value: 'kafka.infra:9092' },
      { name: 'ORDERS_TOPIC', value: 'orders' },
      { name: 'ORDERS_GROUP_ID', value: 'orders-app' },
      { name: 'PAYMENTS_TOPIC', value: 'payments' },
      { name: 'PAYMENTS_GROUP_ID', value: 'orders-app-payments' },
      { name: 'DLQ_TOPIC', value: 'orders-dlq' },
      { name: 'AUTO_OFFSET_RESET', value: 'earliest' },
      { name: 'LOG_LEVEL', value: 'info' },
    ]);
    await createWorkload('invoices-app', [
      { name: 'AMQP_URL', valueFrom: secretRef('amqp', 'url') },
      { name: 'RABBITMQ_MANAGEMENT_URL', value: 'http://rabbitmq.infra:15672' },
      { name: 'INVOICE_QUEUE', value: 'invoices' },
    ]);
    const user = `dev-annot-${namespace.slice(-6)}`;
    await applyObjects(admin, [developerBinding(namespace, { kind: 'User', name: user })]);
    developerKubeconfig = path.join(dir, 'developer.kubeconfig');
    await userKubeconfig(
      admin,
      user,
      namespace,
      path.join(runDir, 'k8s', 'pki', 'ca.crt'),
      developerKubeconfig,
    );
    api = await activateExtension();
    await settings.set({ kubeconfig: adminKubeconfig, namespace });
  });

  after(async function () {
    this.timeout(60_000);
    await leaveHost({
      settings,
      closeEditors: true,
      remove: [dir],
      fixture: { close: () => deleteNamespace(admin, namespace) },
    });
  });

  it('proposes from the env with the quick picks as offered, and shows the diff with Apply and Copy as Patch', async () => {
    // A tidy window for the screenshot: what earlier files left open is closed.
    for (const command of [
      'workbench.action.closeAllEditors',
      'notifications.clearAll',
      'workbench.action.closePanel',
    ])
      await vscode.commands.executeCommand(command);
    // The quick picks (broker, topics) accepted as proposed, as a person pressing Enter would.
    let done = false;
    const command = Promise.resolve(run({ workload: { kind: 'Deployment', name: 'orders-app' } })).finally(
      () => (done = true),
    );
    const deadline = Date.now() + 30_000;
    while (!done && activeDiff() === undefined && Date.now() < deadline) {
      await sleep(300);
      if (activeDiff() === undefined)
        await vscode.commands.executeCommand('workbench.action.acceptSelectedQuickOpenItem');
    }
    const diff = activeDiff();
    assert.ok(diff, 'the diff editor of the proposal is open');
    const [current, proposed] = await Promise.all([
      vscode.workspace.openTextDocument(diff.original),
      vscode.workspace.openTextDocument(diff.modified),
    ]);
    const before = current.getText().split('\n');
    const added = proposed
      .getText()
      .split('\n')
      .filter((line) => !before.includes(line));
    assert.equal(added[0], `    ${QUEUE_CONFIG_ANNOTATION}: |`, added.join('\n'));
    assert.ok(
      current
        .getText()
        .split('\n')
        .every((line) => proposed.getText().includes(line)),
      'nothing but the annotation differs',
    );
    // The notification with Apply and Copy as Patch shows beside the diff.
    await vscode.commands.executeCommand('workbench.action.closeSidebar');
    await sleep(700);
    console.log(await screenshot('write-queue-config-diff'));
    await vscode.commands.executeCommand('workbench.view.explorer');
    await vscode.commands.executeCommand('notifications.clearAll');
    const result = await command;
    assert.equal(result?.outcome, 'shown', 'dismissing the notification applies nothing');
    assert.equal(result.diff.proposed, diff.modified.toString());

    const config = parseQueueConfig(result.annotation);
    assert.ok(config.ok);
    assert.deepEqual(config.value, {
      queues: [
        {
          name: 'orders',
          kafka: {
            brokersEnv: 'KAFKA_BOOTSTRAP_SERVERS',
            sourceEnv: 'ORDERS_TOPIC',
            groupEnv: 'ORDERS_GROUP_ID',
            offsetReset: 'earliest',
          },
        },
        {
          name: 'payments',
          kafka: {
            brokersEnv: 'KAFKA_BOOTSTRAP_SERVERS',
            sourceEnv: 'PAYMENTS_TOPIC',
            groupEnv: 'PAYMENTS_GROUP_ID',
            offsetReset: 'earliest',
          },
        },
      ],
    });
    assert.equal(
      (await readWorkload('orders-app')).metadata?.annotations?.[QUEUE_CONFIG_ANNOTATION],
      undefined,
      'nothing written',
    );
  });

  it('the developer role may not Apply: the refusal names the right; Copy as Patch hands out a patch an admin applies', async () => {
    await settings.set({ kubeconfig: developerKubeconfig });
    const choices: WriteQueueConfigArgs = {
      workload: { kind: 'Deployment', name: 'invoices-app' },
      provider: 'rabbitmq',
      sources: ['INVOICE_QUEUE'],
    };
    const refused = await run({ ...choices, action: 'apply' });
    assert.equal(refused?.outcome, 'refused');
    assert.match(refused.message ?? '', /may not patch deployments\.apps\/invoices-app in namespace /);
    assert.match(refused.message ?? '', /kubectl auth can-i patch deployments\.apps\/invoices-app/);
    assert.equal(
      (await readWorkload('invoices-app')).metadata?.annotations?.[QUEUE_CONFIG_ANNOTATION],
      undefined,
    );

    const copied = await run({ ...choices, action: 'copy' });
    assert.equal(copied?.outcome, 'copied');
    assert.equal(await vscode.env.clipboard.readText(), copied.patch, 'on the clipboard');
    assert.match(
      copied.patch ?? '',
      /# {3}kubectl --context \S+ --namespace \S+ patch deployment invoices-app --type merge --patch '/,
    );
    // What the person hands on: a merge patch (and the manifest snippet), applied by an admin.
    await admin
      .makeApiClient(AppsV1Api)
      .patchNamespacedDeployment(
        { name: 'invoices-app', namespace, body: parse(copied.patch ?? '') as object },
        setHeaderOptions('Content-Type', PatchStrategy.MergePatch),
      );
    const declared = await readWorkload('invoices-app');
    assert.equal(declared.metadata?.annotations?.[QUEUE_CONFIG_ANNOTATION], copied.annotation);
    const resolved = resolveWorkload({ ...(declared as WorkloadLike), kind: 'Deployment' });
    assert.ok(resolved.ok, resolved.ok ? '' : resolved.errors.map(formatFieldError).join('\n'));
    assert.deepEqual(
      resolved.value.queues.map((q) => [q.name, q.provider, q.source]),
      [['invoice', 'rabbitmq', 'invoices']],
    );
  });

  it('Apply with the rights writes the annotation, and the Queue Splits view lists the workload with its queues', async () => {
    await settings.set({ kubeconfig: adminKubeconfig });
    const template = JSON.stringify((await readWorkload('orders-app')).spec?.template);
    const result = await run({
      workload: { kind: 'Deployment', name: 'orders-app' },
      provider: 'kafka',
      sources: ['ORDERS_TOPIC', 'PAYMENTS_TOPIC'],
      action: 'apply',
    });
    assert.equal(result?.outcome, 'applied');
    const applied = await readWorkload('orders-app');
    assert.equal(applied.metadata?.annotations?.[QUEUE_CONFIG_ANNOTATION], result.annotation);
    assert.equal(JSON.stringify(applied.spec?.template), template, 'only the annotation changed');
    const rows = await pollUntil(
      'the Queue Splits view lists both declared workloads',
      workloadRows,
      (r) => r.get('orders-app')?.includes('2 queues') === true && r.has('invoices-app'),
      20_000,
    );
    assert.match(rows.get('orders-app') ?? '', /^Deployment · 2 queues/);
  });
});
