// Workloads Queue Split must not split are refused up front with a reason a developer can act
// on, and nothing is touched: a Deployment whose HPA scales it from zero (minReplicas 0, which
// would start the app inside a handover window; test/cluster/autoscaled.test.ts splits one whose
// HPA does not), one a PodDisruptionBudget keeps from any disruption (a split stops its pods),
// and kinds other than Deployment/StatefulSet (a bare ReplicaSet, an Argo Rollout), which the
// API server refuses by the CRD's schema before the controller ever sees them. The CRD's CEL
// rules hold too (they and the enums were once dropped by a plain-object apply).
import assert from 'node:assert/strict';
import { test } from 'node:test';
import {
  AppsV1Api,
  AutoscalingV2Api,
  CoordinationV1Api,
  CustomObjectsApi,
  PolicyV1Api,
} from '@kubernetes/client-node';
import { mergePatch } from '../../agent/kube/client';
import { leaseName } from '../../agent/controller/ownershipLeases';
import { sourceOwnershipKey } from '../../core/sourceOwnership';
import { QUEUE_CONFIG_ANNOTATION } from '../../core/queueConfig/schema';
import { resolveWorkload } from '../../core/queueConfig/resolveWorkload';
import type { WorkloadLike } from '../../core/queueConfig/podTemplate';
import { testInstall } from '../../deploy/install';
import { clusterFixture } from '../support/clusterFixture';
import { fixtureDeployment } from '../support/kube';
import { rabbitApp } from '../support/rabbitSplit';
import { createSplit, queueSplitApi, removeSplit, splitFor, waitForSplitPhase } from '../support/splits';
import { uniqueName } from '../support/services';

const fx = clusterFixture('qs-refuse', { rabbitmq: true });

test('a workload whose HPA scales from zero (minReplicas 0) is rejected naming the autoscaler and the fix; the workload is untouched', async () => {
  const { kc, namespace } = fx;
  await rabbitApp(fx, 'scaled');
  await kc.makeApiClient(AutoscalingV2Api).createNamespacedHorizontalPodAutoscaler({
    namespace,
    body: {
      metadata: { name: 'scaled-hpa' },
      spec: {
        scaleTargetRef: { apiVersion: 'apps/v1', kind: 'Deployment', name: 'scaled' },
        // The HPAScaleToZero feature (on in this cluster) allows 0 with an External metric.
        minReplicas: 0,
        maxReplicas: 3,
        metrics: [
          {
            type: 'External',
            external: { metric: { name: 'backlog' }, target: { type: 'AverageValue', averageValue: '1' } },
          },
        ],
      },
    },
  });
  const apps = kc.makeApiClient(AppsV1Api);
  const before = await apps.readNamespacedDeployment({ name: 'scaled', namespace });
  const split = await splitFor(kc, namespace, { workload: 'scaled', user: 'lee' });
  const rejected = await waitForSplitPhase(kc, namespace, split.metadata.name, 'Rejected', 60_000);
  const condition = rejected.status?.conditions?.[0];
  assert.equal(condition?.reason, 'AutoscalerScalesFromZero');
  assert.match(condition?.message ?? '', /HorizontalPodAutoscaler scaled-hpa has minReplicas 0/);
  assert.match(condition?.message ?? '', /Set spec\.minReplicas to 1 or more/, 'it says what to do');
  const afterwards = await apps.readNamespacedDeployment({ name: 'scaled', namespace });
  assert.equal(afterwards.metadata?.generation, before.metadata?.generation, 'the spec was not changed');
  assert.ok(!(afterwards.metadata?.finalizers ?? []).includes('queuesplit.dev/handback'), 'no finalizer');
  await removeSplit(kc, namespace, split.metadata.name, 60_000);
});

test('a workload a PodDisruptionBudget keeps from any disruption is rejected naming the budget; the workload is untouched', async () => {
  const { kc, namespace } = fx;
  await rabbitApp(fx, 'guarded', { replicas: 2 });
  await kc.makeApiClient(PolicyV1Api).createNamespacedPodDisruptionBudget({
    namespace,
    body: {
      metadata: { name: 'guarded-pdb' },
      spec: { selector: { matchLabels: { app: 'guarded' } }, maxUnavailable: 0 },
    },
  });
  const apps = kc.makeApiClient(AppsV1Api);
  const before = await apps.readNamespacedDeployment({ name: 'guarded', namespace });
  const split = await splitFor(kc, namespace, { workload: 'guarded', user: 'lee' });
  const rejected = await waitForSplitPhase(kc, namespace, split.metadata.name, 'Rejected', 60_000);
  const condition = rejected.status?.conditions?.[0];
  assert.equal(condition?.reason, 'DisruptionForbidden');
  assert.match(condition?.message ?? '', /PodDisruptionBudget guarded-pdb \(maxUnavailable 0\)/);
  assert.match(condition?.message ?? '', /relax it for the length of the split/, 'it says what to do');
  const afterwards = await apps.readNamespacedDeployment({ name: 'guarded', namespace });
  assert.equal(afterwards.metadata?.generation, before.metadata?.generation, 'the spec was not changed');
  assert.equal(afterwards.spec?.replicas, 2, 'never scaled');
  await removeSplit(kc, namespace, split.metadata.name, 60_000);
});

