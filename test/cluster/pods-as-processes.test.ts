// The test kubelet makes scheduled pods real local processes: scaling a Deployment starts and
// stops real consumers (seen by the brokers), a template change rolls the processes, and env
// is resolved from literals, ConfigMaps, Secrets and the downward API as a kubelet would.
import assert from 'node:assert/strict';
import { after, before, test } from 'node:test';
import * as amqp from 'amqplib';
import { AppsV1Api, CoreV1Api, type KubeConfig } from '@kubernetes/client-node';
import { Kafka, logLevel } from 'kafkajs';
import { isAlive } from '../env/processes';
import {
  adminConfig,
  createNamespace,
  deleteNamespace,
  fixtureDeployment,
  pidOf,
  records,
  scale,
  waitForNoPods,
  waitForReadyPods,
} from '../support/kube';
import { pollUntil } from '../support/poll';
import { getQueue } from '../support/rabbitManagement';
import { loadServices, uniqueName } from '../support/services';
import { createSecret, messageBody, messageHeaders } from '../support/secrets';

const services = loadServices();
let kc: KubeConfig;
let namespace: string;

before(async () => {
  kc = adminConfig(services.kubeconfig);
  namespace = await createNamespace(kc, 'qs-pods');
});
after(async () => deleteNamespace(kc, namespace));

test('RabbitMQ consumers: 2 replicas are 2 processes and 2 broker consumers; scale 0 stops them; 2 again', async () => {
  const queue = uniqueName('cluster-rmq');
  const conn = await amqp.connect(services.amqpUrl);
  const ch = await conn.createChannel();
  await ch.assertQueue(queue, { durable: true });

  const core = kc.makeApiClient(CoreV1Api);
  // The URL comes from a Secret and the queue name from a ConfigMap, as real workloads do.
  await createSecret(kc, namespace, 'amqp', { url: services.amqpUrl });
  await core.createNamespacedConfigMap({
    namespace,
    body: { metadata: { name: 'queues' }, data: { source: queue } },
  });
  const apps = kc.makeApiClient(AppsV1Api);
  await apps.createNamespacedDeployment({
    namespace,
    body: fixtureDeployment({
      name: 'rmq-app',
      image: 'queuesplit/fixture-rabbitmq-consumer:test',
      replicas: 2,
      env: [
        { name: 'AMQP_URL', valueFrom: { secretKeyRef: { name: 'amqp', key: 'url' } } },
        { name: 'SOURCE_QUEUE', valueFrom: { configMapKeyRef: { name: 'queues', key: 'source' } } },
        { name: 'FIXTURE_LABEL', valueFrom: { fieldRef: { fieldPath: 'metadata.name' } } },
      ],
    }),
  });

  const pods = await waitForReadyPods(kc, namespace, 'rmq-app', 2);
  const pids = pods.map(pidOf);
  assert.ok(
    pids.every((p) => p !== undefined && isAlive(p)),
    `two live processes: ${pids.join(',')}`,
  );
  await pollUntil(
    '2 consumers on the queue',
    () => getQueue(services.rabbitManagementUrl, queue),
    (q) => q.consumers === 2,
  );
  const started = await pollUntil(
    'both fixtures recorded their start',
    async () => records((r) => r.event === 'started' && r.source === queue),
    (rs) => rs.length === 2,
  );
  // fieldRef metadata.name resolved to each pod's own name.
  assert.deepEqual(
    started.map((r) => (r.event === 'started' ? r.label : '')).sort(),
    pods.map((p) => p.metadata!.name!).sort(),
  );

  await scale(kc, namespace, 'rmq-app', 0);
  await waitForNoPods(kc, namespace, 'rmq-app');
  assert.ok(
    pids.every((p) => !isAlive(p!)),
    'scaled-down processes are gone',
  );
  await pollUntil(
    '0 consumers on the queue',
    () => getQueue(services.rabbitManagementUrl, queue),
    (q) => q.consumers === 0,
  );

  await scale(kc, namespace, 'rmq-app', 2);
  await waitForReadyPods(kc, namespace, 'rmq-app', 2);
  await pollUntil(
    '2 consumers again',
    () => getQueue(services.rabbitManagementUrl, queue),
    (q) => q.consumers === 2,
  );

  // And they really consume.
  ch.sendToQueue(queue, Buffer.from(messageBody('x')), {
    messageId: `${queue}-m1`,
    headers: messageHeaders(),
  });
  await pollUntil(
    'the message was processed by a fixture',
    async () => records((r) => r.event === 'message' && r.id === `${queue}-m1`),
    (rs) => rs.length === 1,
  );
  await scale(kc, namespace, 'rmq-app', 0);
  await waitForNoPods(kc, namespace, 'rmq-app');
  await ch.deleteQueue(queue);
  await conn.close();
});

