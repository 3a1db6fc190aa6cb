// Kafka delivery under real traffic: what real producers send and the timing real load creates,
// one numbered case per test (agent/kafka/DECISIONS.md records the fixes). Records that kafkajs cannot
// send come from the Apache Kafka Java client (test/conformance/kafka/foreign.ts).
import assert from 'node:assert/strict';
import * as net from 'node:net';
import { after, describe, test } from 'node:test';
import { ConfigResourceTypes, type Admin, type ISocketFactory } from 'kafkajs';
import type { Engine } from '../../agent/engine/contract';
import type { KafkaEngineConfig } from '../../agent/kafka/config';
import { KafkaEngine } from '../../agent/kafka/engine';
import { loadServices } from '../support/services';
import { produceWithJava, type ForeignHeader, type ForeignRecord } from './kafka/foreign';
import { kafkaHarness, PARTITIONS, type KafkaTopology } from './kafka/harness';
import { ID_HEADER } from './kafka/messages';
import type { TestMessage } from './harness';
import { batch, ids, USER } from './delivery';
import { done, expectPending, running, untilDone } from './steps';
import { recordingLogger, testLogger, waitFor, withSplit } from './support';
import { trackingSocketFactory } from './kafka/support';

const h = kafkaHarness();
after(() => h.close());
const brokers = loadServices().kafkaBrokers;
let made = 0;

function engine(t: KafkaTopology, overrides: Partial<KafkaEngineConfig> = {}): Engine {
  return new KafkaEngine({ ...h.config(t, `${t.label}-d${++made}`), ...overrides }, { logger: testLogger() });
}

const setTopic = (a: Admin, topic: string, name: string, value: string) =>
  a.alterConfigs({
    validateOnly: false,
    resources: [{ type: ConfigResourceTypes.TOPIC, name: topic, configEntries: [{ name, value }] }],
  });

const splitterOffsets = async (t: KafkaTopology) =>
  h.withAdmin(async (a) =>
    Object.fromEntries(
      (await a.fetchOffsets({ groupId: t.splitterGroup, topics: [t.source] }))[0]!.partitions.map((p) => [
        p.partition,
        p.offset,
      ]),
    ),
  );

/** Every data record of `topic` as a `read_uncommitted` reader (the Java client's default)
 * sees it: aborted copies included. */
async function readUncommitted(t: KafkaTopology, topic: string, expectAtLeast: number): Promise<string[]> {
  const seen: string[] = [];
  const groupId = `${topic}-uncommitted`;
  t.groups.add(groupId); // deleted with the topology
  const c = h.kafka.consumer({
    groupId,
    readUncommitted: true,
    maxWaitTimeInMs: 100,
  });
  await c.connect();
  try {
    await c.subscribe({ topic, fromBeginning: true });
    await c.run({
      autoCommit: false,
      eachMessage: async ({ message }) => void seen.push(String(message.headers?.[ID_HEADER])),
    });
    await waitFor(
      `${topic} read uncommitted`,
      async () => seen.length,
      (n) => n >= expectAtLeast,
      15_000,
    ).catch(() => undefined);
    await new Promise((r) => setTimeout(r, 1_000)); // and anything after it
  } finally {
    await c.disconnect();
  }
  return seen;
}

/** An active engine whose source grows by one partition, written to, before the pump notices
 * (its check runs every 30 s in production); the application resets to latest. */
async function grownUnnoticed(t: KafkaTopology, engines: { track(e: Engine): Engine }) {
  const e = engines.track(
    engine(t, {
      offsetReset: 'latest',
      timing: { ...h.config(t, 'timing').timing, partitionCheckMs: 600_000 },
    }),
  );
  await running(e, 1, []);
  const before = batch('before', 3).map((m) => ({ ...m, extra: { partition: 0 } }));
  await h.produce(t, before);
  await h.read(t.appShadow, ids(before));
  await h.withAdmin((a) =>
    a.createPartitions({ topicPartitions: [{ topic: t.source, count: PARTITIONS + 1 }] }),
  );
  const grown = batch('grown', 3).map((m) => ({ ...m, extra: { partition: PARTITIONS } }));
  await h.produce(t, grown);
  return { e, before, grown };
}

/** The ids the application's own group reads from the source (without commits) once back on it. */
async function readAsApplication(t: KafkaTopology, expect: number): Promise<string[]> {
  const seen: string[] = [];
  const app = h.kafka.consumer({
    groupId: t.appGroup,
    sessionTimeout: 10_000,
    heartbeatInterval: 500,
    maxWaitTimeInMs: 100,
  });
  await app.connect();
  try {
    await app.subscribe({ topic: t.source, fromBeginning: false });
    await app.run({
      autoCommit: false,
      eachMessage: async ({ message }) => void seen.push(String(message.headers?.[ID_HEADER])),
    });
    await waitFor(
      'the application read the grown partition',
      async () => seen.length,
      (n) => n >= expect,
      15_000,
    ).catch(() => undefined);
  } finally {
    await app.disconnect();
  }
  return seen;
}