for (const kind of ['ReplicaSet', 'Rollout']) {
  test(`a ${kind} cannot be named as the workload: the API server refuses it with the supported kinds`, async () => {
    await assert.rejects(
      createSplit(fx.kc, fx.namespace, {
        workload: 'anything',
        kind: kind as 'Deployment', // deliberately outside the type: this is what the CRD must stop
        queues: ['orders'],
        filter: { 'x-queue-split-user': 'lee' },
        owner: 'lee',
      }),
      (err: unknown) => {
        const e = err as { code?: number; body?: unknown };
        const body = typeof e.body === 'string' ? e.body : JSON.stringify(e.body);
        assert.equal(e.code, 422, body);
        assert.match(body, /spec\.workload\.kind/);
        assert.match(body, /Deployment/);
        assert.match(body, /StatefulSet/);
        return true;
      },
    );
  });
}

test("a split's filter cannot be edited in place (the CRD's CEL rule): start a new split instead", async () => {
  const { kc, namespace } = fx;
  const split = await splitFor(kc, namespace, { workload: 'absent', user: 'lee' });
  await assert.rejects(
    kc.makeApiClient(CustomObjectsApi).patchNamespacedCustomObject(
      {
        ...queueSplitApi,
        namespace,
        name: split.metadata.name,
        body: { spec: { filter: { 'x-queue-split-user': 'someone-else' } } },
      },
      mergePatch,
    ),
    (err: unknown) => {
      const e = err as { code?: number; body?: unknown };
      const body = typeof e.body === 'string' ? e.body : JSON.stringify(e.body);
      assert.equal(e.code, 422, body);
      assert.match(body, /spec\.filter is immutable; create a new QueueSplit instead/);
      return true;
    },
  );
  await removeSplit(kc, namespace, split.metadata.name, 60_000);
});

test("a split's match (filters beyond equality) is immutable too, and a spec carries exactly one of filter and match", async () => {
  const { kc, namespace } = fx;
  const split = await createSplit(kc, namespace, {
    workload: 'absent',
    queues: ['orders'],
    filter: { anyOf: [{ tenant: { prefix: 'lee-' } }] },
    owner: 'lee',
  });
  assert.deepEqual(
    split.spec.match,
    { anyOf: [{ tenant: { prefix: 'lee-' } }] },
    'the API server keeps the predicates',
  );
  const refused = (pattern: RegExp) => (err: unknown) => {
    const e = err as { code?: number; body?: unknown };
    const body = typeof e.body === 'string' ? e.body : JSON.stringify(e.body);
    assert.equal(e.code, 422, body);
    assert.match(body, pattern);
    return true;
  };
  const api = kc.makeApiClient(CustomObjectsApi);
  await assert.rejects(
    api.patchNamespacedCustomObject(
      {
        ...queueSplitApi,
        namespace,
        name: split.metadata.name,
        body: { spec: { match: { anyOf: [{ tenant: { prefix: 'l' } }] } } },
      },
      mergePatch,
    ),
    refused(/spec\.match is immutable; create a new QueueSplit instead/),
  );
  await assert.rejects(
    api.createNamespacedCustomObject({
      ...queueSplitApi,
      namespace,
      body: {
        ...split,
        metadata: { name: `${split.metadata.name}-both`, namespace },
        spec: { ...split.spec, filter: { a: 'b' } },
        status: undefined,
      },
    }),
    refused(/spec needs exactly one of filter \(exact header values\) and match/),
  );
  await removeSplit(kc, namespace, split.metadata.name, 60_000);
});

