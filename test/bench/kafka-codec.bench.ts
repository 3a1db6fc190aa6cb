// Compression of copies: the engine writes each copy with its source batch's
// codec (agent/kafka/DECISIONS.md, "Compression"). Per source codec, in one process against the
// broker from `npm run env:up`: copy throughput and the bytes the copies take on the shadows'
// log segments, for compressible 1 KiB bodies (JSON-like orders) that the Java client wrote
// with that codec (its defaults: batches of up to 16 KiB, linger 5 ms), the workload of
// kafka-engine.bench.ts (3 partitions, 2 routes + the application shadow), runs interleaved
// across codecs so drift on a shared machine hits each alike. Ratios are against uncompressed.
//
//   npx tsx test/bench/kafka-codec.bench.ts [records-per-run] [runs]
//
// Prints a table and one JSON line. Bounded: stops starting rounds after 240 s.
import { copyCodec, type Codec } from '../../core/providers/kafka/codecs';
import { topicBytes } from '../conformance/kafka/logSegments';
import { engineRun, median, partitions } from './kafkaBench';
import { benchRun } from './support/benchRun';

const perRun = Number(process.argv[2] ?? 10_000);
const runs = Number(process.argv[3] ?? 3);
const budgetMs = 240_000;
const CODECS: readonly Codec[] = ['none', 'gzip', 'snappy', 'lz4', 'zstd'];

/** A 1 KiB order: repetitive field names and values, as application payloads usually are. */
function order(i: number): Buffer {
  const lines = Array.from({ length: 6 }, (_, k) => ({
    sku: `SKU-${(i * 7 + k) % 113}`,
    qty: (i + k) % 5,
    price: ((i * 13 + k) % 997) / 10,
  }));
  const text = JSON.stringify({
    orderId: `order-${i}`,
    customer: `customer-${i % 211}`,
    status: ['PAID', 'SHIPPED', 'NEW'][i % 3],
    createdAt: new Date(1_700_000_000_000 + i * 1000).toISOString(),
    lines,
    note: 'deliver to the back door; call ahead; fragile items inside, keep upright',
  });
  return Buffer.from(text.padEnd(1024, ' '));
}

async function main(): Promise<void> {
  const recorder = benchRun('kafka-codec');
  const deadline = Date.now() + budgetMs;
  const rates = new Map<Codec, number[]>(CODECS.map((c) => [c, []]));
  const bytes = new Map<Codec, number[]>(CODECS.map((c) => [c, []]));
  for (let i = 0; i < runs && Date.now() < deadline; i++) {
    for (const codec of CODECS) {
      const rate = await engineRun(perRun, undefined, { body: order, java: codec }, (shadows) =>
        bytes.get(codec)!.push(shadows.reduce((n, s) => n + topicBytes(s, partitions), 0)),
      );
      rates.get(codec)!.push(rate);
    }
  }
  const baseRate = median(rates.get('none')!);
  const baseBytes = median(bytes.get('none')!);
  console.log(
    `records per run: ${perRun} (1 KiB JSON-like, ${partitions} partitions, 2 routes + app), runs: ${rates.get('none')!.length}`,
  );
  console.log('source   copied as   median rec/s   vs none   shadow bytes   vs none   runs (rec/s)');
  const rows = CODECS.map((codec) => {
    const r = median(rates.get(codec)!);
    const b = median(bytes.get(codec)!);
    console.log(
      `${codec.padEnd(8)} ${copyCodec(codec).padEnd(11)} ${r.toFixed(0).padStart(12)}   ${(r / baseRate).toFixed(2).padStart(7)}   ${String(b).padStart(12)}   ${(b / baseBytes).toFixed(2).padStart(7)}   ${rates
        .get(codec)!
        .map((x) => x.toFixed(0))
        .join(' ')}`,
    );
    return {
      source: codec,
      copiedAs: copyCodec(codec),
      msgsPerSec: Math.round(r),
      rateVsNone: Number((r / baseRate).toFixed(3)),
      shadowBytes: b,
      bytesVsNone: Number((b / baseBytes).toFixed(3)),
      runs: rates.get(codec)!.map(Math.round),
    };
  });
  recorder.finish({
    bench: 'kafka-codec',
    client: 'kafkajs 2.2.4',
    node: process.version,
    messageBytes: 1024,
    partitions,
    routes: 2,
    perRun,
    runs: rates.get('none')!.length,
    rows,
  });
}

main().then(
  () => process.exit(0),
  (err: unknown) => {
    console.error(err);
    process.exit(1);
  },
);
