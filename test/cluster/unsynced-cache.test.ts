// test-group: serial (changes the controller's ClusterRole and restarts it)
// A QueueSplit cache that never synced must not read as "no splits" (docs/design.md §6,
// "Caches"): a controller that restarts while the API server refuses to list QueueSplits (here
// RBAC without list/watch, as a namespaced install misconfigured or a 403 would) acts on nobody.
// The route stays ACTIVE, the app is not rolled, the controller says why; once the list is
// allowed again the controller syncs and carries on from where it was, still without a roll.
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { AppsV1Api, CoreV1Api, RbacAuthorizationV1Api, type V1Deployment } from '@kubernetes/client-node';
import { QUEUE_SPLIT_PLURAL } from '../../core/crd/queueSplitSchema';
import { installController, testInstall } from '../../deploy/install';
import { podLogLines } from '../env/k8s/node/realNode';
import { clusterFixture } from '../support/clusterFixture';
import { podsOf } from '../support/kube';
import { pollUntil, sleep } from '../support/poll';
import { listControllerPods } from '../support/processes';
import { ids, publishTo, rabbitApp, waitForAppReceived } from '../support/rabbitSplit';
import { createSplit, getSplit, removeSplit, waitForSplitPhase } from '../support/splits';

const CLUSTER_ROLE = 'queuesplit-controller';
/** How long the controller runs on a cache that cannot list: dozens of passes (the test install
 * resyncs every 300 ms), any of which would act on a cache read as empty. */
const DENIED_MS = 12_000;
const fx = clusterFixture('qs-unsynced', { rabbitmq: true });
// Whatever happened, the shared controller gets its whole ClusterRole back.
fx.defer(() => installController(fx.kc));

/** The controller's ClusterRole without list and watch on QueueSplits. */
async function denyListingSplits(): Promise<void> {
  const rbac = fx.kc.makeApiClient(RbacAuthorizationV1Api);
  const role = await rbac.readClusterRole({ name: CLUSTER_ROLE });
  role.rules = (role.rules ?? []).map((rule) =>
    rule.resources?.includes(QUEUE_SPLIT_PLURAL)
      ? { ...rule, verbs: rule.verbs.filter((v) => v !== 'list' && v !== 'watch') }
      : rule,
  );
  await rbac.replaceClusterRole({ name: CLUSTER_ROLE, body: role });
}

/** Deletes every controller pod and waits until the replacements' leader has started its caches. */
async function restartController(): Promise<string[]> {
  const core = fx.kc.makeApiClient(CoreV1Api);
  const old = (await listControllerPods(fx.kc)).map((p) => p.metadata!.name!);
  for (const name of old)
    await core.deleteNamespacedPod({ name, namespace: testInstall.namespace, gracePeriodSeconds: 5 });
  return pollUntil(
    'new controller pods, one of them leading',
    async () => {
      const pods = (await listControllerPods(fx.kc))
        .map((p) => p.metadata!.name!)
        .filter((n) => !old.includes(n));
      const leading = pods.some((pod) => events(pod).some((e) => e.event === 'leader.acquired'));
      return { pods, leading };
    },
    (s) => s.leading,
    120_000,
  ).then((s) => s.pods);
}

function events(pod: string): { event: string; cache?: string; reason?: string; caches?: string }[] {
  return podLogLines(testInstall.namespace, pod, 'controller').flatMap((line) => {
    try {
      return [JSON.parse(line) as { event: string }];
    } catch {
      return [];
    }
  });
}

function assertUntouched(before: V1Deployment, now: V1Deployment, when: string): void {
  assert.deepEqual(now.spec, before.spec, `the app's spec was not changed ${when}`);
  assert.equal(now.status?.observedGeneration, now.metadata?.generation, `the app settled ${when}`);
}

test('a QueueSplit list refused around a controller restart: the route stays ACTIVE, the app rolls zero times', async () => {
  const { kc, namespace, ch } = fx;
  const workload = 'unsynced';
  const source = await rabbitApp(fx, workload);
  const split = await createSplit(kc, namespace, {
    workload,
    queues: ['orders'],
    filter: { 'x-dev': 'alice' },
    owner: 'alice',
  });
  const name = split.metadata.name;
  await waitForSplitPhase(kc, namespace, name, 'Active');
  const apps = kc.makeApiClient(AppsV1Api);
  const active = await apps.readNamespacedDeployment({ name: workload, namespace });
  const podNames = async () => (await podsOf(kc, namespace, workload)).map((p) => p.metadata?.name).sort();
  const podsActive = await podNames();

  let pods: string[];
  try {
    await denyListingSplits();
    pods = await restartController();
    await pollUntil(
      'the new controller fails to list QueueSplits',
      async () =>
        pods.flatMap(events).filter((e) => e.event === 'cache.restart' && e.cache === QUEUE_SPLIT_PLURAL),
      (found) => found.length > 0,
      60_000,
    );
    await sleep(DENIED_MS);
    const during = await getSplit(kc, namespace, name);
    assert.equal(
      during?.status?.phase,
      'Active',
      `still Active while the list is refused: ${JSON.stringify(during?.status)}`,
    );
    assertUntouched(
      active,
      await apps.readNamespacedDeployment({ name: workload, namespace }),
      'while unsynced',
    );
    assert.deepEqual(await podNames(), podsActive, 'the same app pods: none restarted');
    // Said, not silent: which cache, and that nothing is acted on.
    const said = pods.flatMap(events).find((e) => e.event === 'controller.caches_not_synced');
    assert.ok(said, 'the controller logs controller.caches_not_synced');
    assert.ok(said.caches?.includes(QUEUE_SPLIT_PLURAL), `it names the cache: ${JSON.stringify(said)}`);
  } finally {
    await installController(kc);
  }

  await pollUntil(
    'the leader says its caches synced',
    async () => pods.flatMap(events).filter((e) => e.event === 'controller.caches_synced'),
    (found) => found.length > 0,
    60_000,
  );
  // Synced and passing again: the route is the same one, the app still untouched.
  await sleep(3_000);
  assert.equal((await getSplit(kc, namespace, name))?.status?.phase, 'Active');
  assertUntouched(
    active,
    await apps.readNamespacedDeployment({ name: workload, namespace }),
    'after the sync',
  );
  assert.deepEqual(await podNames(), podsActive, 'the same app pods after the sync');

  // And the app still gets what is not the developer's.
  const mine = ids(source, 'other', 5);
  await publishTo(ch, source, mine);
  await waitForAppReceived('the app received the others', mine, 60_000, source);

  await removeSplit(kc, namespace, name);
});
