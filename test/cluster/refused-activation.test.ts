// A source the queue-agent's preflight refuses (declaration arguments whose semantics a shadow
// could not reproduce) ends the split Rejected within seconds, naming the arguments, and the
// refused activation leaves nothing behind by itself: no handback finalizer, queue-agent, state,
// ownership Lease, broker resource or cleanup record, the workload's spec untouched and its app
// still consuming (README "When a split is Degraded"). Nothing was cut over, so nothing may need
// an operator. The status and the logs say it once, not once a pass.
import assert from 'node:assert/strict';
import * as fs from 'node:fs';
import { test } from 'node:test';
import { setTimeout as sleep } from 'node:timers/promises';
import { AppsV1Api, CoordinationV1Api, CoreV1Api, type V1Deployment } from '@kubernetes/client-node';
import { kubernetesObjectNames } from '../../core/names';
import { rabbitQueueNames } from '../../core/providers/rabbitmq/names';
import { testInstall } from '../../deploy/install';
import { keptLogsDir, podLogLines } from '../env/k8s/node/realNode';
import { clusterFixture } from '../support/clusterFixture';
import { podsOf } from '../support/kube';
import { pollUntil, waitForGone } from '../support/poll';
import { exchangesStartingWith, queueExists } from '../support/rabbitManagement';
import { deployRabbitApp, ids, publishTo, waitForAppReceived } from '../support/rabbitSplit';
import { getSplit, removeSplit, splitFor, waitForSplitPhase } from '../support/splits';
import { uniqueName } from '../support/services';

const FINALIZER = 'queuesplit.dev/handback';
// Arguments no RabbitMQ feature the agent knows uses: the shadows reproduce the known ones
// (test/conformance/rabbitmq-source-rules.test.ts), so only these are still refused.
const REFUSED_ARGS = ['x-acme-routing-hint', 'x-acme-shard'];
const fx = clusterFixture('qs-refused', { rabbitmq: true });

/** Every line the queue-agents of this test's namespace logged (their pods may be gone). */
function agentLines(): string[] {
  if (!fs.existsSync(keptLogsDir)) return [];
  return fs
    .readdirSync(keptLogsDir)
    .filter((dir) => dir.startsWith(`${fx.namespace}_`))
    .flatMap((dir) => podLogLines(fx.namespace, dir.split('_')[1] ?? '', 'agent'));
}

const notFound = (err: unknown) => (err as { code?: number }).code === 404;

/** What is left of an activation of `workload`, as a list of findings (empty: nothing). */
async function leftovers(workload: string, uid: string, installId: string): Promise<string[]> {
  const { kc, namespace, services } = fx;
  const core = kc.makeApiClient(CoreV1Api);
  const apps = kc.makeApiClient(AppsV1Api);
  const names = kubernetesObjectNames({ installId, workloadUid: uid, workloadName: workload });
  const found: string[] = [];
  const d = await apps.readNamespacedDeployment({ name: workload, namespace });
  if (d.metadata?.finalizers?.includes(FINALIZER)) found.push(`finalizer ${FINALIZER}`);
  const exists = (read: () => Promise<unknown>) =>
    read().then(
      () => true,
      (err: unknown) => {
        if (notFound(err)) return false;
        throw err;
      },
    );
  if (await exists(() => apps.readNamespacedDeployment({ name: names.agentDeployment, namespace })))
    found.push(`queue-agent Deployment ${names.agentDeployment}`);
  for (const cm of [names.stateConfigMap, names.cleanupConfigMap]) {
    if (await exists(() => core.readNamespacedConfigMap({ name: cm, namespace })))
      found.push(`ConfigMap ${cm}`);
  }
  const controllerNs = testInstall.namespace;
  if (await exists(() => core.readNamespacedConfigMap({ name: names.stateSeal, namespace: controllerNs })))
    found.push(`seal ${names.stateSeal}`);
  const leases = await kc
    .makeApiClient(CoordinationV1Api)
    .listNamespacedLease({ namespace: controllerNs, labelSelector: 'queuesplit.dev/ownership=true' });
  for (const l of leases.items) {
    if (l.spec?.holderIdentity?.endsWith(`/${uid}`)) found.push(`ownership Lease ${l.metadata?.name}`);
  }
  const cleanup = await core.listNamespacedConfigMap({
    namespace: controllerNs,
    labelSelector: `queuesplit.dev/workload-namespace=${namespace}`,
  });
  for (const cm of cleanup.items) found.push(`cleanup record ${controllerNs}/${cm.metadata?.name}`);
  for (const epoch of [1, 2]) {
    const q = rabbitQueueNames({ installId, workloadUid: uid, queue: 'orders', epoch });
    for (const name of [q.appShadowQueue, q.lockQueue]) {
      if (await queueExists(services.rabbitManagementUrl, name)) found.push(`queue ${name}`);
    }
    // The engine's exchanges are all named after the application shadow (agent/rabbitmq/routing.ts).
    for (const x of await exchangesStartingWith(services.rabbitManagementUrl, q.appShadowQueue))
      found.push(`exchange ${x}`);
  }
  return found;
}

/** The spec as it was: never scaled, never redirected, no rollout (Deployments also count
 * annotation writes, such as the workload's split status, in metadata.generation). */
function assertUntouched(before: V1Deployment, now: V1Deployment): void {
  assert.deepEqual(now.spec, before.spec, 'the spec was never changed');
  assert.equal(now.status?.observedGeneration, now.metadata?.generation, 'settled');
}

