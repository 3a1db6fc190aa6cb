// A real split of a RabbitMQ queue on the local cluster: the controller runs as a pod with its
// least-privilege RBAC, a developer identity that can do nothing but split creates the
// QueueSplit, the queue-agent moves messages, the fixture app's records prove where each went,
// and the handback gives the app its queue back without losing a message.
import assert from 'node:assert/strict';
import * as path from 'node:path';
import { after, before, test } from 'node:test';
import * as amqp from 'amqplib';
import { AppsV1Api, CoreV1Api, type KubeConfig } from '@kubernetes/client-node';
import { QUEUE_CONFIG_ANNOTATION } from '../../core/queueConfig/schema';
import { restrictedKubeconfig } from '../env/k8s/kubeconfig';
import { runDir } from '../env/paths';
import { grantDeveloper, installController } from '../../deploy/install';
import {
  adminConfig,
  createNamespace,
  deleteNamespace,
  fixtureDeployment,
  records,
  waitForReadyPods,
} from '../support/kube';
import { pollUntil } from '../support/poll';
import { createSplit, deleteSplit, waitForSplitGone, waitForSplitPhase } from '../support/splits';
import { loadServices, uniqueName } from '../support/services';
import { createSecret, messageBody, messageHeaders } from '../support/secrets';

const services = loadServices();
let admin: KubeConfig;
let dev: KubeConfig;
let namespace: string;
let conn: amqp.ChannelModel;
let ch: amqp.ConfirmChannel;

before(async () => {
  admin = adminConfig(services.kubeconfig);
  await installController(admin);
  namespace = await createNamespace(admin, 'qs-split-rmq');
  await grantDeveloper(admin, namespace, 'alice');
  dev = await restrictedKubeconfig(
    admin,
    namespace,
    'alice',
    path.join(runDir, 'k8s', 'pki', 'ca.crt'),
    path.join(runDir, `kubeconfig-${namespace}-alice`),
  );
  conn = await amqp.connect(services.amqpUrl);
  ch = await conn.createConfirmChannel();
});
after(async () => {
  await conn?.close().catch(() => undefined);
  await deleteNamespace(admin, namespace);
});

async function publish(queue: string, ids: string[], user?: string): Promise<void> {
  for (const id of ids) {
    ch.sendToQueue(queue, Buffer.from(messageBody(id)), {
      messageId: id,
      persistent: true,
      headers: messageHeaders(user),
    });
  }
  await ch.waitForConfirms();
}

test('the developer role can split but cannot scale a workload or read a Secret', async () => {
  const apps = dev.makeApiClient(AppsV1Api);
  await assert.rejects(
    apps.replaceNamespacedDeploymentScale({
      name: 'x',
      namespace,
      body: { metadata: { name: 'x' }, spec: { replicas: 0 } },
    }),
    (e) => (e as { code?: number }).code === 403,
  );
  await assert.rejects(
    dev.makeApiClient(CoreV1Api).readNamespacedSecret({ name: 'amqp', namespace }),
    (e) => (e as { code?: number }).code === 403,
  );
});

