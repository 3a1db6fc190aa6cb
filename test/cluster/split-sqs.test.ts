// A real split of an Amazon SQS queue (ElasticMQ, test/env/elasticmq.ts) on the local cluster:
// the app declares its queue by URL with static keys from a Secret and an endpoint override, a
// developer identity creates the QueueSplit, the queue-agent copies each message to the app's
// shadow or the developer's, the fixture app's records prove where each went, and the handback
// gives the app its queue back without losing a message. A FIFO queue keeps each message
// group's order into both, through shadows named `.fifo`. An app that reads its queue URL from a
// mounted application.properties is split through a copy of its ConfigMap.
import assert from 'node:assert/strict';
import * as path from 'node:path';
import { test } from 'node:test';
import { CreateQueueCommand, SendMessageCommand, SQSClient } from '@aws-sdk/client-sqs';
import { AppsV1Api, CoreV1Api, type KubeConfig } from '@kubernetes/client-node';
import { grantDeveloper } from '../../deploy/install';
import { QUEUE_CONFIG_ANNOTATION } from '../../core/queueConfig/schema';
import { shadowQueueName } from '../../core/providers/sqs/queueUrl';
import { restrictedKubeconfig } from '../env/k8s/kubeconfig';
import { runDir } from '../env/paths';
import { clusterFixture } from '../support/clusterFixture';
import { fixtureDeployment, records, waitForReadyPods } from '../support/kube';
import { pollUntil } from '../support/poll';
import { createSecret, messageBody, messageHeaders } from '../support/secrets';
import { uniqueName } from '../support/services';
import { createSplit, removeSplit, waitForSplitPhase } from '../support/splits';
import { consumeSqsIds } from '../support/sqs';

const fx = clusterFixture('qs-split-sqs');
let dev: KubeConfig;
let sqs: SQSClient;
const ACCOUNT = '000000000000';

fx.setup(async () => {
  const { kc, namespace } = fx;
  await grantDeveloper(kc, namespace, 'alice');
  dev = await restrictedKubeconfig(
    kc,
    namespace,
    'alice',
    path.join(runDir, 'k8s', 'pki', 'ca.crt'),
    path.join(runDir, `kubeconfig-${namespace}-alice`),
  );
  sqs = new SQSClient({
    endpoint: fx.services.sqs.endpoint,
    region: fx.services.sqs.region,
    credentials: { accessKeyId: 'x', secretAccessKey: 'x' },
  });
  fx.defer(() => sqs.destroy());
});

const declaration = [
  'queues:',
  '  - name: orders',
  '    sqs:',
  '      queueUrlEnv: QUEUE_URL',
  '      regionEnv: AWS_REGION',
  '      endpointEnv: SQS_ENDPOINT',
  '      credentials: static',
  '      accessKeyIdEnv: AWS_ACCESS_KEY_ID',
  '      secretAccessKeyEnv: AWS_SECRET_ACCESS_KEY',
].join('\n');

/** The URL of queue `name` as the test (on the host) and the pods (through the gateway) name it. */
const hostUrl = (name: string) => `${fx.services.sqs.endpoint}/${ACCOUNT}/${name}`;
const podUrl = (name: string) => `${fx.services.sqs.podEndpoint}/${ACCOUNT}/${name}`;

/** Sends each id; to a FIFO queue in message group `group`, deduplicated by its id. */
async function send(queue: string, ids: readonly string[], user?: string, group?: string): Promise<void> {
  for (const id of ids) {
    const attributes = { ...messageHeaders(user), 'message-id': id };
    await sqs.send(
      new SendMessageCommand({
        QueueUrl: hostUrl(queue),
        MessageBody: messageBody(id),
        MessageAttributes: Object.fromEntries(
          Object.entries(attributes).map(([k, v]) => [k, { DataType: 'String', StringValue: v }]),
        ),
        ...(group ? { MessageGroupId: group, MessageDeduplicationId: id } : {}),
      }),
    );
  }
}

/** The app's Deployment: `replicas` fixture consumers of the queue `source`. */
function appDeployment(name: string, source: string, replicas: number) {
  return fixtureDeployment({
    name,
    image: 'queuesplit/fixture-sqs-consumer',
    replicas,
    annotations: { [QUEUE_CONFIG_ANNOTATION]: declaration },
    env: [
      { name: 'QUEUE_URL', value: podUrl(source) },
      { name: 'AWS_REGION', value: fx.services.sqs.region },
      { name: 'SQS_ENDPOINT', value: fx.services.sqs.podEndpoint },
      { name: 'AWS_ACCESS_KEY_ID', valueFrom: { secretKeyRef: { name: 'aws', key: 'id' } } },
      { name: 'AWS_SECRET_ACCESS_KEY', valueFrom: { secretKeyRef: { name: 'aws', key: 'secret' } } },
    ],
  });
}

