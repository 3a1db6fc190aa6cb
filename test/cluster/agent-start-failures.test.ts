// test-group: serial (reinstalls the shared controller with other agent settings)
// A queue-agent that cannot start is never silent (issue 14): an image that cannot be pulled, a
// pod the namespace refuses, a crash loop and a failing readiness probe each take the split to
// Degraded within a bounded time (the app was never quiesced: it keeps its messages), with the
// cause read from the agent pod's status and events and the safe next action. Fixing the cause
// and retrying (README "When a split is Degraded") ends the split cleanly: nothing was cut over.
import assert from 'node:assert/strict';
import { after, before, test } from 'node:test';
import * as amqp from 'amqplib';
import { AppsV1Api, CoreV1Api, RbacAuthorizationV1Api, type KubeConfig } from '@kubernetes/client-node';
import { mergePatch } from '../../agent/kube/client';
import { kubernetesObjectNames } from '../../core/names';
import { RETRY_ANNOTATION } from '../../core/state/operatorRetry';
import { installController, testInstall } from '../../deploy/install';
import { adminConfig, createNamespace, deleteNamespace } from '../support/kube';
import { pollUntil } from '../support/poll';
import { appReceived, deployRabbitApp, ids, publishTo } from '../support/rabbitSplit';
import { createSplit, deleteSplit, waitForSplitGone, waitForSplitPhase } from '../support/splits';
import { loadServices, uniqueName } from '../support/services';

const services = loadServices();
let kc: KubeConfig;
let namespace: string;
let conn: amqp.ChannelModel;

before(async () => {
  kc = adminConfig(services.kubeconfig);
  await installController(kc);
  namespace = await createNamespace(kc, 'qs-agent-fail');
  conn = await amqp.connect(services.amqpUrl);
});
after(async () => {
  await conn?.close().catch(() => undefined);
  await installController(kc); // the suite's controller for the files that follow
  await deleteNamespace(kc, namespace);
});

/** A controller whose queue-agents get `flags` (later flags win over testInstall's). */
const controllerWith = (...flags: string[]) =>
  installController(kc, { ...testInstall, extraArgs: [...testInstall.extraArgs, ...flags] });

interface Started {
  workload: string;
  source: string;
  split: string;
}

async function startSplit(workload: string, beforeSplit?: (uid: string) => Promise<void>): Promise<Started> {
  const source = uniqueName(`${workload}-orders`);
  const ch = await conn.createChannel();
  await ch.assertQueue(source, { durable: true });
  await ch.close();
  await deployRabbitApp(kc, services, namespace, workload, source);
  const d = await kc.makeApiClient(AppsV1Api).readNamespacedDeployment({ name: workload, namespace });
  await beforeSplit?.(d.metadata!.uid!);
  const split = await createSplit(kc, namespace, {
    workload,
    queues: ['orders'],
    filter: { 'x-queue-split-user': 'noor' },
    owner: 'noor',
  });
  return { workload, source, split: split.metadata.name };
}

/** Degraded naming `cause`, the app untouched and still consuming; returns the status message. */
async function assertDegradedKeepingMessages(s: Started, cause: RegExp, timeoutMs: number): Promise<string> {
  const degraded = await waitForSplitPhase(kc, namespace, s.split, 'Degraded', timeoutMs);
  const message = degraded.status?.conditions?.[0]?.message ?? '';
  assert.match(message, /the queue-agent cannot run/, `the step names the agent: ${message}`);
  assert.match(message, cause, `the cause is named: ${message}`);
  assert.match(message, new RegExp(`annotate deployment/${s.workload} ${RETRY_ANNOTATION}=now`), 'the retry');
  assert.ok(!message.includes('noor'), 'no header value in the status');
  const app = await kc.makeApiClient(AppsV1Api).readNamespacedDeployment({ name: s.workload, namespace });
  assert.equal(app.spec?.replicas, 1, 'the app was never quiesced');
  assert.ok(
    !JSON.stringify(app.spec?.template.spec?.containers[0]?.env).includes('qs-'),
    'the app was never redirected',
  );
  const ch = await conn.createConfirmChannel();
  const plain = ids(s.source, 'plain', 3);
  const mine = ids(s.source, 'noor', 2);
  await publishTo(ch, s.source, plain);
  await publishTo(ch, s.source, mine, 'noor');
  await ch.close();
  await pollUntil(
    'the app still consumes every message of its source',
    async () => appReceived(s.source),
    (got) => [...plain, ...mine].every((id) => got.has(id)),
    30_000,
  );
  return message;
}