const idsOf = (records: readonly ForeignRecord[]) =>
  records.map((r) => String(r.headers.find(([k]) => k === ID_HEADER)?.[1]));

describe('Kafka delivery under real traffic', { concurrency: 1 }, () => {
  test('case 1: null header values from a Java producer are kept as null, and nothing of their fetch is skipped', () =>
    withSplit(h, async (topo, engines) => {
      const t = topo as KafkaTopology;
      const alice = t.route('alice', { [USER]: 'alice' });
      await running(engines.track(engine(t)), 1, [alice]);
      const records: ForeignRecord[] = [];
      for (let p = 0; p < PARTITIONS; p++) {
        for (let i = 0; i < 4; i++) {
          const headers: ForeignHeader[] = [[ID_HEADER, `${t.label}-p${p}-${i}`]];
          if (i % 2 === 0) headers.push([USER, 'alice']);
          if (i === 3) headers.push([USER, null]); // a null filter header selects nothing: the app
          if (i >= 1) headers.push(['x-trace', null], ['x-dup', 'a'], ['x-dup', null]);
          records.push({
            partition: p,
            key: i === 2 ? null : `k${i}`,
            value: i === 2 ? null : `body ${i}`,
            headers,
          });
        }
      }
      produceWithJava(brokers, t.source, records);
      const toAlice = records.filter(
        (r) =>
          r.headers.some(([k, v]) => k === USER && v === 'alice') &&
          !r.headers.some(([k, v]) => k === USER && v === null),
      );
      const toApp = records.filter((r) => !toAlice.includes(r));
      const [app, mine] = await Promise.all([
        h.read(t.appShadow, idsOf(toApp)),
        h.read(alice.shadow, idsOf(toAlice)),
      ]);
      assert.deepEqual(
        app.map((o) => o.id).sort(),
        idsOf(toApp).sort(),
        'every record of the fetch reached the app shadow',
      );
      assert.deepEqual(
        mine.map((o) => o.id).sort(),
        idsOf(toAlice).sort(),
        'every record of the fetch reached alice',
      );
      for (const o of [...app, ...mine]) {
        const i = Number(o.id.slice(-1));
        if (i === 0) {
          assert.equal('x-trace' in o.headers, false, `${o.id} gained no header`);
          continue;
        }
        assert.equal(o.headers['x-trace'], null, `${o.id}: the null header value stays null`);
        assert.deepEqual(
          o.headers['x-dup'],
          ['a', null],
          `${o.id}: a repeated key keeps its null value in order`,
        );
        if (i === 2) assert.equal(o.body.length, 0, `${o.id}: null value`);
      }
      assert.equal(
        await h.backlog(t.source),
        0,
        'the splitter committed past every record, after copying it',
      );
    }));

  test('case 7: one poison record (a timestamp the shadow refuses, a record over its max.message.bytes) stops only its partition, is reported, and is never skipped', () =>
    withSplit(h, async (topo, engines) => {
      const t = topo as KafkaTopology;
      const alice = t.route('alice', { [USER]: 'alice' });
      // The source takes what the shadows will not: timestamps days ahead (Kafka's default
      // bound is one hour, message.timestamp.after.max.ms).
      await h.withAdmin((a) =>
        setTopic(a, t.source, 'message.timestamp.after.max.ms', '9223372036854775807'),
      );
      const e = engines.track(engine(t));
      await running(e, 1, [alice]);
      await h.withAdmin((a) => setTopic(a, alice.shadow, 'max.message.bytes', '20000'));
      const m = (
        partition: number,
        name: string,
        user?: string,
        more: Partial<TestMessage> = {},
      ): TestMessage => ({
        id: `${t.label}-${name}`,
        headers: user ? { [USER]: user } : {},
        extra: { partition },
        ...more,
      });
      const future = m(0, 'a-future', undefined, { timestamp: Date.now() + 3 * 86_400_000 });
      const big = m(1, 'b-big', 'alice', { body: Buffer.alloc(50_000, 7) });
      const p0 = [m(0, 'a0'), future, m(0, 'a1'), m(0, 'a2', 'alice')];
      const p1 = [m(1, 'b0', 'alice'), big, m(1, 'b1'), m(1, 'b2', 'alice')];
      const p2 = [m(2, 'c0'), m(2, 'c1', 'alice'), m(2, 'c2')];
      await h.produce(t, [...p0, ...p1, ...p2]);

      const app = await h.read(t.appShadow, ids([p0[0]!, p2[0]!, p2[2]!]));
      const mine = await h.read(alice.shadow, ids([p1[0]!, p2[1]!]));
      assert.deepEqual(
        app.map((o) => o.id).sort(),
        ids([p0[0]!, p2[0]!, p2[2]!]).sort(),
        'the app gets what precedes each poison record, and all of partition 2',
      );
      assert.deepEqual(
        mine.map((o) => o.id).sort(),
        ids([p1[0]!, p2[1]!]).sort(),
        'alice too; nothing after a poison record overtakes it',
      );
      const conditions = await waitFor(
        'both poison records reported',
        async () => e.status().conditions,
        (c) => c.length === 2,
      );
      assert.equal(e.status().health, 'degraded');
      const reasons = conditions.map((c) => c.reason).sort();
      assert.match(
        reasons[0]!,
        new RegExp(`^the record at ${t.source}/0@1 cannot be copied: .*INVALID_TIMESTAMP`),
      );
      assert.match(
        reasons[1]!,
        new RegExp(`^the record at ${t.source}/1@1 cannot be copied: .*MESSAGE_TOO_LARGE`),
      );
      for (const c of conditions) assert.equal(c.code, 'publish-failing');
      await waitFor(
        'the splitter commits up to each poison record',
        () => splitterOffsets(t),
        (o) => o[0] === '1' && o[1] === '1' && o[2] === '3',
      );

      // The shadow is fixed: the next retry copies the record and the rest of its partition.
      await h.withAdmin((a) => setTopic(a, alice.shadow, 'max.message.bytes', '1048588'));
      const later = await h.read(alice.shadow, ids([big, p1[3]!]));
      assert.deepEqual(
        later.map((o) => o.id),
        ids([big, p1[3]!]),
        'in partition order',
      );
      assert.equal(later[0]!.body.length, 50_000);
      assert.deepEqual(
        (await h.read(t.appShadow, [p1[2]!.id])).map((o) => o.id),
        [p1[2]!.id],
      );
      await waitFor(
        'only the timestamp poison is left',
        async () => e.status().conditions,
        (c) => c.length === 1,
      );

      // Stopping hands back the source offset of the record still refused: the app reads it there.
      const stopped = done(await e.stop(), 'stop');
      const frontier = (stopped.value.handoff.data as { frontier: { partition: number; offset: string }[] })
        .frontier;
      assert.deepEqual(
        Object.fromEntries(frontier.map((f) => [f.partition, f.offset])),
        { 0: '1', 1: '4', 2: '3' },
        'the handback frontier stops at the refused record',
      );
    }));

  test('case 6: a stop retried after its final offset commit failed hands back the frontier of everything copied', () =>
    withSplit(h, async (topo, engines) => {
      const t = topo as KafkaTopology;
      // The engine's network, which the test can cut: while down, every connection is refused.
      let down = false;
      const tracked = new Set<net.Socket>();
      const up = trackingSocketFactory(tracked);
      const sockets: ISocketFactory = (args) =>
        down ? net.connect({ host: '127.0.0.1', port: 1 }, args.onConnect) : up(args);
      const input = batch('stop', 6).map((m) => ({ ...m, extra: { partition: 0 } }));
      const last = input[input.length - 1]!;
      let release: () => void = () => undefined;
      const held = new Promise<void>((r) => (release = r));
      let reached: () => void = () => undefined;
      const atLast = new Promise<void>((r) => (reached = r));
      const e = engines.track(
        new KafkaEngine(
          { ...h.config(t, `${t.label}-d${++made}`), prefetch: 1 },
          {
            logger: testLogger(),
            socketFactory: sockets,
            hooks: {
              // The last copy is confirmed; its source offset is not committed yet.
              afterShadowConfirm: async ({ messageId }) => {
                if (messageId !== last.id) return;
                reached();
                await held;
              },
            },
          },
        ),
      );
      await running(e, 1, []);
      await h.produce(t, input);
      await atLast;
      const stopping = e.stop();
      down = true;
      for (const s of tracked) s.destroy(new Error('network cut by the test'));
      release();
      expectPending(await stopping, 'in-flight', 'stop while the final commit fails');
      down = false;
      const stopped = done(await e.stop(), 'retried stop');
      const frontier = (stopped.value.handoff.data as { frontier: { partition: number; offset: string }[] })
        .frontier;
      assert.equal(
        frontier.find((f) => f.partition === 0)?.offset,
        '6',
        'the frontier covers the last copied record',
      );
      assert.equal((await splitterOffsets(t))[0], '6', 'and the splitter group holds it');
    }));

  test('case 8: partition growth while the application reads its shadow: a member resetting to latest still gets the new partition from its start', () =>
    withSplit(h, async (topo, engines) => {
      const t = topo as KafkaTopology;
      const e = engines.track(engine(t));
      await running(e, 1, []);
      const member = () =>
        h.kafka.consumer({
          groupId: t.appShadowGroup,
          sessionTimeout: 10_000,
          heartbeatInterval: 500,
          maxWaitTimeInMs: 100,
        });
      // The redirected application reads its shadow: a live member of the app-shadow group.
      const app = member();
      await app.connect();
      await app.subscribe({ topic: t.appShadow, fromBeginning: false });
      await app.run({ autoCommit: false, eachMessage: async () => undefined });
      await waitFor(
        'the application joined its shadow group',
        () =>
          h.withAdmin(async (a) => (await a.describeGroups([t.appShadowGroup])).groups[0]!.members.length),
        (n) => n === 1,
      );
      await h.withAdmin((a) =>
        a.createPartitions({ topicPartitions: [{ topic: t.source, count: PARTITIONS + 1 }] }),
      );
      const grown = batch('grown', 5).map((m) => ({ ...m, extra: { partition: PARTITIONS } }));
      await h.produce(t, grown);
      await waitFor(
        'the new partition is copied to the app shadow',
        () =>
          h.withAdmin(
            async (a) =>
              (await a.fetchTopicOffsets(t.appShadow)).find((o) => o.partition === PARTITIONS)?.high ?? '0',
          ),
        (high) => Number(high) >= grown.length,
      );
      await app.disconnect();
      // A member that gets the new partition now resets to latest wherever the group has no commit.
      const next = member();
      const seen: string[] = [];
      await next.connect();
      try {
        await next.subscribe({ topic: t.appShadow, fromBeginning: false });
        await next.run({
          autoCommit: false,
          eachMessage: async ({ message }) => void seen.push(String(message.headers?.[ID_HEADER])),
        });
        await waitFor(
          'the second member read the new partition',
          async () => seen.length,
          (n) => n >= grown.length,
          15_000,
        ).catch(() => undefined);
      } finally {
        await next.disconnect();
      }
      assert.deepEqual(seen, ids(grown), 'every record copied to the new partition reaches the application');
    }));

  test('case 2: a route removed while a multi-chunk round is in flight: nothing reaches its shadow after the barrier, every record is accounted for', () =>
    withSplit(h, async (topo, engines) => {
      const t = topo as KafkaTopology;
      const alice = t.route('alice', { [USER]: 'alice' });
      const input = batch('chunks', 120, () => ({ [USER]: 'alice' })).map((m) => ({
        ...m,
        extra: { partition: 0 },
      }));
      let release: () => void = () => undefined;
      const held = new Promise<void>((r) => (release = r));
      let reached: () => void = () => undefined;
      const atFirst = new Promise<void>((r) => (reached = r));
      const e = engines.track(
        new KafkaEngine(
          { ...h.config(t, `${t.label}-d${++made}`), prefetch: 10 },
          {
            logger: testLogger(),
            hooks: {
              // After the first chunk of the round committed, the other 11 still to go.
              afterShadowConfirm: async ({ messageId }) => {
                if (messageId !== input[0]!.id) return;
                reached();
                await held;
              },
            },
          },
        ),
      );
      await h.produce(t, input); // one backlog, read by the first round
      await running(e, 1, [alice]);
      await atFirst;
      const removing = e.reconcileRoutes(2, []);
      setTimeout(release, 300);
      done(await removing, 'reconcileRoutes without alice');
      const endAtBarrier = await h.withAdmin(async (a) =>
        (await a.fetchTopicOffsets(alice.shadow)).map((o) => o.high),
      );
      const mine = await h.read(alice.shadow, []);
      const app = await h.read(
        t.appShadow,
        ids(input).filter((id) => !mine.some((o) => o.id === id)),
      );
      assert.deepEqual(
        await h.withAdmin(async (a) => (await a.fetchTopicOffsets(alice.shadow)).map((o) => o.high)),
        endAtBarrier,
        'the removed shadow received nothing after the barrier passed',
      );
      const seen = [...mine, ...app].map((o) => o.id);
      assert.deepEqual(
        [...seen].sort(),
        ids(input).sort(),
        'every record once, in the shadow or the app shadow',
      );
      assert.ok(
        mine.length >= 10,
        'the chunk committed before the removal stays in the removed shadow (drained later)',
      );
    }));

  test('case 5: an aborted copy (EndTxn lost) is never re-routed: a read_uncommitted reader never sees a record in two destinations', () =>
    withSplit(h, async (topo, engines) => {
      const t = topo as KafkaTopology;
      const alice = t.route('alice', { [USER]: 'alice' });
      // The engine's network loses every EndTxn while armed: the copies are in the shadow's
      // log, their transaction never commits and is aborted when the producer is rebuilt.
      let armed = false;
      let lost = 0;
      const tracked = new Set<net.Socket>();
      const plain = trackingSocketFactory(tracked);
      const sockets: ISocketFactory = (args) => {
        const socket = plain(args);
        const write = socket.write.bind(socket) as (chunk: unknown, ...rest: unknown[]) => boolean;
        socket.write = ((chunk: unknown, ...rest: unknown[]) => {
          if (armed && Buffer.isBuffer(chunk) && chunk.length >= 6 && chunk.readInt16BE(4) === 26) {
            lost++;
            socket.destroy(new Error('EndTxn lost by the test'));
            return false;
          }
          return write(chunk, ...rest);
        }) as typeof socket.write;
        return socket;
      };
      const { logger, events } = recordingLogger();
      const e = engines.track(
        new KafkaEngine({ ...h.config(t, `${t.label}-d${++made}`) }, { logger, socketFactory: sockets }),
      );
      await running(e, 1, [alice]);
      const input = batch('aborted', 5, () => ({ [USER]: 'alice' })).map((m) => ({
        ...m,
        extra: { partition: 0 },
      }));
      armed = true;
      await h.produce(t, input);
      await waitFor(
        'a copy transaction lost its EndTxn',
        async () => lost,
        (n) => n >= 1,
      );
      // A commit sent and never answered may have happened: the log says its outcome is unknown
      // (a retry may duplicate, docs/design.md §5 item 2), unlike a failure before EndTxn.
      await waitFor(
        'the lost EndTxn is logged as a commit of unknown outcome',
        async () => events.filter((x) => x.event === 'producer.transaction-failed' && x.what === 'copy'),
        (failed) => failed.length > 0 && failed.every((x) => x.outcomeUnknown === true),
      );
      await waitFor(
        'the aborted copies are in alice’s log',
        () => readUncommitted(t, alice.shadow, input.length),
        (seen) => seen.length >= input.length,
      );
      // The route leaves while the copies are unconfirmed; the network comes back.
      const removing = e.reconcileRoutes(2, []);
      setTimeout(() => (armed = false), 500);
      const first = await removing;
      if (first.kind !== 'done')
        await untilDone(() => e.reconcileRoutes(2, []), 'reconcileRoutes without alice');
      const app = await readUncommitted(t, t.appShadow, 0);
      const mine = await readUncommitted(t, alice.shadow, input.length);
      const both = ids(input).filter((id) => app.includes(id) && mine.includes(id));
      assert.deepEqual(both, [], 'no record is visible in two destinations');
      const committedAlice = (await h.read(alice.shadow, ids(input))).map((o) => o.id);
      assert.deepEqual(
        [...new Set(committedAlice)].sort(),
        ids(input).sort(),
        'the retry committed every copy where it was first written',
      );
    }));

  test('case 4: partition growth just before stop: the handback starts the new partition at its log start for an application resetting to latest', () =>
    withSplit(h, async (topo, engines) => {
      const t = topo as KafkaTopology;
      const { e, grown } = await grownUnnoticed(t, engines);
      const stopped = done(await e.stop(), 'stop');
      done(await e.drainApplication(), 'drainApplication');
      done(await e.commitHandoff(stopped.value.handoff), 'commitHandoff');
      // The application is back on the source and resets to latest where its group has no commit.
      const seen = await readAsApplication(t, grown.length);
      assert.deepEqual(
        seen,
        ids(grown),
        'every record of the new partition reaches the application, and nothing copied before',
      );
    }));

  test('case 4: partition growth just before abort: the rollback starts the new partition at its log start for an application resetting to latest', () =>
    withSplit(h, async (topo, engines) => {
      const t = topo as KafkaTopology;
      const { e, before, grown } = await grownUnnoticed(t, engines);
      done(await e.abort(), 'abort');
      // The application is back on the source and resets to latest where its group has no commit.
      const wanted = [...ids(before), ...ids(grown)]; // after an abort the app re-reads what was copied
      const seen = await readAsApplication(t, wanted.length);
      assert.deepEqual(
        [...seen].sort(),
        [...wanted].sort(),
        'the new partition from its start, and what the split copied, again',
      );
    }));
});
