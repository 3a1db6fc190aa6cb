// test-order: first (a private three-broker cluster: about 3.5 minutes, the longest of its suite)
// Shadow durability on real replication: a private three-broker KRaft cluster (test/env/kafka/
// cluster.ts; node 1 is the controller, brokers 2 and 3 are the ones stopped), an RF=3 source with
// min.insync.replicas=2, and records from the Apache Kafka Java client. The shadows must be as
// durable as the source, and a broker outage during a split must lose nothing and never put a
// record in two destinations (docs/design.md §5); below min.insync the engine reports DEGRADED
// and recovers when the brokers return. The cluster's broker defaults stay Kafka's (RF 1,
// min.insync 1), so durable shadows can only come from the engine copying the source.
import assert from 'node:assert/strict';
import { after, before, describe, test, type TestContext } from 'node:test';
import * as net from 'node:net';
import { ConfigResourceTypes, type Admin, type ISocketFactory } from 'kafkajs';
import type { Engine, EngineCondition, RouteSpec } from '../../agent/engine/contract';
import { KafkaEngine } from '../../agent/kafka/engine';
import { startKafkaCluster, type KafkaCluster } from '../env/kafka/cluster';
import { uniqueName } from '../support/services';
import { produceWithJavaAsync, type ForeignOptions, type ForeignRecord } from './kafka/foreign';
import { kafkaHarness, PARTITIONS, type KafkaHarness, type KafkaTopology } from './kafka/harness';
import type { Observed } from './harness';
import { ID_HEADER } from './kafka/messages';
import { assertDelivery, seenIds, USER } from './delivery';
import { done, untilDone } from './steps';
import { recordingLogger, testLogger, waitFor, withSplit } from './support';

const SOURCE = { replicationFactor: 3, config: { 'min.insync.replicas': '2' } };
// Leader moves and ISR changes take seconds on a loaded 2-core CI machine: wait on conditions,
// with room to spare.
const OUTAGE_MS = 90_000;

let cluster: KafkaCluster | undefined;
let harness: KafkaHarness | undefined;
const h = (): KafkaHarness => {
  if (!harness) throw new Error('the three-broker cluster did not start (see the before hook)');
  return harness;
};
const brokers = (): readonly string[] => cluster?.brokers ?? [];

before(
  async () => {
    cluster = await startKafkaCluster({ label: uniqueName('three'), nodes: 3 });
    harness = kafkaHarness({ brokers: cluster.brokers, source: SOURCE });
  },
  { timeout: 180_000 },
);
after(async () => {
  await harness?.close();
  await cluster?.close();
});

/** Foreign records for `user` (undefined: no user header, the application's), spread over the
 * source's partitions, each with its test id. */
function records(t: KafkaTopology, prefix: string, n: number, user?: string): ForeignRecord[] {
  return Array.from({ length: n }, (_, i) => ({
    partition: i % PARTITIONS,
    key: `k${i}`,
    value: `body of ${prefix} ${i}`,
    headers: [[ID_HEADER, `${t.label}-${prefix}-${i}`], ...(user ? ([[USER, user]] as const) : [])],
  }));
}
const idsOf = (rs: readonly ForeignRecord[]) => rs.map((r) => String(r.headers[0]![1]));

/** Alice's records and the application's, produced together by the Java client. */
async function produce(t: KafkaTopology, prefix: string, options: ForeignOptions = {}) {
  const alice = records(t, `${prefix}-alice`, 12, 'alice');
  const app = records(t, `${prefix}-app`, 12);
  await produceWithJavaAsync(brokers(), t.source, [...alice, ...app], options);
  return { alice: idsOf(alice), app: idsOf(app) };
}

const partitionsOf = async (a: Admin, topic: string) =>
  (await a.fetchTopicMetadata({ topics: [topic] })).topics[0]?.partitions ?? [];

/** Until every partition of `topics` has `size` in-sync replicas (a restarted broker caught up,
 * or the controller shrank the ISR of a stopped one). */
async function awaitIsr(topics: readonly string[], size: number): Promise<void> {
  await waitFor(
    `ISR of ${size} on ${topics.join(', ')}`,
    () =>
      h()
        .withAdmin(async (a) => {
          const all = await Promise.all(topics.map((topic) => partitionsOf(a, topic)));
          return all.flat().every((p) => p.isr.length === size && p.leader >= 0);
        })
        .catch(() => false),
    (ok) => ok,
    OUTAGE_MS,
  );
}

