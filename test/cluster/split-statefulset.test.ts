// The split lifecycle for a StatefulSet with two replicas: the controller quiesces it, points
// both pods at the application shadow, routes alice's messages to her shadow, and on stop hands
// it back with its replica count and original env. The fixture pods' records prove each move.
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { clusterFixture } from '../support/clusterFixture';
import { records, waitForReadyPods } from '../support/kube';
import { pollUntil } from '../support/poll';
import {
  appReceived,
  consumeQueueIds,
  ids,
  publishTo,
  rabbitApp,
  waitForAppReceived,
  waitForRabbitHandback,
} from '../support/rabbitSplit';
import { activeSplit, removeSplit } from '../support/splits';
import { envOf, readWorkload } from '../support/handback';

const fx = clusterFixture('qs-split-sts', { rabbitmq: true });

test('split a StatefulSet (2 replicas): routing while active, handback restores replicas and env', async () => {
  const { kc, namespace, conn, ch } = fx;
  const source = await rabbitApp(fx, 'ledger', { replicas: 2, kind: 'StatefulSet' });
  const before = ids(source, 'pre', 6);
  await publishTo(ch, source, before);

  const started = Date.now();
  const active = await activeSplit(
    kc,
    namespace,
    { workload: 'ledger', kind: 'StatefulSet', user: 'alice' },
    240_000,
  );
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
  const local = await consumeQueueIds(conn, session, mine);
  await pollUntil(
    'alice received her 8',
    async () => new Set(mine).size,
    (n) => n === alice.length,
    60_000,
  );
  await waitForAppReceived(
    'the StatefulSet processed the rest (and the messages sent before the split)',
    [...before, ...rest],
    60_000,
    source,
  );
  assert.deepEqual([...new Set(mine)].sort(), [...alice].sort(), 'alice got exactly her messages');
  assert.ok(!alice.some((id) => appReceived(source).has(id)), 'the app never saw an alice message');
  await local.close();

  const stopped = Date.now();
  await removeSplit(kc, namespace, active.metadata.name, 240_000);
  await waitForRabbitHandback(kc, namespace, 'ledger', source, { replicas: 2, kind: 'StatefulSet' });
  console.log(
    `handback, StatefulSet (delete → app on its source): ${((Date.now() - stopped) / 1000).toFixed(1)}s`,
  );

  const afterIds = ids(source, 'after', 6);
  await publishTo(ch, source, afterIds, 'alice');
  await waitForAppReceived(
    'after handback both pods consume the source again, alice header or not',
    afterIds,
    60_000,
    source,
    source,
  );
  const everywhere = new Set([...appReceived(source), ...mine]);
  assert.deepEqual(
    [...before, ...alice, ...rest, ...afterIds].filter((id) => !everywhere.has(id)),
    [],
    'no message was lost',
  );
});
