// A real split of an Amazon SQS queue (ElasticMQ, test/env/elasticmq.ts) on the local cluster:
// the app declares its queue by URL with static keys from a Secret and an endpoint override, a
// developer identity creates the QueueSplit, the queue-agent copies each message to the app's
// shadow or the developer's, the fixture app's records prove where each went, and the handback
// gives the app its queue back without losing a message.
import assert from 'node:assert/strict';
import * as path from 'node:path';
import { test } from 'node:test';
import {
  CreateQueueCommand,
  DeleteMessageCommand,
  ReceiveMessageCommand,
  SendMessageCommand,
  SQSClient,
} from '@aws-sdk/client-sqs';
import { AppsV1Api, type KubeConfig } from '@kubernetes/client-node';
import { grantDeveloper } from '../../deploy/install';
import { QUEUE_CONFIG_ANNOTATION } from '../../core/queueConfig/schema';
import { restrictedKubeconfig } from '../env/k8s/kubeconfig';
import { runDir } from '../env/paths';
import { clusterFixture } from '../support/clusterFixture';
import { fixtureDeployment, records, waitForReadyPods } from '../support/kube';
import { pollUntil } from '../support/poll';
import { createSecret, messageBody, messageHeaders } from '../support/secrets';
import { uniqueName } from '../support/services';
import { createSplit, removeSplit, waitForSplitPhase } from '../support/splits';

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

async function send(queue: string, ids: readonly string[], user?: string): Promise<void> {
  for (const id of ids) {
    const attributes = { ...messageHeaders(user), 'message-id': id };
    await sqs.send(
      new SendMessageCommand({
        QueueUrl: hostUrl(queue),
        MessageBody: messageBody(id),
        MessageAttributes: Object.fromEntries(
          Object.entries(attributes).map(([k, v]) => [k, { DataType: 'String', StringValue: v }]),
        ),
      }),
    );
  }
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
  await apps.createNamespacedDeployment({
    namespace,
    body: fixtureDeployment({
      name: 'orders-app',
      image: 'queuesplit/fixture-sqs-consumer',
      replicas: 2,
      annotations: { [QUEUE_CONFIG_ANNOTATION]: declaration },
      env: [
        { name: 'QUEUE_URL', value: podUrl(source) },
        { name: 'AWS_REGION', value: fx.services.sqs.region },
        { name: 'SQS_ENDPOINT', value: fx.services.sqs.podEndpoint },
        { name: 'AWS_ACCESS_KEY_ID', valueFrom: { secretKeyRef: { name: 'aws', key: 'id' } } },
        { name: 'AWS_SECRET_ACCESS_KEY', valueFrom: { secretKeyRef: { name: 'aws', key: 'secret' } } },
      ],
    }),
  });
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
  await pollUntil(
    'alice received her 10 messages',
    async () => {
      const { Messages = [] } = await sqs.send(
        new ReceiveMessageCommand({
          QueueUrl: hostUrl(session),
          MaxNumberOfMessages: 10,
          WaitTimeSeconds: 1,
          MessageAttributeNames: ['All'],
        }),
      );
      for (const m of Messages) {
        mine.push(m.MessageAttributes?.['message-id']?.StringValue ?? '');
        await sqs.send(
          new DeleteMessageCommand({ QueueUrl: hostUrl(session), ReceiptHandle: m.ReceiptHandle }),
        );
      }
      return mine.length;
    },
    (n) => n >= 10,
    90_000,
  );
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
  await removeSplit(dev, namespace, split.metadata.name, 300_000);
  await pollUntil(
    'the workload is handed back (original env, no finalizer)',
    () => apps.readNamespacedDeployment({ name: 'orders-app', namespace }),
    (d) =>
      d.spec?.template.spec?.containers[0]?.env?.find((e) => e.name === 'QUEUE_URL')?.value ===
        podUrl(source) && !(d.metadata?.finalizers ?? []).includes('queuesplit.dev/handback'),
    300_000,
  );
  await waitForReadyPods(admin, namespace, 'orders-app', 2);
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