test('a source with declaration arguments the agent does not know: Rejected naming them, nothing left behind', async () => {
  const { kc, namespace, ch, services } = fx;
  const workload = 'refused';
  const source = uniqueName('refused-orders');
  await ch.assertQueue(source, {
    durable: true,
    arguments: { 'x-acme-routing-hint': 'left', 'x-acme-shard': 3, 'x-max-priority': 5 },
  });
  await deployRabbitApp(kc, services, namespace, workload, source);
  const apps = kc.makeApiClient(AppsV1Api);
  const original = await apps.readNamespacedDeployment({ name: workload, namespace });
  const appPods = async () => (await podsOf(kc, namespace, workload)).map((p) => p.metadata?.name).sort();
  const podsBefore = await appPods();
  const uid = original.metadata!.uid!;
  const install = await kc
    .makeApiClient(CoreV1Api)
    .readNamespacedConfigMap({ name: 'queuesplit-install', namespace: testInstall.namespace });
  const installId = install.data!.installId!;

  const started = Date.now();
  const split = await splitFor(kc, namespace, { workload, user: 'ines' });
  const name = split.metadata.name;
  // Polled rather than waited for once: every resourceVersion the split goes through counts.
  const versions = new Set<string>();
  const rejected = await pollUntil(
    `QueueSplit ${name} Rejected`,
    async () => {
      const s = await getSplit(kc, namespace, name);
      if (s?.metadata.resourceVersion) versions.add(s.metadata.resourceVersion);
      return { phase: s?.status?.phase, message: s?.status?.conditions?.[0]?.message, split: s };
    },
    (s) => s.phase === 'Rejected' || s.phase === 'Degraded' || s.phase === 'Failed',
    60_000,
  );
  const tookMs = Date.now() - started;
  // Then watched for 10 s: a verdict is written once, not once a pass, and logged once.
  const settledVersions = new Set<string>();
  for (const end = Date.now() + 10_000; Date.now() < end; await sleep(250)) {
    const s = await getSplit(kc, namespace, name);
    if (s?.metadata.resourceVersion) settledVersions.add(s.metadata.resourceVersion);
  }
  const rejections = agentLines().filter((l) => /routes\.rejected|queue\.failed/.test(l)).length;
  const condition = rejected.split?.status?.conditions?.[0];
  const seen = `after ${tookMs} ms: ${rejected.phase}: ${condition?.message}; then ${settledVersions.size} versions of the split in 10 s, ${rejections} rejection lines from the agent`;
  assert.equal(rejected.phase, 'Rejected', seen);
  assert.ok(tookMs < 30_000, `refused within seconds: ${seen}`);
  assert.equal(condition?.reason, 'SourceNotSplittable', seen);
  for (const arg of REFUSED_ARGS)
    assert.match(condition?.message ?? '', new RegExp(arg), 'names each argument');
  assert.match(condition?.message ?? '', /Nothing was cut over/);
  assert.ok(versions.size <= 6, `status written ${versions.size} times up to Rejected`);
  assert.ok(settledVersions.size <= 2, `no status rewrites once Rejected: ${seen}`);
  assert.ok(rejections <= 3, `the refusal is logged once, not once a pass: ${seen}`);

  // The refused activation cleans up by itself: no retry, no deletion needed.
  const left = await pollUntil(
    'nothing of the refused activation left',
    () => leftovers(workload, uid, installId),
    (found) => found.length === 0,
    60_000,
  );
  assert.deepEqual(left, []);
  assertUntouched(original, await apps.readNamespacedDeployment({ name: workload, namespace }));
  assert.deepEqual(await appPods(), podsBefore, 'the app pods were never replaced');

  // The app was never quiesced: it still consumes its source.
  const sent = ids(source, 'after', 3);
  await publishTo(ch, source, sent);
  await waitForAppReceived('the app still consumes its source', sent, 30_000, source);

  // Deleting the split lets it go at once.
  await removeSplit(kc, namespace, name, 30_000);

  // A new split of the workload is evaluated afresh (nothing blocks it): refused again, for
  // the same reason, and again nothing is left.
  const again = await splitFor(kc, namespace, { workload, user: 'ines' });
  const second = await waitForSplitPhase(kc, namespace, again.metadata.name, 'Rejected', 30_000);
  assert.equal(second.status?.conditions?.[0]?.reason, 'SourceNotSplittable');
  assert.deepEqual(
    await pollUntil(
      'nothing left after the second refusal',
      () => leftovers(workload, uid, installId),
      (f) => f.length === 0,
      60_000,
    ),
    [],
  );
  await removeSplit(kc, namespace, again.metadata.name, 30_000);
  assertUntouched(original, await apps.readNamespacedDeployment({ name: workload, namespace }));

  // Deleting the namespace records nothing: no broker resource of the split ever existed.
  await fx.deleteNamespace();
  await waitForGone(
    'the namespace',
    () => kc.makeApiClient(CoreV1Api).readNamespace({ name: namespace }),
    120_000,
  );
  const records = await kc.makeApiClient(CoreV1Api).listNamespacedConfigMap({
    namespace: testInstall.namespace,
    labelSelector: `queuesplit.dev/workload-namespace=${namespace}`,
  });
  assert.deepEqual(
    records.items.map((cm) => cm.metadata?.name),
    [],
    'no cleanup record for resources never created',
  );
  await ch.deleteQueue(source);
});
