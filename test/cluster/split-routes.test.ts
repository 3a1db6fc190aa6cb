// Several developers on one queue, overlap refused, detach with residue, lease expiry, a killed
// queue-agent, and a workload whose deletion waits for the handback — all on the real cluster
// with the real RabbitMQ; the fixture app's records prove where every message went.
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { AppsV1Api, CoreV1Api } from '@kubernetes/client-node';
import { clusterFixture } from '../support/clusterFixture';
import { hostPidOf, podsOf } from '../support/kube';
import { pollUntil } from '../support/poll';
import {
  appReceived,
  consumeQueueIds,
  ids,
  publishTo,
  rabbitApp,
  waitForAppReceived,
} from '../support/rabbitSplit';
import {
  activeSplit,
  createSplit,
  deleteSplit,
  getSplit,
  removeSplit,
  splitFor,
  waitForSplitGone,
  waitForSplitPhase,
} from '../support/splits';

const fx = clusterFixture('qs-routes', { rabbitmq: true });

test('two developers split one queue (one by header, one by header or W3C baggage); overlapping filters are rejected naming the route and a witness', async () => {
  const { kc, namespace, conn, ch } = fx;
  const source = await rabbitApp(fx, 'two-devs');
  const alice = await activeSplit(kc, namespace, { workload: 'two-devs', user: 'alice' });
  const attachStart = Date.now();
  // bob's filter needs spec.match: his header, or his OpenTelemetry baggage member on a message
  // without the header (a message with alice's header and bob's baggage would match both).
  const bobSplit = await createSplit(kc, namespace, {
    workload: 'two-devs',
    queues: ['orders'],
    filter: {
      anyOf: [
        { 'x-queue-split-user': { equals: 'bob' } },
        { 'baggage:user': { equals: 'bob' }, 'x-queue-split-user': { exists: false } },
      ],
    },
    owner: 'bob',
  });
  const bob = await waitForSplitPhase(kc, namespace, bobSplit.metadata.name, 'Active', 120_000);
  console.log(
    `attach on an active queue (no app restart): ${((Date.now() - attachStart) / 1000).toFixed(1)}s`,
  );

  // {team=x} shares no key with {x-queue-split-user=alice}: one message can carry both.
  const carol = await createSplit(kc, namespace, {
    workload: 'two-devs',
    queues: ['orders'],
    filter: { team: 'x' },
    owner: 'carol',
  });
  const rejected = await waitForSplitPhase(kc, namespace, carol.metadata.name, 'Rejected');
  const message = rejected.status?.conditions?.[0]?.message ?? '';
  assert.match(
    message,
    new RegExp(alice.spec.routeId + '|' + bob.spec.routeId),
    `the rejection names the other route: ${message}`,
  );
  // A regex that alice's value satisfies overlaps her route: refused with a message matching both.
  const dora = await createSplit(kc, namespace, {
    workload: 'two-devs',
    queues: ['orders'],
    filter: { anyOf: [{ 'x-queue-split-user': { regex: 'al.*' } }] },
    owner: 'dora',
  });
  const doraRejected = await waitForSplitPhase(kc, namespace, dora.metadata.name, 'Rejected');
  const doraMessage = doraRejected.status?.conditions?.[0]?.message ?? '';
  assert.match(
    doraMessage,
    /a message with headers x-queue-split-user="alice" would match both/,
    doraMessage,
  );
  assert.match(doraMessage, /x-queue-split-user!=alice/, `the fix names a separating term: ${doraMessage}`);

  const aliceIds = ids(source, 'alice', 5);
  const bobIds = ids(source, 'bob', 5);
  const rest = ids(source, 'rest', 5);
  await publishTo(ch, source, aliceIds, 'alice');
  await publishTo(ch, source, bobIds.slice(0, 2), 'bob');
  // OpenTelemetry propagates the member inside `baggage`, among others, with properties and spaces.
  await publishTo(ch, source, bobIds.slice(2), undefined, {
    baggage: 'session=42, user = bob;ttl=60, x=%20y',
  });
  await publishTo(ch, source, rest.slice(0, 2), undefined, { baggage: 'user=bobby' });
  await publishTo(ch, source, rest.slice(2));
  await publishTo(ch, source, rest);
  const gotAlice: string[] = [];
  const gotBob: string[] = [];
  const localAlice = await consumeQueueIds(conn, alice.status!.queues![0]!.shadow!.source!, gotAlice);
  const localBob = await consumeQueueIds(conn, bob.status!.queues![0]!.shadow!.source!, gotBob);
  await pollUntil(
    'each developer got their 5',
    async () => [gotAlice.length, gotBob.length],
    ([a, b]) => a === 5 && b === 5,
    60_000,
  );
  await waitForAppReceived('the app got the rest', rest, 60_000, source);
  assert.deepEqual(gotAlice.sort(), aliceIds.sort());
  assert.deepEqual(gotBob.sort(), bobIds.sort());
  const app = appReceived(source);
  assert.ok(![...aliceIds, ...bobIds].some((id) => app.has(id)), 'no message reached two destinations');
  await localAlice.close();
  await localBob.close();

  await deleteSplit(kc, namespace, dora.metadata.name);
  await deleteSplit(kc, namespace, carol.metadata.name);
  await deleteSplit(kc, namespace, bob.metadata.name);
  await deleteSplit(kc, namespace, alice.metadata.name);
  await waitForSplitGone(kc, namespace, alice.metadata.name);
  await waitForSplitGone(kc, namespace, bob.metadata.name);
  await waitForSplitGone(kc, namespace, carol.metadata.name);
  await waitForSplitGone(kc, namespace, dora.metadata.name);
});