/** The operator's retry once the cause is fixed: the abort completes and the split ends. */
async function retryAndEnd(s: Started): Promise<void> {
  await kc
    .makeApiClient(AppsV1Api)
    .patchNamespacedDeployment(
      { name: s.workload, namespace, body: { metadata: { annotations: { [RETRY_ANNOTATION]: 'now' } } } },
      mergePatch,
    );
  const ended = await waitForSplitPhase(kc, namespace, s.split, 'Failed', 120_000);
  assert.match(ended.status?.conditions?.[0]?.message ?? '', /Nothing was lost/);
  await deleteSplit(kc, namespace, s.split);
  await waitForSplitGone(kc, namespace, s.split, 60_000);
}

test('an agent image that cannot be pulled: Degraded at once naming ErrImagePull and --agent-image', async () => {
  // Installed with that agent image: the admission policy lets the controller run no other.
  await installController(kc, { ...testInstall, agentImage: 'queuesplit/agent-missing:0' });
  const s = await startSplit('pull');
  await assertDegradedKeepingMessages(s, /ErrImagePull.*--agent-image/, 60_000);
  await installController(kc);
  await retryAndEnd(s);
});

test('an agent pod the namespace refuses: Degraded at once with the admission message', async () => {
  const core = kc.makeApiClient(CoreV1Api);
  const limits = 'agent-too-big';
  const s = await startSplit('refused', () =>
    core
      .createNamespacedLimitRange({
        namespace,
        body: {
          metadata: { name: limits },
          spec: { limits: [{ type: 'Container', max: { memory: '256Mi' } }] },
        },
      })
      .then(() => undefined),
  );
  await assertDegradedKeepingMessages(s, /refused the queue-agent pod.*maximum memory usage/, 60_000);
  await core.deleteNamespacedLimitRange({ name: limits, namespace });
  await retryAndEnd(s);
});

test('a crash-looping agent: Degraded after the agent start timeout, naming the restarts and the logs', async () => {
  // A privileged port: the agent runs as uid 1000 with every capability dropped, so binding it
  // fails at start, again and again.
  await controllerWith('--agent-metrics-port=80');
  const s = await startSplit('crashing');
  await assertDegradedKeepingMessages(s, /keeps crashing \(\d+ restarts, last exit code 1.*logs/, 120_000);
  await installController(kc);
  await retryAndEnd(s);
});

test('an agent failing its readiness probe: Degraded after the agent start timeout, naming the probe', async () => {
  // The agent's Role exists already, without rules: it runs but cannot read its desired document,
  // so /readyz answers 503 (the controller keeps an existing Role; deleting it is the fix).
  const rbac = kc.makeApiClient(RbacAuthorizationV1Api);
  let role = '';
  const s = await startSplit('unready', async (uid) => {
    const install = await kc
      .makeApiClient(CoreV1Api)
      .readNamespacedConfigMap({ name: 'queuesplit-install', namespace: testInstall.namespace });
    role = kubernetesObjectNames({
      installId: install.data!.installId!,
      workloadUid: uid,
      workloadName: 'unready',
    }).agentServiceAccount;
    await rbac.createNamespacedRole({ namespace, body: { metadata: { name: role }, rules: [] } });
  });
  await assertDegradedKeepingMessages(
    s,
    /does not pass its readiness probe.*Readiness probe failed: HTTP probe failed with statuscode: 503/,
    120_000,
  );
  await rbac.deleteNamespacedRole({ name: role, namespace });
  await retryAndEnd(s);
});
