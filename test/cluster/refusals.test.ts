// Workloads Queue Split must not split are refused up front with a reason a developer can act
// on, and nothing is touched: an HPA-scaled Deployment (the autoscaler would fight the cutover),
// and kinds other than Deployment/StatefulSet (a bare ReplicaSet, an Argo Rollout), which the
// API server refuses by the CRD's schema before the controller ever sees them. The CRD's CEL
// rules hold too (they and the enums were once dropped by a plain-object apply).
import assert from 'node:assert/strict';
import { after, before, test } from 'node:test';
import * as amqp from 'amqplib';
import { AppsV1Api, AutoscalingV2Api, CustomObjectsApi, type KubeConfig } from '@kubernetes/client-node';
import { mergePatch } from '../../agent/kube/client';
import { installController } from '../../deploy/install';
import { adminConfig, createNamespace, deleteNamespace } from '../support/kube';
import { deployRabbitApp } from '../support/rabbitSplit';
import {
  createSplit,
  deleteSplit,
  queueSplitApi,
  waitForSplitGone,
  waitForSplitPhase,
} from '../support/splits';
import { loadServices, uniqueName } from '../support/services';

const services = loadServices();
let kc: KubeConfig;
let namespace: string;
let conn: amqp.ChannelModel;

before(async () => {
  kc = adminConfig(services.kubeconfig);
  await installController(kc);
  namespace = await createNamespace(kc, 'qs-refuse');
  conn = await amqp.connect(services.amqpUrl);
});
after(async () => {
  await conn?.close().catch(() => undefined);
  await deleteNamespace(kc, namespace);
});

test('an HPA-scaled workload is rejected naming the autoscaler; the workload is untouched', async () => {
  const source = uniqueName('scaled');
  const ch = await conn.createChannel();
  await ch.assertQueue(source, { durable: true });
  await ch.close();
  await deployRabbitApp(kc, services, namespace, 'scaled', source);
  await kc.makeApiClient(AutoscalingV2Api).createNamespacedHorizontalPodAutoscaler({
    namespace,
    body: {
      metadata: { name: 'scaled-hpa' },
      spec: {
        scaleTargetRef: { apiVersion: 'apps/v1', kind: 'Deployment', name: 'scaled' },
        minReplicas: 1,
        maxReplicas: 3,
      },
    },
  });
  const apps = kc.makeApiClient(AppsV1Api);
  const before = await apps.readNamespacedDeployment({ name: 'scaled', namespace });
  const split = await createSplit(kc, namespace, {
    workload: 'scaled',
    queues: ['orders'],
    filter: { 'x-queue-split-user': 'lee' },
    owner: 'lee',
  });
  const rejected = await waitForSplitPhase(kc, namespace, split.metadata.name, 'Rejected', 60_000);
  const condition = rejected.status?.conditions?.[0];
  assert.equal(condition?.reason, 'AutoscalerManaged');
  assert.match(condition?.message ?? '', /HorizontalPodAutoscaler scaled-hpa/);
  assert.match(condition?.message ?? '', /without an HPA/, 'it says what to do');
  const afterwards = await apps.readNamespacedDeployment({ name: 'scaled', namespace });
  assert.equal(afterwards.metadata?.generation, before.metadata?.generation, 'the spec was not changed');
  assert.ok(!(afterwards.metadata?.finalizers ?? []).includes('queuesplit.dev/handback'), 'no finalizer');
  await deleteSplit(kc, namespace, split.metadata.name);
  await waitForSplitGone(kc, namespace, split.metadata.name, 60_000);
});

for (const kind of ['ReplicaSet', 'Rollout']) {
  test(`a ${kind} cannot be named as the workload: the API server refuses it with the supported kinds`, async () => {
    await assert.rejects(
      createSplit(kc, namespace, {
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
  const split = await createSplit(kc, namespace, {
    workload: 'absent',
    queues: ['orders'],
    filter: { 'x-queue-split-user': 'lee' },
    owner: 'lee',
  });
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
  await deleteSplit(kc, namespace, split.metadata.name);
  await waitForSplitGone(kc, namespace, split.metadata.name, 60_000);
});
