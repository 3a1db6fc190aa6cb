// Aborted transactions on the source. A foreign transactional producer (the Apache Kafka Java
// client, ./kafka/transactions.ts) interleaves commits and aborts with the same headers on
// both; the shadows are read by a Java consumer with `isolation.level=read_committed`, as a
// Kafka Streams or exactly-once application reads them. Every copy is inside a committed engine
// transaction, so an aborted source record that is copied becomes committed data for such a
// reader. The source is read at the isolation level the queue declares (default
// read_committed); aborted ranges are dropped as the Java client drops them (README, "Kafka
// shadows are written in transactions"; agent/kafka/aborted.ts).
import assert from 'node:assert/strict';
import { after, describe, test } from 'node:test';
import type { Engine } from '../../agent/engine/contract';
import type { KafkaEngineConfig } from '../../agent/kafka/config';
import { KafkaEngine } from '../../agent/kafka/engine';
import { loadServices } from '../support/services';
import { kafkaHarness, type KafkaTopology } from './kafka/harness';
import { ID_HEADER } from './kafka/messages';
import { JavaTransactions, readWithJava, type ProducerName } from './kafka/transactions';
import { USER } from './delivery';
import { running } from './steps';
import { testLogger, waitFor, withSplit } from './support';

const h = kafkaHarness();
after(() => h.close());
const brokers = loadServices().kafkaBrokers;
let made = 0;

function engine(t: KafkaTopology, overrides: Partial<KafkaEngineConfig> = {}): Engine {
  return new KafkaEngine({ ...h.config(t, `${t.label}-t${++made}`), ...overrides }, { logger: testLogger() });
}

/** Drives the Java producers and remembers which ids ended committed and which aborted. Every
 * other record carries alice's header, committed or aborted alike. */
class Script {
  readonly committed: string[] = [];
  readonly aborted: string[] = [];
  /** Offsets of every record sent, by id (to describe a leak by its place in the log). */
  readonly at = new Map<string, string>();
  private readonly open = new Map<ProducerName, string[]>();
  private n = 0;
  readonly tx: JavaTransactions;

  constructor(private readonly t: KafkaTopology) {
    this.tx = new JavaTransactions(brokers, t.source, `${t.label}-foreign`);
  }

  async begin(p: ProducerName): Promise<void> {
    await this.tx.begin(p);
    this.open.set(p, []);
  }

  /** `count` records to `partition`, each its own batch; answers their offsets. */
  async send(p: ProducerName, partition: number, count = 1, bytes = 0): Promise<bigint[]> {
    const offsets: bigint[] = [];
    for (let i = 0; i < count; i++) {
      const n = this.n++;
      const id = `${this.t.label}-${p === '-' ? 'plain' : p}-${n}`;
      const headers: Record<string, string> = {
        [ID_HEADER]: id,
        ...(n % 2 === 0 ? { [USER]: 'alice' } : {}),
      };
      const offset = await this.tx.send(p, partition, `${id} `.padEnd(bytes, 'x'), headers);
      offsets.push(offset);
      this.at.set(id, `${partition}@${offset}`);
      if (p === '-') this.committed.push(id);
      else this.open.get(p)?.push(id);
    }
    return offsets;
  }

  async commit(p: ProducerName): Promise<void> {
    await this.tx.commit(p);
    this.committed.push(...(this.open.get(p) ?? []));
    this.open.delete(p);
  }

  async abort(p: ProducerName): Promise<void> {
    await this.tx.abort(p);
    this.aborted.push(...(this.open.get(p) ?? []));
    this.open.delete(p);
  }

  isAlice(id: string): boolean {
    return Number(id.slice(id.lastIndexOf('-') + 1)) % 2 === 0;
  }
}

const sorted = (xs: readonly string[]) => [...xs].sort();

/** The splitter committed every source partition up to its end (markers included). */
async function caughtUp(t: KafkaTopology): Promise<void> {
  await waitFor(
    'the splitter committed past the end of the source',
    () =>
      h.withAdmin(async (a) => {
        const [ends, committed] = await Promise.all([
          a.fetchTopicOffsets(t.source),
          a.fetchOffsets({ groupId: t.splitterGroup, topics: [t.source] }),
        ]);
        return ends.every(
          (e) => committed[0]?.partitions.find((p) => p.partition === e.partition)?.offset === e.high,
        );
      }),
    (ok) => ok,
    60_000,
  );
}

const splitterAt = (t: KafkaTopology, partition: number) =>
  h.withAdmin(
    async (a) =>
      (await a.fetchOffsets({ groupId: t.splitterGroup, topics: [t.source] }))[0]?.partitions.find(
        (p) => p.partition === partition,
      )?.offset,
  );

const javaIds = async (topic: string, isolation: 'read_committed' | 'read_uncommitted') =>
  (await readWithJava(brokers, topic, isolation, [ID_HEADER])).map((r) => r.headers[0] ?? '?');

/** The shadows, read by read_committed Java consumers, hold exactly the `expected` ids (alice's
 * in her shadow, the rest in the app shadow), once each, and none of `aborted`. */