test('Kafka consumers: group members follow the replica count', async () => {
  const topic = uniqueName('cluster-kafka');
  const group = uniqueName('cluster-group');
  const kafka = new Kafka({
    clientId: 'qs-cluster-test',
    brokers: services.kafkaBrokers,
    logLevel: logLevel.NOTHING,
  });
  const admin = kafka.admin();
  await admin.connect();
  await admin.createTopics({ waitForLeaders: true, topics: [{ topic, numPartitions: 2 }] });
  const members = async () => (await admin.describeGroups([group])).groups[0]?.members.length ?? 0;

  const apps = kc.makeApiClient(AppsV1Api);
  await apps.createNamespacedDeployment({
    namespace,
    body: fixtureDeployment({
      name: 'kafka-app',
      image: 'queuesplit/fixture-kafka-consumer:test',
      replicas: 2,
      env: [
        { name: 'KAFKA_BROKERS', value: services.kafkaBrokers.join(',') },
        { name: 'SOURCE_TOPIC', value: topic },
        { name: 'KAFKA_GROUP', value: group },
      ],
    }),
  });
  const pods = await waitForReadyPods(kc, namespace, 'kafka-app', 2);
  await pollUntil('2 group members', members, (n) => n === 2, 60_000);

  await scale(kc, namespace, 'kafka-app', 0);
  await waitForNoPods(kc, namespace, 'kafka-app');
  assert.ok(pods.map(pidOf).every((p) => !isAlive(p!)));
  await pollUntil('the group is empty', members, (n) => n === 0, 60_000);

  await scale(kc, namespace, 'kafka-app', 2);
  await waitForReadyPods(kc, namespace, 'kafka-app', 2);
  await pollUntil('2 group members again', members, (n) => n === 2, 60_000);
  await scale(kc, namespace, 'kafka-app', 0);
  await waitForNoPods(kc, namespace, 'kafka-app');
  await admin.deleteTopics({ topics: [topic] });
  await admin.disconnect();
});

test('patching the pod template env rolls the processes, and the new ones see the new value', async () => {
  const queue = uniqueName('cluster-rollout');
  const conn = await amqp.connect(services.amqpUrl);
  const ch = await conn.createChannel();
  await ch.assertQueue(queue, { durable: true });
  const apps = kc.makeApiClient(AppsV1Api);
  const env = (label: string) => [
    { name: 'AMQP_URL', value: services.amqpUrl },
    { name: 'SOURCE_QUEUE', value: queue },
    { name: 'FIXTURE_LABEL', value: label },
  ];
  await apps.createNamespacedDeployment({
    namespace,
    body: fixtureDeployment({
      name: 'roll-app',
      image: 'queuesplit/fixture-rabbitmq-consumer',
      replicas: 1,
      env: env('v1'),
    }),
  });
  const [before] = await waitForReadyPods(kc, namespace, 'roll-app', 1);
  const oldPid = pidOf(before!);

  const current = await apps.readNamespacedDeployment({ name: 'roll-app', namespace });
  current.spec!.template.spec!.containers[0]!.env = env('v2');
  await apps.replaceNamespacedDeployment({ name: 'roll-app', namespace, body: current });

  await pollUntil(
    'a process started with FIXTURE_LABEL=v2',
    async () => records((r) => r.event === 'started' && r.source === queue && r.label === 'v2'),
    (rs) => rs.length === 1,
    60_000,
  );
  const [afterPod] = await pollUntil(
    'only the new pod remains',
    async () => (await waitForReadyPods(kc, namespace, 'roll-app', 1)).filter((p) => pidOf(p) !== oldPid),
    (ps) => ps.length === 1,
    60_000,
  );
  assert.notEqual(pidOf(afterPod!), oldPid);
  await pollUntil(
    'the old process is gone',
    async () => isAlive(oldPid!),
    (alive) => !alive,
  );
  await scale(kc, namespace, 'roll-app', 0);
  await waitForNoPods(kc, namespace, 'roll-app');
  await ch.deleteQueue(queue);
  await conn.close();
});