/** A RabbitMQ fixture app whose annotation declares `queues` (name → env var of its source). */
async function deployTwoQueueApp(name: string, queues: [string, string][], env: Record<string, string>) {
  const declaration = [
    'queues:',
    ...queues.flatMap(([queue, sourceEnv]) => [
      `  - name: ${queue}`,
      '    rabbitmq:',
      '      urlEnv: AMQP_URL',
      '      managementUrlEnv: RABBITMQ_MANAGEMENT_URL',
      `      sourceEnv: ${sourceEnv}`,
    ]),
  ].join('\n');
  const body = fixtureDeployment({
    name,
    image: 'queuesplit/fixture-rabbitmq-consumer',
    replicas: 0, // refused before any pod matters; nothing waits for one
    annotations: { [QUEUE_CONFIG_ANNOTATION]: declaration },
    env: [
      { name: 'AMQP_URL', valueFrom: { secretKeyRef: { name: 'amqp', key: 'url' } } },
      { name: 'RABBITMQ_MANAGEMENT_URL', value: fx.services.inCluster.rabbitManagementUrl },
      ...Object.entries(env).map(([k, value]) => ({ name: k, value })),
    ],
  });
  return fx.kc.makeApiClient(AppsV1Api).createNamespacedDeployment({ namespace: fx.namespace, body });
}

async function ownershipLeasesOf(uid: string) {
  const list = await fx.kc.makeApiClient(CoordinationV1Api).listNamespacedLease({
    namespace: testInstall.namespace,
    labelSelector: 'queuesplit.dev/ownership=true',
  });
  return list.items.filter((l) => l.spec?.holderIdentity?.endsWith(`/${uid}`));
}

test('ownership Leases taken before a conflict are released when the split is rejected', async () => {
  // "mixed" declares a free source first and an owned one second: the controller takes the
  // first Lease, meets the conflict on the second, and must give the first back, or an
  // unrelated workload on the free source is refused later.
  const { kc, namespace, ch } = fx;
  const free = uniqueName('free');
  await ch.assertQueue(free, { durable: true });
  const owned = await rabbitApp(fx, 'holder');
  const holder = await kc.makeApiClient(AppsV1Api).readNamespacedDeployment({ name: 'holder', namespace });
  // The owner's claim as the controller writes it for a split workload (agent/controller/ownershipLeases.ts).
  const resolved = resolveWorkload(holder as WorkloadLike);
  assert.ok(resolved.ok);
  await kc.makeApiClient(CoordinationV1Api).createNamespacedLease({
    namespace: testInstall.namespace,
    body: {
      metadata: {
        name: leaseName(sourceOwnershipKey(namespace, resolved.value.queues[0]!)),
        labels: { 'queuesplit.dev/ownership': 'true' },
      },
      spec: { holderIdentity: `${namespace}/holder/${holder.metadata!.uid}` },
    },
  });
  const mixed = await deployTwoQueueApp(
    'mixed',
    [
      ['orders', 'FREE_QUEUE'],
      ['refunds', 'OWNED_QUEUE'],
    ],
    { FREE_QUEUE: free, OWNED_QUEUE: owned },
  );
  const split = await splitFor(kc, namespace, {
    workload: 'mixed',
    queues: ['orders', 'refunds'],
    user: 'lee',
  });
  const rejected = await waitForSplitPhase(kc, namespace, split.metadata.name, 'Rejected', 60_000);
  assert.equal(rejected.status?.conditions?.[0]?.reason, 'SourceOwnedElsewhere');
  assert.match(rejected.status?.conditions?.[0]?.message ?? '', /already split through workload/);
  const left = await ownershipLeasesOf(mixed.metadata!.uid!);
  assert.deepEqual(
    left.map((l) => l.metadata?.name),
    [],
    'the rejected workload holds no ownership Lease',
  );
  await removeSplit(kc, namespace, split.metadata.name, 60_000);
});

test('the same source declared twice in one workload is rejected naming both entries', async () => {
  const { kc, namespace } = fx;
  const source = uniqueName('twice');
  const twice = await deployTwoQueueApp(
    'twice',
    [
      ['orders', 'SOURCE_QUEUE'],
      ['orders-copy', 'SOURCE_QUEUE_COPY'],
    ],
    { SOURCE_QUEUE: source, SOURCE_QUEUE_COPY: source },
  );
  const split = await splitFor(kc, namespace, { workload: 'twice', user: 'lee' });
  const rejected = await waitForSplitPhase(kc, namespace, split.metadata.name, 'Rejected', 60_000);
  const condition = rejected.status?.conditions?.[0];
  assert.equal(condition?.reason, 'InvalidDeclaration');
  assert.match(condition?.message ?? '', /queues\[1\]\.rabbitmq\.sourceEnv/);
  assert.match(condition?.message ?? '', /same source as queues\[0\] \("orders"\)/);
  const afterwards = await kc.makeApiClient(AppsV1Api).readNamespacedDeployment({ name: 'twice', namespace });
  assert.equal(afterwards.metadata?.generation, twice.metadata?.generation, 'the spec was not changed');
  assert.deepEqual(await ownershipLeasesOf(twice.metadata!.uid!), [], 'no ownership Lease');
  await removeSplit(kc, namespace, split.metadata.name, 60_000);
});