/** Removes alice's split and waits until `workload` consumes `source` again. */
async function handBack(
  splitName: string,
  workload: string,
  source: string,
  replicas: number,
): Promise<void> {
  const { kc: admin, namespace } = fx;
  await removeSplit(dev, namespace, splitName, 300_000);
  await pollUntil(
    'the workload is handed back (original env, no finalizer)',
    () => admin.makeApiClient(AppsV1Api).readNamespacedDeployment({ name: workload, namespace }),
    (d) =>
      d.spec?.template.spec?.containers[0]?.env?.find((e) => e.name === 'QUEUE_URL')?.value ===
        podUrl(source) && !(d.metadata?.finalizers ?? []).includes('queuesplit.dev/handback'),
    300_000,
  );
  await waitForReadyPods(admin, namespace, workload, replicas);
}

const ids = (prefix: string, what: string, n: number) =>
  Array.from({ length: n }, (_, i) => `${prefix}-${what}-${i}`);

/** Ids starting with `prefix` the app pods recorded, read from `queueUrl` when given. */
const appReceived = (prefix: string, queueUrl?: string) =>
  new Set(
    records(
      (r) =>
        r.event === 'message' && r.id.startsWith(prefix) && (queueUrl === undefined || r.source === queueUrl),
    ).map((r) => (r.event === 'message' ? r.id : '')),
  );

test('split a standard SQS queue: alice gets her messages, the app the rest, and gets its queue back with nothing lost', async () => {
  const { kc: admin, namespace } = fx;
  const source = uniqueName('orders');
  // A short visibility timeout keeps the engine's proofs (one visibility timeout long) short.
  await sqs.send(new CreateQueueCommand({ QueueName: source, Attributes: { VisibilityTimeout: '5' } }));
  await createSecret(admin, namespace, 'aws', { id: 'qs-sqs-test-key-id', secret: 'qs-sqs-test-secret-key' });
  const apps = admin.makeApiClient(AppsV1Api);
  await apps.createNamespacedDeployment({ namespace, body: appDeployment('orders-app', source, 2) });
  await waitForReadyPods(admin, namespace, 'orders-app', 2);
  const before = ids(source, 'pre', 2);
  await send(source, before);

  const started = Date.now();
  const split = await createSplit(dev, namespace, {
    workload: 'orders-app',
    queues: ['orders'],
    filter: { 'x-queue-split-user': 'alice' },
    owner: `system:serviceaccount:${namespace}:alice`,
  });
  const active = await waitForSplitPhase(dev, namespace, split.metadata.name, 'Active', 300_000);
  console.log(`activation, SQS standard (request → Active): ${((Date.now() - started) / 1000).toFixed(1)}s`);
  const session = active.status?.queues?.[0]?.shadow?.source;
  assert.ok(session, 'the status names alice session shadow');
  // The app names its queue by URL: env delivery points it at the session shadow's URL.
  assert.deepEqual(active.status?.queues?.[0]?.envOverrides, { QUEUE_URL: podUrl(session) });

  const alice = ids(source, 'alice', 10);
  const bob = ids(source, 'bob', 10);
  const plain = ids(source, 'plain', 10);
  await send(source, alice, 'alice');
  await send(source, bob, 'bob');
  await send(source, plain);

  // Alice's local consumer reads her session shadow.
  const mine: string[] = [];
  const stopMine = consumeSqsIds(sqs, hostUrl(session), mine);
  await pollUntil(
    'alice received her 10 messages',
    async () => mine.length,
    (n) => n >= 10,
    90_000,
  ).finally(stopMine);
  await pollUntil(
    'the app processed everything else (and the two sent before the split)',
    async () => appReceived(source),
    (got) => [...bob, ...plain, ...before].every((id) => got.has(id)),
    90_000,
  );
  assert.deepEqual([...mine].sort(), [...alice].sort(), 'alice got exactly her messages');
  assert.ok(
    ![...appReceived(source)].some((id) => id.includes('-alice-')),
    'the app never saw an alice message',
  );

  // Stop: the route drains, the app gets its queue back.
  const stopped = Date.now();
  await handBack(split.metadata.name, 'orders-app', source, 2);
  console.log(
    `handback, SQS standard (delete → app on its source): ${((Date.now() - stopped) / 1000).toFixed(1)}s`,
  );
  const after = ids(source, 'after', 5);
  await send(source, after, 'alice');
  await pollUntil(
    'after handback the app consumes the source again, alice header or not',
    async () => appReceived(`${source}-after`, podUrl(source)),
    (got) => after.every((id) => got.has(id)),
    90_000,
  );
  const everything = new Set([...appReceived(source), ...mine]);
  for (const id of [...before, ...alice, ...bob, ...plain, ...after])
    assert.ok(everything.has(id), `${id} was delivered somewhere`);
});