async function assertShadows(
  s: Script,
  t: KafkaTopology,
  aliceShadow: string,
  expected: readonly string[],
  aborted: readonly string[],
): Promise<void> {
  const [app, alice] = await Promise.all([
    javaIds(t.appShadow, 'read_committed'),
    javaIds(aliceShadow, 'read_committed'),
  ]);
  const gone = new Set(aborted);
  const leaked = [
    ...app.filter((id) => gone.has(id)).map((id) => `app shadow: ${id} (source ${s.at.get(id)})`),
    ...alice.filter((id) => gone.has(id)).map((id) => `alice's shadow: ${id} (source ${s.at.get(id)})`),
  ];
  assert.deepEqual(leaked, [], 'no aborted source record is committed in a shadow');
  assert.deepEqual(sorted(app), sorted(expected.filter((id) => !s.isAlice(id))), 'the app shadow');
  assert.deepEqual(sorted(alice), sorted(expected.filter((id) => s.isAlice(id))), "alice's shadow");
}

describe('Kafka aborted source transactions', { concurrency: 1 }, () => {
  test('layout (a): a transaction that began first and aborted after a later one, across two partitions, leaks none of its records', () =>
    withSplit(h, async (topo, engines) => {
      const t = topo as KafkaTopology;
      const alice = t.route('alice', { [USER]: 'alice' });
      await running(engines.track(engine(t)), 1, [alice]);
      const s = new Script(t);
      try {
        await s.begin('c');
        await s.send('c', 0);
        await s.send('c', 1);
        await s.commit('c');
        await s.send('-', 0); // no transaction at all
        // p1 begins first on both partitions, p2 after it; p2 aborts first, then p1.
        await s.begin('p1');
        await s.send('p1', 0, 3);
        await s.send('p1', 1, 2);
        await s.send('-', 0);
        await s.begin('p2');
        await s.send('p2', 0, 2);
        await s.send('p2', 1, 2);
        await s.begin('c');
        await s.send('c', 0);
        await s.send('c', 1);
        await s.commit('c'); // committed inside both aborted ranges
        await s.send('p1', 0);
        await s.abort('p2');
        await s.abort('p1');
        await s.begin('c');
        await s.send('c', 0);
        await s.send('c', 1);
        await s.commit('c');
        await caughtUp(t);
        assert.deepEqual(
          sorted(await javaIds(t.source, 'read_committed')),
          sorted(s.committed),
          'a read_committed Java consumer of the source reads the committed records',
        );
        await assertShadows(s, t, alice.shadow, s.committed, s.aborted);
      } finally {
        await s.tx.close();
      }
    }));

  test('layout (b) and aborts spanning fetch boundaries: a fetch that starts inside an aborted range, and aborted ranges larger than one fetch, leak nothing', () =>
    withSplit(h, async (topo, engines) => {
      const t = topo as KafkaTopology;
      const alice = t.route('alice', { [USER]: 'alice' });
      await running(engines.track(engine(t)), 1, [alice]);
      const s = new Script(t);
      try {
        // Partition 0, layout (b): p1 aborts while p2 is open, so the engine's fetch stops at p2's
        // first record (the last stable offset). The next fetch starts there and gets p1's
        // range (finished, its marker still ahead) before p2's.
        await s.begin('p1');
        await s.send('p1', 0, 3);
        await s.begin('p2');
        const [open] = await s.send('p2', 0);
        await s.abort('p1');
        await waitFor(
          'the splitter read up to the open transaction',
          () => splitterAt(t, 0),
          (o) => o === open?.toString(),
          30_000,
        );
        await s.send('p2', 0);
        await s.abort('p2');
        await s.begin('c');
        await s.send('c', 0);
        await s.commit('c');
        // Partition 2: 300 KB records, so one fetch (1 MiB a partition) holds three. p3's aborted
        // range spans several fetches; p5 begins inside it and aborts first.
        const big = 300_000;
        await s.begin('p3');
        await s.send('p3', 2, 3, big);
        await s.begin('p4');
        await s.send('p4', 2, 1, big);
        await s.send('p3', 2, 3, big);
        await s.begin('p5');
        await s.send('p5', 2, 1);
        await s.abort('p5');
        await s.abort('p3');
        await s.send('p4', 2, 1, big);
        await s.commit('p4');
        await s.send('-', 2);
        await caughtUp(t);
        assert.deepEqual(
          sorted(await javaIds(t.source, 'read_committed')),
          sorted(s.committed),
          'a read_committed Java consumer of the source reads the committed records',
        );
        await assertShadows(s, t, alice.shadow, s.committed, s.aborted);
      } finally {
        await s.tx.close();
      }
    }));

  test('isolationLevel read_uncommitted: the source is read as such an application reads it, aborted records included', () =>
    withSplit(h, async (topo, engines) => {
      const t = topo as KafkaTopology;
      const alice = t.route('alice', { [USER]: 'alice' });
      await running(engines.track(engine(t, { isolationLevel: 'read_uncommitted' })), 1, [alice]);
      const s = new Script(t);
      try {
        await s.begin('p1');
        await s.send('p1', 0, 2);
        await s.send('p1', 1, 2);
        await s.begin('c');
        await s.send('c', 0, 2);
        await s.commit('c');
        await s.abort('p1');
        await s.send('-', 1);
        await caughtUp(t);
        const everything = await javaIds(t.source, 'read_uncommitted');
        assert.deepEqual(
          sorted(everything),
          sorted([...s.committed, ...s.aborted]),
          'the source as read_uncommitted',
        );
        await assertShadows(s, t, alice.shadow, everything, []);
      } finally {
        await s.tx.close();
      }
    }));
});