test('split a classic queue: alice gets her messages, the app the rest, and gets its queue back', async () => {
  const source = uniqueName('orders');
  await ch.assertQueue(source, { durable: true });
  await createSecret(admin, namespace, 'amqp', { url: services.inCluster.amqpUrl });
  const declaration = [
    'queues:',
    '  - name: orders',
    '    rabbitmq:',
    '      urlEnv: AMQP_URL',
    '      managementUrlEnv: RABBITMQ_MANAGEMENT_URL',
    '      sourceEnv: SOURCE_QUEUE',
  ].join('\n');
  await admin.makeApiClient(AppsV1Api).createNamespacedDeployment({
    namespace,
    body: fixtureDeployment({
      name: 'orders-app',
      image: 'queuesplit/fixture-rabbitmq-consumer',
      replicas: 2,
      annotations: { [QUEUE_CONFIG_ANNOTATION]: declaration },
      env: [
        { name: 'AMQP_URL', valueFrom: { secretKeyRef: { name: 'amqp', key: 'url' } } },
        { name: 'RABBITMQ_MANAGEMENT_URL', value: services.inCluster.rabbitManagementUrl },
        { name: 'SOURCE_QUEUE', value: source },
      ],
    }),
  });
  await waitForReadyPods(admin, namespace, 'orders-app', 2);
  const before = [`${source}-pre-1`, `${source}-pre-2`];
  await publish(source, before);

  const started = Date.now();
  const split = await createSplit(dev, namespace, {
    workload: 'orders-app',
    queues: ['orders'],
    filter: { 'x-queue-split-user': 'alice' },
    // The queuesplit-owner admission policy: a split is its creator's (the service account's user name).
    owner: `system:serviceaccount:${namespace}:alice`,
  });
  const active = await waitForSplitPhase(dev, namespace, split.metadata.name, 'Active', 180_000);
  console.log(`activation (request → Active): ${((Date.now() - started) / 1000).toFixed(1)}s`);
  const session = active.status?.queues?.[0]?.shadow?.source;
  assert.ok(session, 'the status names alice session shadow');
  assert.deepEqual(active.status?.queues?.[0]?.envOverrides, { SOURCE_QUEUE: session });

  const alice = Array.from({ length: 10 }, (_, i) => `${source}-alice-${i}`);
  const bob = Array.from({ length: 10 }, (_, i) => `${source}-bob-${i}`);
  const plain = Array.from({ length: 10 }, (_, i) => `${source}-plain-${i}`);
  await publish(source, alice, 'alice');
  await publish(source, bob, 'bob');
  await publish(source, plain);

  // Alice's local consumer reads her session shadow.
  const mine: string[] = [];
  const local = await conn.createChannel();
  const { consumerTag } = await local.consume(session, (m) => {
    if (!m) return;
    mine.push(String(m.properties.messageId));
    local.ack(m);
  });
  await pollUntil(
    'alice received her 10 messages',
    async () => mine.length,
    (n) => n >= 10,
    60_000,
  );
  await pollUntil(
    'the app processed everything else (and the two sent before the split)',
    async () =>
      new Set(
        records((r) => r.event === 'message' && r.source !== session && r.id.startsWith(source)).map((r) =>
          r.event === 'message' ? r.id : '',
        ),
      ),
    (ids) => [...bob, ...plain, ...before].every((id) => ids.has(id)),
    60_000,
  );
  assert.deepEqual([...mine].sort(), [...alice].sort(), 'alice got exactly her messages');
  const appIds = records((r) => r.event === 'message' && r.id.startsWith(`${source}-`)).map((r) =>
    r.event === 'message' ? r.id : '',
  );
  assert.ok(!appIds.some((id) => id.includes('-alice-')), 'the app never saw an alice message');
  await local.cancel(consumerTag);

  // Stop: the route drains, the app gets its queue back.
  const stopped = Date.now();
  await deleteSplit(dev, namespace, split.metadata.name);
  await waitForSplitGone(dev, namespace, split.metadata.name, 180_000);
  const apps = admin.makeApiClient(AppsV1Api);
  await pollUntil(
    'the workload is handed back (original env, no finalizer)',
    () => apps.readNamespacedDeployment({ name: 'orders-app', namespace }),
    (d) =>
      d.spec?.template.spec?.containers[0]?.env?.find((e) => e.name === 'SOURCE_QUEUE')?.value === source &&
      !(d.metadata?.finalizers ?? []).includes('queuesplit.dev/handback'),
    180_000,
  );
  await waitForReadyPods(admin, namespace, 'orders-app', 2);
  console.log(
    `handback, RabbitMQ classic (delete → app on its source): ${((Date.now() - stopped) / 1000).toFixed(1)}s`,
  );
  const after = Array.from({ length: 5 }, (_, i) => `${source}-after-${i}`);
  await publish(source, after, 'alice');
  await pollUntil(
    'after handback the app consumes the source again, alice header or not',
    async () =>
      new Set(
        records((r) => r.event === 'message' && r.source === source).map((r) =>
          r.event === 'message' ? r.id : '',
        ),
      ),
    (ids) => after.every((id) => ids.has(id)),
    60_000,
  );
  const everything = new Set([
    ...records((r) => r.event === 'message').map((r) => (r.event === 'message' ? r.id : '')),
    ...mine,
  ]);
  for (const id of [...before, ...alice, ...bob, ...plain, ...after])
    assert.ok(everything.has(id), `${id} was delivered somewhere`);
});