test('split a FIFO SQS queue: each message group keeps its order to alice and to the app, through .fifo shadows', async () => {
  const { kc: admin, namespace } = fx;
  const source = `${uniqueName('payments')}.fifo`;
  await sqs.send(
    new CreateQueueCommand({ QueueName: source, Attributes: { VisibilityTimeout: '5', FifoQueue: 'true' } }),
  );
  await createSecret(admin, namespace, 'aws', { id: 'qs-sqs-test-key-id', secret: 'qs-sqs-test-secret-key' });
  // One consumer: the order the app's records show is the order it received.
  await admin
    .makeApiClient(AppsV1Api)
    .createNamespacedDeployment({ namespace, body: appDeployment('payments-app', source, 1) });
  await waitForReadyPods(admin, namespace, 'payments-app', 1);

  const split = await createSplit(dev, namespace, {
    workload: 'payments-app',
    queues: ['orders'],
    filter: { 'x-queue-split-user': 'alice' },
    owner: `system:serviceaccount:${namespace}:alice`,
  });
  const active = await waitForSplitPhase(dev, namespace, split.metadata.name, 'Active', 300_000);
  const session = shadowQueueName(podUrl(source), active.status!.queues![0]!.shadow!.source!);
  assert.match(session, /\.fifo$/, 'a FIFO source gets FIFO shadows');
  assert.deepEqual(active.status?.queues?.[0]?.envOverrides?.QUEUE_URL?.endsWith('.fifo'), true);

  // Three groups, each interleaving alice's messages with others'.
  const groups = ['g1', 'g2', 'g3'];
  const sent = new Map<string, { id: string; alice: boolean }[]>();
  for (const g of groups) sent.set(g, []);
  for (let i = 0; i < 8; i++) {
    for (const g of groups) {
      const alice = i % 3 !== 1;
      const id = `${source}-${g}-${alice ? 'alice' : 'bob'}-${i}`;
      sent.get(g)!.push({ id, alice });
      await send(source, [id], alice ? 'alice' : 'bob', g);
    }
  }
  const want = (alice: boolean) => groups.flatMap((g) => sent.get(g)!.filter((m) => m.alice === alice));
  const mine: string[] = [];
  const stopMine = consumeSqsIds(sqs, hostUrl(session), mine);
  await pollUntil(
    'alice received her messages',
    async () => mine.length,
    (n) => n >= want(true).length,
    90_000,
  ).finally(stopMine);
  const appOrder = () =>
    records((r) => r.event === 'message' && r.id.startsWith(source)).map((r) =>
      r.event === 'message' ? r.id : '',
    );
  await pollUntil(
    'the app received the others',
    async () => appOrder(),
    (got) => want(false).every((m) => got.includes(m.id)),
    90_000,
  );
  for (const g of groups) {
    const inGroup = (seen: readonly string[], alice: boolean) =>
      seen.filter((id) => id.includes(`-${g}-`) && id.includes(alice ? '-alice-' : '-bob-'));
    const expected = (alice: boolean) =>
      sent
        .get(g)!
        .filter((m) => m.alice === alice)
        .map((m) => m.id);
    assert.deepEqual(inGroup(mine, true), expected(true), `alice got group ${g} in order, once each`);
    assert.deepEqual(
      inGroup(appOrder(), false),
      expected(false),
      `the app got group ${g} in order, once each`,
    );
  }

  await handBack(split.metadata.name, 'payments-app', source, 1);
  const after = `${source}-g1-after`;
  await send(source, [after], 'alice', 'g1');
  await pollUntil(
    'after handback the app consumes the FIFO source again',
    async () => appOrder(),
    (got) => got.includes(after),
    90_000,
  );
});

