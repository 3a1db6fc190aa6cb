// The split lifecycle for a StatefulSet with two replicas: the controller quiesces it, points
// both pods at the application shadow, routes alice's messages to her shadow, and on stop hands
// it back with its replica count and original env. The fixture pods' records prove each move.
import assert from 'node:assert/strict';
import { after, before, test } from 'node:test';
import * as amqp from 'amqplib';
import type { KubeConfig } from '@kubernetes/client-node';
import { installController } from '../../deploy/install';
import { adminConfig, createNamespace, deleteNamespace, records, waitForReadyPods } from '../support/kube';
import { pollUntil } from '../support/poll';
import { appReceived, deployRabbitApp, ids, publishTo } from '../support/rabbitSplit';
import { createSplit, deleteSplit, waitForSplitGone, waitForSplitPhase } from '../support/splits';
import { loadServices, uniqueName } from '../support/services';
import { envOf, readWorkload, waitForHandback } from '../support/handback';

const services = loadServices();
let kc: KubeConfig;
let namespace: string;
let conn: amqp.ChannelModel;
let ch: amqp.ConfirmChannel;

before(async () => {
  kc = adminConfig(services.kubeconfig);
  await installController(kc);
  namespace = await createNamespace(kc, 'qs-split-sts');
  conn = await amqp.connect(services.amqpUrl);
  ch = await conn.createConfirmChannel();
});
after(async () => {
  await conn?.close().catch(() => undefined);
  await deleteNamespace(kc, namespace);
});

test('split a StatefulSet (2 replicas): routing while active, handback restores replicas and env', async () => {
  const source = uniqueName('sts-orders');
  await ch.assertQueue(source, { durable: true });
  await deployRabbitApp(kc, services, namespace, 'ledger', source, 2, 'StatefulSet');
  const before = ids(source, 'pre', 6);
  await publishTo(ch, source, before);

  const started = Date.now();
  const split = await createSplit(kc, namespace, {
    workload: 'ledger',
    kind: 'StatefulSet',
    queues: ['orders'],
    filter: { 'x-queue-split-user': 'alice' },
    owner: 'alice',
  });
  const active = await waitForSplitPhase(kc, namespace, split.metadata.name, 'Active', 240_000);
  console.log(`activation, StatefulSet (request → Active): ${((Date.now() - started) / 1000).toFixed(1)}s`);
  const session = active.status?.queues?.[0]?.shadow?.source;
  assert.ok(session, 'the status names alice session shadow');

  // While split, both StatefulSet pods run with the source pointed at the application shadow.
  const sts = await readWorkload(kc, 'StatefulSet', namespace, 'ledger');
  const appShadow = envOf(sts, 'app', 'SOURCE_QUEUE');
  assert.ok(appShadow && appShadow !== source && appShadow !== session, `redirected to ${appShadow}`);
  assert.equal(sts.spec?.replicas, 2, 'the replica count is restored after the quiesce');
  const pods = await waitForReadyPods(kc, namespace, 'ledger', 2);
  const startedOnShadow = new Set(
    records((r) => r.event === 'started' && r.source === appShadow).map((r) => r.pod),
  );
  assert.ok(
    pods.every((p) => startedOnShadow.has(p.metadata!.name!)),
    `both pods consume the app shadow: ${[...startedOnShadow]}`,
  );

  const alice = ids(source, 'alice', 8);
  const rest = ids(source, 'rest', 8);
  await publishTo(ch, source, alice, 'alice');
  await publishTo(ch, source, rest);
  const mine: string[] = [];
  const local = await conn.createChannel();
  const { consumerTag } = await local.consume(session, (m) => {
    if (!m) return;
    mine.push(String(m.properties.messageId));
    local.ack(m);
  });
  await pollUntil(
    'alice received her 8',
    async () => new Set(mine).size,
    (n) => n === alice.length,
    60_000,
  );
  await pollUntil(
    'the StatefulSet processed the rest (and the messages sent before the split)',
    async () => appReceived(source),
    (got) => [...before, ...rest].every((id) => got.has(id)),
    60_000,
  );
  assert.deepEqual([...new Set(mine)].sort(), [...alice].sort(), 'alice got exactly her messages');
  assert.ok(!alice.some((id) => appReceived(source).has(id)), 'the app never saw an alice message');
  await local.cancel(consumerTag);
  await local.close();

  const stopped = Date.now();
  await deleteSplit(kc, namespace, split.metadata.name);
  await waitForSplitGone(kc, namespace, split.metadata.name, 240_000);
  await waitForHandback(kc, {
    kind: 'StatefulSet',
    namespace,
    name: 'ledger',
    replicas: 2,
    env: [{ container: 'app', name: 'SOURCE_QUEUE', value: source }],
  });
  console.log(
    `handback, StatefulSet (delete → app on its source): ${((Date.now() - stopped) / 1000).toFixed(1)}s`,
  );

  const afterIds = ids(source, 'after', 6);
  await publishTo(ch, source, afterIds, 'alice');
  await pollUntil(
    'after handback both pods consume the source again, alice header or not',
    async () =>
      new Set(
        records((r) => r.event === 'message' && r.source === source).map((r) =>
          r.event === 'message' ? r.id : '',
        ),
      ),
    (got) => afterIds.every((id) => got.has(id)),
    60_000,
  );
  const everywhere = new Set([...appReceived(source), ...mine]);
  assert.deepEqual(
    [...before, ...alice, ...rest, ...afterIds].filter((id) => !everywhere.has(id)),
    [],
    'no message was lost',
  );
});