/** Every condition the engine reported while `body` ran (polled), for the test's record. */
async function watchingConditions<T>(
  e: Engine,
  body: () => Promise<T>,
): Promise<{ value: T; seen: EngineCondition[] }> {
  const seen = new Map<string, EngineCondition>();
  const timer = setInterval(() => {
    for (const c of e.status().conditions) seen.set(`${c.code}:${c.reason}`, c);
  }, 200);
  try {
    return { value: await body(), seen: [...seen.values()] };
  } finally {
    clearInterval(timer);
  }
}

/** Prepared, routed and started, each step retried while it answers `pending` as the controller
 * does (a fresh cluster creates its offsets topic on the first group lookup). */
async function runningRetried(e: Engine, route: RouteSpec) {
  await untilDone(() => e.prepare(), 'prepare', OUTAGE_MS);
  await untilDone(() => e.reconcileRoutes(1, [route]), 'reconcileRoutes', OUTAGE_MS);
  await untilDone(() => e.start(), 'start', OUTAGE_MS);
}

/** Route removed and drained, stop, application drain and handback; then the application's own
 * group reads what the split left on the source (`tail`: produced after stop), exactly once. */
async function handBack(
  t: KafkaTopology,
  e: Engine,
  route: RouteSpec,
  tail: () => Promise<{ alice: string[]; app: string[] }>,
) {
  await untilDone(() => e.reconcileRoutes(2, []), 'route removed', OUTAGE_MS);
  const drained = await untilDone(() => e.drainRoute(route), 'drainRoute', OUTAGE_MS);
  assert.equal(drained.value.moved, 0, 'alice consumed her whole shadow: no residue to move');
  const stopped = done(await e.stop(), 'stop');
  const left = await tail();
  await untilDone(() => e.drainApplication(), 'drainApplication', 60_000);
  await untilDone(() => e.commitHandoff(stopped.value.handoff), 'commitHandoff', 60_000);
  assert.equal(e.status().phase, 'handed-off');
  const expected = [...left.alice, ...left.app];
  const fromSource = seenIds(await h().read(t.source, expected, 30_000));
  return { expected, fromSource };
}

/** Elapsed time per phase, in the test's diagnostics (where CI time goes). */
function clock(c: TestContext) {
  const start = Date.now();
  return (phase: string) => c.diagnostic(`${phase} at ${((Date.now() - start) / 1000).toFixed(1)}s`);
}

/** The copies in a shadow: one per record in its log (partition/offset). A reader that sees a
 * record again (its commit failed while a coordinator moved) does not make a second copy. */
function copiesIn(c: TestContext, shadow: string, observed: readonly Observed[]): string[] {
  const byOffset = new Map<string, string>();
  for (const o of observed) byOffset.set(`${String(o.extra.partition)}/${String(o.extra.offset)}`, o.id);
  const offsetsOf = new Map<string, string[]>();
  for (const [at, id] of byOffset) offsetsOf.set(id, [...(offsetsOf.get(id) ?? []), at]);
  const twice = [...offsetsOf].filter(([, at]) => at.length > 1);
  if (twice.length > 0)
    c.diagnostic(`${shadow}: copied twice: ${twice.map(([id, at]) => `${id}@${at.join(',')}`).join(' ')}`);
  return [...byOffset.values()];
}

/** A copy the outage left in doubt (EndTxn sent, no answer) is copied again: its records may be
 * twice in their shadow (docs/design.md §5 item 2). Only then are duplicates allowed. */
function inDoubt(c: TestContext, events: ReadonlyArray<Record<string, unknown>>): boolean {
  const unknown = events.filter(
    (x) => x.event === 'producer.transaction-failed' && x.outcomeUnknown === true,
  );
  if (unknown.length > 0)
    c.diagnostic(
      `commits of unknown outcome: ${unknown.map((x) => `${String(x.what)} (${String(x.error)})`).join(', ')}`,
    );
  return unknown.length > 0;
}

