// Compressed source batches (agent/kafka/DECISIONS.md, "Compression"). A real foreign producer (the Apache Kafka Java
// client) writes batches in each codec it has; the engine must read them all, write its copies
// with the source batch's codec (agent/kafka/DECISIONS.md, "Compression"), and park a partition
// whose batch it cannot decompress instead of skipping it. The codec of each shadow batch is read
// from the broker's own log segment files (the record batch header's attributes), not through
// the engine's client.
import assert from 'node:assert/strict';
import { after, describe, test } from 'node:test';
import { CompressionCodecs, CompressionTypes, KafkaJSNotImplemented } from 'kafkajs';
import type { Engine } from '../../agent/engine/contract';
import type { KafkaEngineConfig } from '../../agent/kafka/config';
import { KafkaEngine } from '../../agent/kafka/engine';
import { loadServices } from '../support/services';
import { produceWithJava, type JavaCompression, type ForeignRecord } from './kafka/foreign';
import { kafkaHarness, type KafkaTopology } from './kafka/harness';
import { batchCodecs } from './kafka/logSegments';
import { ID_HEADER } from './kafka/messages';
import { USER } from './delivery';
import { running } from './steps';
import { testLogger, waitFor, withSplit } from './support';

const h = kafkaHarness();
after(() => h.close());
const brokers = loadServices().kafkaBrokers;
let made = 0;

function engine(t: KafkaTopology, overrides: Partial<KafkaEngineConfig> = {}): Engine {
  return new KafkaEngine({ ...h.config(t, `${t.label}-z${++made}`), ...overrides }, { logger: testLogger() });
}

const CODECS: readonly JavaCompression[] = ['none', 'gzip', 'snappy', 'lz4', 'zstd'];
/** Compressible 1 KiB bodies, tagged with the test's id header (and alice's for even ones). */
function records(t: KafkaTopology, partition: number, codec: string, n: number): ForeignRecord[] {
  return Array.from({ length: n }, (_, i) => ({
    partition,
    key: `k${i}`,
    value: `${codec} ${i} `.padEnd(1024, 'abcdefgh'),
    headers: [[ID_HEADER, `${t.label}-${codec}-${i}`], ...(i % 2 === 0 ? ([[USER, 'alice']] as const) : [])],
  }));
}
const idsOf = (rs: readonly ForeignRecord[]) => rs.map((r) => String(r.headers[0]![1]));
const sorted = (xs: readonly string[]) => [...xs].sort();