test('split an SQS queue whose URL the app reads from a mounted application.properties: the queue-agent gets the URL from the declaration, the app a ConfigMap copy with only that URL changed, and everything back at the end', async () => {
  const { kc: admin, namespace } = fx;
  const core = admin.makeApiClient(CoreV1Api);
  const source = uniqueName('files');
  await sqs.send(new CreateQueueCommand({ QueueName: source, Attributes: { VisibilityTimeout: '5' } }));
  await createSecret(admin, namespace, 'aws', { id: 'qs-sqs-test-key-id', secret: 'qs-sqs-test-secret-key' });

  const properties = `# orders service\napp.orders.queue-url=${podUrl(source)}\n`;
  await core.createNamespacedConfigMap({
    namespace,
    body: { metadata: { name: 'files-config' }, data: { 'application.properties': properties } },
  });
  const body = appDeployment('files-app', source, 1);
  body.metadata!.annotations![QUEUE_CONFIG_ANNOTATION] = declaration.replace(
    'queueUrlEnv: QUEUE_URL',
    'queueUrlFile: {path: /config/application.properties, key: app.orders.queue-url}',
  );
  const spec = body.spec!.template.spec!;
  spec.containers[0]!.env = [
    ...spec.containers[0]!.env!.filter((e) => e.name !== 'QUEUE_URL'),
    { name: 'SOURCE_FROM_FILE', value: '/config/application.properties#app.orders.queue-url' },
  ];
  spec.containers[0]!.volumeMounts = [{ name: 'config', mountPath: '/config', readOnly: true }];
  spec.volumes = [{ name: 'config', configMap: { name: 'files-config' } }];
  const apps = admin.makeApiClient(AppsV1Api);
  await apps.createNamespacedDeployment({ namespace, body });
  await waitForReadyPods(admin, namespace, 'files-app', 1);
  const before = await apps.readNamespacedDeployment({ name: 'files-app', namespace });

  const split = await createSplit(dev, namespace, {
    workload: 'files-app',
    queues: ['orders'],
    filter: { 'x-queue-split-user': 'alice' },
    owner: `system:serviceaccount:${namespace}:alice`,
  });
  const active = await waitForSplitPhase(dev, namespace, split.metadata.name, 'Active', 300_000);
  const session = active.status?.queues?.[0]?.shadow?.source;
  assert.ok(session);
  assert.deepEqual(active.status?.queues?.[0]?.fileOverrides, [
    { path: '/config/application.properties', key: 'app.orders.queue-url', value: podUrl(session) },
  ]);
  const alice = ids(source, 'alice', 5);
  const plain = ids(source, 'plain', 5);
  await send(source, alice, 'alice');
  await send(source, plain);
  const mine: string[] = [];
  const stopMine = consumeSqsIds(sqs, hostUrl(session), mine);
  await pollUntil(
    'alice received her 5 messages',
    async () => mine.length,
    (n) => n >= 5,
    90_000,
  ).finally(stopMine);
  await pollUntil(
    'the app (reading the copy) processed the rest',
    async () => appReceived(source),
    (got) => plain.every((id) => got.has(id)),
    90_000,
  );
  assert.deepEqual([...mine].sort(), [...alice].sort(), 'alice got exactly her messages');

  await removeSplit(dev, namespace, split.metadata.name, 300_000);
  const after = await pollUntil(
    'handed back: the volume names its ConfigMap again, no finalizer',
    () => apps.readNamespacedDeployment({ name: 'files-app', namespace }),
    (d) =>
      d.spec?.template.spec?.volumes?.[0]?.configMap?.name === 'files-config' &&
      !(d.metadata?.finalizers ?? []).includes('queuesplit.dev/handback'),
    300_000,
  );
  assert.deepEqual(after.spec?.template.spec, before.spec?.template.spec, 'the pod spec is as before');
  await waitForReadyPods(admin, namespace, 'files-app', 1);
  const later = ids(source, 'later', 3);
  await send(source, later, 'alice');
  await pollUntil(
    'after handback the app reads its source from the file again',
    async () => appReceived(`${source}-later`, podUrl(source)),
    (got) => later.every((id) => got.has(id)),
    90_000,
  );
  const copies = await core.listNamespacedConfigMap({
    namespace,
    labelSelector: 'queuesplit.dev/config-copy=true',
  });
  assert.equal(copies.items.length, 0, 'the copy is deleted');
  assert.equal(
    (await core.readNamespacedConfigMap({ name: 'files-config', namespace })).data?.[
      'application.properties'
    ],
    properties,
  );
});