const diagnose = (c: TestContext, what: string, seen: readonly EngineCondition[]) =>
  c.diagnostic(
    `${what}: ${seen.length === 0 ? 'no condition reported' : seen.map((s) => `${s.code}: ${s.reason}`).join(' | ')}`,
  );

/** A socket factory for an engine that, once armed, swallows the first Produce request sent
 * to `port` (its response never comes) until `fail()` severs that connection: a produce caught
 * in flight by a broker outage, at a moment the test chooses. */
function produceGate() {
  const PRODUCE = 0; // Kafka API key; a request is [int32 size][int16 api key]...
  let port: number | undefined;
  let held: net.Socket | undefined;
  const factory: ISocketFactory = ({ host, port: to, ssl, onConnect }) => {
    if (ssl) throw new Error('produceGate: the three-broker cluster is plaintext');
    const socket = net.connect({ host, port: to }, onConnect);
    const write = socket.write.bind(socket) as (chunk: unknown, ...rest: unknown[]) => boolean;
    // kafkajs writes each request as one buffer, so the API key is at bytes 4-5.
    socket.write = ((chunk: unknown, ...rest: unknown[]) => {
      const produce = Buffer.isBuffer(chunk) && chunk.length >= 6 && chunk.readInt16BE(4) === PRODUCE;
      if (to === port && held === undefined && produce) {
        held = socket;
        return true;
      }
      return write(chunk, ...rest);
    }) as typeof socket.write;
    return socket;
  };
  return {
    factory,
    arm: (p: number) => void (port = p),
    get held() {
      return held !== undefined;
    },
    fail: () => held?.destroy(new Error('the broker went away with the produce in flight')),
  };
}