test('detach with unconsumed session messages moves them to the app; lease expiry drains a route', async () => {
  const { kc, namespace, ch } = fx;
  const source = await rabbitApp(fx, 'residue');
  const keeper = await activeSplit(kc, namespace, { workload: 'residue', user: 'keeper' });
  // dave never consumes his shadow; his lease is the shortest allowed and never renewed.
  const dave = await splitFor(kc, namespace, { workload: 'residue', user: 'dave', leaseSeconds: 10 });
  await waitForSplitPhase(kc, namespace, dave.metadata.name, 'Active', 60_000).catch(() => undefined);
  const eve = await activeSplit(kc, namespace, { workload: 'residue', user: 'eve' });
  const eveIds = ids(source, 'eve', 6);
  await publishTo(ch, source, eveIds, 'eve');
  // eve's messages wait in her session shadow; she stops without reading them.
  await pollUntil(
    'eve route published 6',
    async () => (await getSplit(kc, namespace, eve.metadata.name))?.status?.delivered ?? 0,
    (n) => n >= 6,
    30_000,
  );
  // What eve sees: her 6 messages not yet consumed (the status' lag, read every few seconds),
  // and no source backlog (the agent keeps up: the split adds nothing to the app's lag).
  const eveStatus = await pollUntil(
    'eve status shows her 6 unconsumed messages',
    async () => (await getSplit(kc, namespace, eve.metadata.name))?.status,
    (status) => status?.lag === 6,
    30_000,
  );
  assert.equal(eveStatus?.queues?.[0]?.lag, 6);
  assert.equal(eveStatus?.queues?.[0]?.sourceBacklog, undefined);
  await removeSplit(kc, namespace, eve.metadata.name);
  await waitForAppReceived('the app processed eve residue', eveIds, 60_000, source);

  // dave's lease (10 s, never renewed) expires: the route drains and his split shows Stopped.
  await pollUntil(
    'dave route drained after lease expiry',
    async () => (await getSplit(kc, namespace, dave.metadata.name))?.status?.phase,
    (phase) => phase === 'Stopped',
    90_000,
  );
  const daveIds = ids(source, 'dave-late', 3);
  await publishTo(ch, source, daveIds, 'dave');
  await waitForAppReceived('with dave gone, his header goes to the app', daveIds, 60_000, source);
  await deleteSplit(kc, namespace, dave.metadata.name);
  await removeSplit(kc, namespace, keeper.metadata.name);
});

test('queue-agent kill -9 while active: it restarts, recovers, and nothing is lost', async () => {
  const { kc, namespace, conn, ch } = fx;
  const source = await rabbitApp(fx, 'agent-kill');
  const split = await activeSplit(kc, namespace, { workload: 'agent-kill', user: 'frank' });
  const agentPods = (
    await kc
      .makeApiClient(CoreV1Api)
      .listNamespacedPod({ namespace, labelSelector: 'queuesplit.dev/workload=agent-kill' })
  ).items;
  assert.equal(agentPods.length, 1);
  const before = ids(source, 'before', 10);
  const during = ids(source, 'during', 10);
  await publishTo(ch, source, before);
  process.kill((await hostPidOf(agentPods[0]!))!, 'SIGKILL');
  await publishTo(ch, source, during);
  await publishTo(ch, source, ids(source, 'frank', 4), 'frank');
  await waitForAppReceived('the app got every unmatched message', [...before, ...during], 120_000, source);
  const mine: string[] = [];
  const local = await consumeQueueIds(conn, split.status!.queues![0]!.shadow!.source!, mine);
  await pollUntil(
    'frank got his 4',
    async () => new Set(mine).size,
    (n) => n === 4,
    60_000,
  );
  await local.close();
  await removeSplit(kc, namespace, split.metadata.name);
});

test('deleting a split workload waits for the handback (finalizer), then completes', async () => {
  const { kc, namespace } = fx;
  await rabbitApp(fx, 'deleted');
  const split = await activeSplit(kc, namespace, { workload: 'deleted', user: 'gina' });
  const apps = kc.makeApiClient(AppsV1Api);
  await apps.deleteNamespacedDeployment({ name: 'deleted', namespace });
  const held = await apps.readNamespacedDeployment({ name: 'deleted', namespace });
  assert.ok(held.metadata?.deletionTimestamp, 'deletion is pending');
  assert.ok(held.metadata?.finalizers?.includes('queuesplit.dev/handback'), 'held by the handback finalizer');
  await pollUntil(
    'the workload is deleted once handed back',
    () =>
      apps.readNamespacedDeployment({ name: 'deleted', namespace }).then(
        () => 'present',
        () => 'gone',
      ),
    (s) => s === 'gone',
    120_000,
  );
  assert.equal((await podsOf(kc, namespace, 'deleted')).length, 0);
  // The developer's split stays as a record that says why it ended.
  const ended = await getSplit(kc, namespace, split.metadata.name);
  assert.notEqual(ended?.status?.phase, 'Active');
  await removeSplit(kc, namespace, split.metadata.name);
});