describe('Kafka compressed batches', { concurrency: 1 }, () => {
  test('case 9: batches compressed with gzip, snappy, lz4 and zstd by the Java client are read, and every copy keeps its source batch codec', () =>
    withSplit(h, async (topo, engines) => {
      const t = topo as KafkaTopology;
      // One partition per codec, so that each shadow partition's batches must all show it.
      await h.withAdmin((a) => a.createPartitions({ topicPartitions: [{ topic: t.source, count: 5 }] }));
      const alice = t.route('alice', { [USER]: 'alice' });
      const e = engines.track(engine(t));
      await running(e, 1, [alice]);
      // 150 KiB per partition: each copy batch spans several codec blocks (snappy 32 KiB, lz4
      // 60 KiB), which the broker decompresses to validate before it appends them.
      const sent = CODECS.map((codec, p) => records(t, p, codec, 150));
      CODECS.forEach((codec, p) => produceWithJava(brokers, t.source, sent[p]!, { compression: codec }));
      const all = sent.flat();
      const toAlice = all.filter((r) => r.headers.some(([k]) => k === USER));
      const toApp = all.filter((r) => !toAlice.includes(r));
      const [app, mine] = await Promise.all([
        h.read(t.appShadow, idsOf(toApp), 60_000),
        h.read(alice.shadow, idsOf(toAlice), 60_000),
      ]);
      // A shortfall names the codecs it hit and what the engine reported (CI keeps only the log).
      const missing = async (got: readonly { id: string }[], want: readonly ForeignRecord[]) => {
        const have = new Set(got.map((o) => o.id));
        const lost = CODECS.map((codec) => ({
          codec,
          missing: idsOf(want).filter((id) => id.startsWith(`${t.label}-${codec}-`) && !have.has(id)).length,
        })).filter((c) => c.missing > 0);
        return lost.length === 0
          ? ''
          : `${JSON.stringify(lost)}; engine status ${JSON.stringify(e.status())}; the splitter's committed offsets ${JSON.stringify(
              await h.withAdmin((a) => a.fetchOffsets({ groupId: t.splitterGroup, topics: [t.source] })),
            )}`;
      };
      assert.equal(await missing(app, toApp), '', 'the app got every record');
      assert.equal(await missing(mine, toAlice), '', 'alice got every record');
      assert.deepEqual(sorted(app.map((o) => o.id)), sorted(idsOf(toApp)), 'the app got each record once');
      assert.deepEqual(sorted(mine.map((o) => o.id)), sorted(idsOf(toAlice)), 'alice got each record once');
      for (const o of [...app, ...mine]) assert.equal(o.body.length, 1024, `${o.id}: body intact`);
      for (const [p, codec] of CODECS.entries()) {
        // Every codec is written back as itself: zstd with zlib on Node ≥ 22.15, WebAssembly below.
        for (const shadow of [t.appShadow, alice.shadow]) {
          const seen = batchCodecs(shadow, p);
          assert.ok(seen.length > 0, `${shadow}/${p} has data batches`);
          assert.deepEqual(
            [...new Set(seen)],
            [codec],
            `${shadow}/${p}: copies of ${codec} batches are written with ${codec}`,
          );
        }
      }
      assert.equal(await h.backlog(t.source), 0, 'the splitter committed past every record');
    }));

  test('case 9: a batch the engine cannot decompress parks its partition, reports DEGRADED naming topic/partition/offset and codec, and is copied once it can be', () =>
    withSplit(h, async (topo, engines) => {
      const t = topo as KafkaTopology;
      // No zstd decoder: kafkajs' own state for a codec nobody registered (what main had).
      const registered = CompressionCodecs[CompressionTypes.ZSTD];
      CompressionCodecs[CompressionTypes.ZSTD] = () => {
        // kafkajs' types declare no constructor argument; its code takes the message.
        throw new (KafkaJSNotImplemented as unknown as new (m: string) => Error)(
          'ZSTD compression not implemented',
        );
      };
      try {
        const e = engines.track(engine(t, { timing: { ...h.config(t, 'x').timing, retryMaxMs: 1_000 } }));
        await running(e, 1, []);
        const before = records(t, 1, 'before', 3).map((r) => ({ ...r, headers: [r.headers[0]!] }));
        const zstd = records(t, 1, 'zstd', 5).map((r) => ({ ...r, headers: [r.headers[0]!] }));
        const others = [0, 2].flatMap((p) =>
          records(t, p, `gzip-p${p}`, 5).map((r) => ({ ...r, headers: [r.headers[0]!] })),
        );
        produceWithJava(brokers, t.source, before, { compression: 'gzip' });
        produceWithJava(brokers, t.source, zstd, { compression: 'zstd' });
        produceWithJava(brokers, t.source, others, { compression: 'gzip' });
        const got = await h.read(t.appShadow, idsOf([...before, ...others]), 60_000);
        assert.deepEqual(
          sorted(got.map((o) => o.id)),
          sorted(idsOf([...before, ...others])),
          'the other partitions, and partition 1 up to the batch, go on',
        );
        const conditions = await waitFor(
          'the undecodable batch reported',
          async () => e.status().conditions,
          (c) => c.length === 1,
          60_000,
        );
        assert.equal(e.status().health, 'degraded');
        assert.match(
          conditions[0]!.reason,
          new RegExp(`^the record at ${t.source}/1@3 cannot be copied: ZSTD compression not implemented`),
        );
        assert.equal(
          (
            await h.withAdmin((a) => a.fetchOffsets({ groupId: t.splitterGroup, topics: [t.source] }))
          )[0]!.partitions.find((p) => p.partition === 1)?.offset,
          '3',
          'the splitter commits partition 1 only up to the batch: nothing of it is skipped',
        );
        CompressionCodecs[CompressionTypes.ZSTD] = registered;
        const later = await h.read(t.appShadow, idsOf(zstd), 60_000);
        assert.deepEqual(
          later.map((o) => o.id),
          idsOf(zstd),
          'copied once readable, in order',
        );
        await waitFor(
          'the condition clears',
          async () => e.status().conditions,
          (c) => c.length === 0,
          60_000,
        );
      } finally {
        CompressionCodecs[CompressionTypes.ZSTD] = registered;
      }
    }));
});