describe('Kafka on three brokers', { concurrency: 1 }, () => {
  test('shadows of an RF=3 source get RF=3 and min.insync.replicas=2, read back from the brokers', () =>
    withSplit(h(), async (topo, engines) => {
      const t = topo as KafkaTopology;
      const alice = t.route('alice', { [USER]: 'alice' });
      await runningRetried(engines.track(h().engine(t, { logger: testLogger() })), alice);
      await h().withAdmin(async (a) => {
        // The broker defaults would give a shadow RF 1 and min.insync 1: only copying helps.
        const defaults = await a.describeConfigs({
          includeSynonyms: false,
          resources: [
            {
              type: ConfigResourceTypes.BROKER,
              name: '1',
              configNames: ['default.replication.factor', 'min.insync.replicas'],
            },
          ],
        });
        assert.deepEqual(
          Object.fromEntries(defaults.resources[0]!.configEntries.map((c) => [c.configName, c.configValue])),
          { 'default.replication.factor': '1', 'min.insync.replicas': '1' },
          "the cluster keeps Kafka's defaults",
        );
        for (const topic of [t.appShadow, alice.shadow]) {
          const partitions = await partitionsOf(a, topic);
          assert.equal(partitions.length, PARTITIONS, `${topic} partitions`);
          for (const p of partitions) {
            assert.deepEqual(
              [...p.replicas].sort(),
              [1, 2, 3],
              `${topic}/${p.partitionId} is replicated on all three brokers`,
            );
            assert.equal(p.isr.length, 3, `${topic}/${p.partitionId} in-sync replicas`);
          }
          const config = await a.describeConfigs({
            includeSynonyms: false,
            resources: [
              { type: ConfigResourceTypes.TOPIC, name: topic, configNames: ['min.insync.replicas'] },
            ],
          });
          assert.equal(
            config.resources[0]!.configEntries[0]?.configValue,
            '2',
            `${topic} min.insync.replicas, read back from the broker`,
          );
        }
      });
    }));

  test('a broker stopped mid-split: traffic keeps flowing, nothing lost, never two destinations', (c) =>
    withSplit(h(), async (topo, engines) => {
      const t = topo as KafkaTopology;
      const alice = t.route('alice', { [USER]: 'alice' });
      const e = engines.track(h().engine(t, { logger: testLogger() }));
      await runningRetried(e, alice);
      // Stop a broker that leads some source partition, so leadership has to move under the split.
      const leaders = await h().withAdmin(async (a) =>
        (await partitionsOf(a, t.source)).map((p) => p.leader),
      );
      const victim = leaders.find((id) => id !== 1) ?? 3;
      const mark = clock(c);

      const { value: sent, seen } = await watchingConditions(e, async () => {
        const before = await produce(t, 'before');
        // The Java producer is sending while the broker goes down (and retries through the move).
        const [during] = await Promise.all([produce(t, 'during'), cluster!.stopNode(victim)]);
        await awaitIsr([t.source, t.appShadow, alice.shadow], 2);
        mark(`broker ${victim} down, ISR 2`);
        const down = await produce(t, 'down');
        // The split goes on with the broker down: what was sent so far arrives.
        const soFar = [before, during, down];
        const [appDown, aliceDown] = await Promise.all([
          h().read(
            t.appShadow,
            soFar.flatMap((s) => s.app),
            OUTAGE_MS,
          ),
          h().read(
            alice.shadow,
            soFar.flatMap((s) => s.alice),
            OUTAGE_MS,
          ),
        ]);
        mark('copied with the broker down');
        const [back] = await Promise.all([produce(t, 'back'), cluster!.startNode(victim)]);
        await awaitIsr([t.source, t.appShadow, alice.shadow], 3);
        mark(`broker ${victim} back, ISR 3`);
        const restored = await produce(t, 'restored');
        const [appUp, aliceUp] = await Promise.all([
          h().read(t.appShadow, [...back.app, ...restored.app], OUTAGE_MS),
          h().read(alice.shadow, [...back.alice, ...restored.alice], OUTAGE_MS),
        ]);
        return {
          inputs: [...soFar, back, restored],
          app: seenIds([...appDown, ...appUp]),
          alice: seenIds([...aliceDown, ...aliceUp]),
        };
      });
      mark('copied after the restart');
      diagnose(c, `broker ${victim} stopped and restarted`, seen);
      assert.equal(e.status().health, 'ok', JSON.stringify(e.status().conditions));
      const { expected, fromSource } = await handBack(t, e, alice, () => produce(t, 'after-stop'));
      mark('handed back');
      const duringOutage = sent.inputs.flatMap((s) => [...s.alice, ...s.app]);
      assertDelivery({
        inputs: [...duringOutage, ...expected],
        destinations: { [alice.shadow]: sent.alice, app: [...sent.app, ...fromSource] },
        // A transaction whose outcome the outage made ambiguous is retried: at most one
        // duplicate in the same destination (docs/design.md §5.2), never a loss or a second one.
        mayDuplicate: duringOutage,
      });
    }));

  test('a copy whose produce is cut off by a broker outage, while the partition moves to a broker that already answered, commits nothing it did not write', (c) =>
    withSplit(h(), async (topo, engines) => {
      const t = topo as KafkaTopology;
      const alice = t.route('alice', { [USER]: 'alice' });
      const produceTo = produceGate();
      // A gate after a confirmed copy, as in the test below: the backlog that piles up behind it
      // is read in one round, so one copy writes to every shadow partition, on every broker.
      let gateId: string | undefined;
      let entered = false;
      let open: () => void = () => undefined;
      const gate = new Promise<void>((resolve) => (open = resolve));
      const e = engines.track(
        new KafkaEngine(h().config(t, `${t.label}-gated`), {
          socketFactory: produceTo.factory,
          logger: testLogger(),
          hooks: {
            afterShadowConfirm: async ({ messageId }) => {
              if (messageId === undefined || messageId !== gateId) return;
              entered = true;
              await gate;
            },
          },
        }),
      );
      const mark = clock(c);
      let victim: number | undefined;
      try {
        await runningRetried(e, alice);
        const gated = records(t, 'gate', 1);
        gateId = idsOf(gated)[0];
        await produceWithJavaAsync(brokers(), t.source, gated);
        await waitFor('the pump waits at the gate', async () => entered, Boolean, OUTAGE_MS);
        const backlog = await produce(t, 'backlog');
        // The victim leads a shadow partition and is not node 1 (the controller); its partitions
        // move to brokers that lead other shadow partitions, i.e. that answer the same produce.
        const { leaders, ports } = await h().withAdmin(async (a) => {
          const shadows = await Promise.all([t.appShadow, alice.shadow].map((x) => partitionsOf(a, x)));
          const described = await a.describeCluster();
          return {
            leaders: shadows.flat().map((p) => p.leader),
            ports: new Map(described.brokers.map((b) => [b.nodeId, b.port])),
          };
        });
        victim = leaders.find((id) => id !== 1);
        assert.ok(
          victim !== undefined,
          `a shadow partition led by broker 2 or 3 (leaders ${leaders.join(',')})`,
        );
        assert.deepEqual(
          [...new Set(leaders)].sort(),
          [1, 2, 3],
          'every broker leads a shadow partition, so each answers part of the copy',
        );
        produceTo.arm(ports.get(victim)!);
        open();
        await waitFor(
          'the copy to the victim broker is in flight',
          async () => produceTo.held,
          Boolean,
          OUTAGE_MS,
        );
        await cluster!.stopNode(victim); // a controlled shutdown: its leaderships move first
        await awaitIsr([t.appShadow, alice.shadow], 2);
        mark(`broker ${victim} down with a copy in flight`);
        produceTo.fail();
        const [app, aliceSeen] = await Promise.all([
          h().read(t.appShadow, [...idsOf(gated), ...backlog.app], OUTAGE_MS),
          h().read(alice.shadow, backlog.alice, OUTAGE_MS),
        ]);
        mark('copied');
        const committed = await h().withAdmin((a) =>
          a.fetchOffsets({ groupId: t.splitterGroup, topics: [t.source] }),
        );
        c.diagnostic(
          `splitter committed ${committed[0]!.partitions.map((p) => `${p.partition}:${p.offset}`).join(' ')}`,
        );
        assertDelivery({
          inputs: [...idsOf(gated), ...backlog.app, ...backlog.alice],
          destinations: { [alice.shadow]: seenIds(aliceSeen), app: seenIds(app) },
        });
      } finally {
        open();
        if (victim !== undefined) {
          await cluster!.startNode(victim);
          await awaitIsr([t.source, t.appShadow, alice.shadow], 3);
          mark(`broker ${victim} back`);
        }
      }
    }));

  test('an idle split degraded while two brokers are down is ok again once they return, without new traffic', (c) =>
    withSplit(h(), async (topo, engines) => {
      const t = topo as KafkaTopology;
      const alice = t.route('alice', { [USER]: 'alice' });
      const e = engines.track(h().engine(t, { logger: testLogger() }));
      await runningRetried(e, alice);
      const first = await produce(t, 'first');
      await Promise.all([
        h().read(t.appShadow, first.app, OUTAGE_MS),
        h().read(alice.shadow, first.alice, OUTAGE_MS),
      ]);
      const mark = clock(c);
      await Promise.all([cluster!.stopNode(2), cluster!.stopNode(3)]);
      const degraded = await waitFor(
        'the idle engine reports DEGRADED (its fence probe fails)',
        async () => e.status(),
        (s) => s.health === 'degraded',
        OUTAGE_MS,
      );
      mark('DEGRADED');
      diagnose(c, 'idle, two brokers down', degraded.conditions);
      await Promise.all([cluster!.startNode(2), cluster!.startNode(3)]);
      await awaitIsr([t.source, t.appShadow, alice.shadow], 3);
      mark('brokers back, ISR 3');
      await waitFor(
        'the engine is ok again with nothing to copy',
        async () => e.status(),
        (s) => s.health === 'ok',
        OUTAGE_MS,
      ).catch((err: unknown) => {
        diagnose(c, 'still reported', e.status().conditions);
        throw err;
      });
      mark('ok');
    }));

  test('two brokers down (min.insync.replicas not met): the engine reports DEGRADED, skips nothing, and recovers when they return', (c) =>
    withSplit(h(), async (topo, engines) => {
      const t = topo as KafkaTopology;
      const alice = t.route('alice', { [USER]: 'alice' });
      const { logger, events } = recordingLogger();
      // A gate in the engine's seam after a confirmed copy: the pump waits there while a backlog
      // builds up on the source, so records are waiting to be copied when the brokers go down.
      let gateId: string | undefined;
      let entered = false;
      let open: () => void = () => undefined;
      const gate = new Promise<void>((resolve) => (open = resolve));
      const e = engines.track(
        h().engine(t, {
          logger,
          hooks: {
            afterShadowConfirm: async ({ messageId }) => {
              if (messageId === undefined || messageId !== gateId) return;
              entered = true;
              await gate;
            },
          },
        }),
      );
      const mark = clock(c);
      try {
        await runningRetried(e, alice);
        const first = await produce(t, 'first');
        const [app1, alice1] = await Promise.all([
          h().read(t.appShadow, first.app, OUTAGE_MS),
          h().read(alice.shadow, first.alice, OUTAGE_MS),
        ]);
        const gated = records(t, 'gate', 1);
        gateId = idsOf(gated)[0];
        await produceWithJavaAsync(brokers(), t.source, gated);
        await waitFor('the pump waits at the gate', async () => entered, Boolean, OUTAGE_MS);
        const before = await h().withAdmin((a) => a.fetchTopicOffsets(t.source));
        const backlog = await produce(t, 'backlog'); // acks=all, all three brokers up

        await Promise.all([cluster!.stopNode(2), cluster!.stopNode(3)]);
        await awaitIsr([t.source, t.appShadow, alice.shadow], 1);
        mark('brokers 2 and 3 down, ISR 1');
        // acks=all producers are refused by the broker now; a leader-only (acks=1) one still
        // writes, and Kafka keeps those records unreadable until the ISR is back to min.insync.
        const outage = await produce(t, 'outage', { acks: '1' });
        const tried = events.length;
        open();
        await waitFor(
          'a failed copy of the backlog (not just an idle fence probe)',
          async () =>
            events.slice(tried).filter((x) => x.event === 'producer.transaction-failed' && x.what === 'copy'),
          (failed) => failed.length > 0,
          OUTAGE_MS,
        );
        mark('copy failed');
        // The reason is what fails now (the copy), not an earlier hiccup of the same outage.
        const degraded = await waitFor(
          'the engine reports DEGRADED naming the failing copy',
          async () => e.status(),
          (s) =>
            s.health === 'degraded' &&
            s.conditions.some((x) => x.code === 'publish-failing' && /^copy failed/.test(x.reason)),
          OUTAGE_MS,
        ).catch((err: unknown) => {
          diagnose(c, 'two brokers down, reported instead', e.status().conditions);
          throw err;
        });
        mark('DEGRADED');
        diagnose(c, 'two brokers down', degraded.conditions);
        assert.ok(
          degraded.conditions.every((x) => x.reason.length > 0 && x.safeAction.length > 0),
          'each condition names its reason and the safe action',
        );
        assert.notEqual(e.status().phase, 'closed');
        const committed = await h().withAdmin((a) =>
          a.fetchOffsets({ groupId: t.splitterGroup, topics: [t.source] }),
        );
        for (const p of committed[0]!.partitions) {
          const from = before.find((f) => f.partition === p.partition)!.high;
          assert.ok(
            BigInt(p.offset) <= BigInt(from),
            `${t.source}/${p.partition}: the splitter committed ${p.offset}, past the uncopied backlog from ${from}`,
          );
        }

        await Promise.all([cluster!.startNode(2), cluster!.startNode(3)]);
        await awaitIsr([t.source, t.appShadow, alice.shadow], 3);
        mark('brokers back, ISR 3');
        await waitFor(
          'the engine recovers',
          async () => e.status(),
          (s) => s.health === 'ok',
          OUTAGE_MS,
        );
        mark('recovered');
        const later = await produce(t, 'later');
        const rest = [backlog, outage, later];
        const [app2, alice2] = await Promise.all([
          h().read(t.appShadow, [...idsOf(gated), ...rest.flatMap((x) => x.app)], OUTAGE_MS),
          h().read(
            alice.shadow,
            rest.flatMap((x) => x.alice),
            OUTAGE_MS,
          ),
        ]);
        const { expected, fromSource } = await handBack(t, e, alice, () => produce(t, 'after-stop'));
        mark('copied and handed back');
        const inputs = [first, ...rest].flatMap((x) => [...x.alice, ...x.app]).concat(idsOf(gated), expected);
        assertDelivery({
          inputs,
          destinations: {
            [alice.shadow]: copiesIn(c, alice.shadow, [...alice1, ...alice2]),
            app: [...copiesIn(c, t.appShadow, [...app1, ...app2]), ...fromSource],
          },
          mayDuplicate: inDoubt(c, events) ? inputs : [],
        });
      } finally {
        open(); // never leave the pump waiting
      }
    }));
});
