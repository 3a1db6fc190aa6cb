// Records per transaction (the pump's chunk, `prefetch`) against throughput, in one process,
// against the broker from `npm run env:up`: the workload of kafka-engine.bench.ts (1 KiB
// records, 3 partitions, 2 routes + the application shadow) through the engine at each chunk
// size, interleaved so drift on a shared machine hits every size alike. The pump's commits are
// pipelined (agent/kafka/pump.ts): a crash duplicates at most the last committed chunk, so the
// chunk size is the bound on duplicates per crash that the README states.
//
//   npx tsx test/bench/kafka-chunk.bench.ts [records-per-run] [runs]
//
// Prints a table (median records/s and its ratio to the baseline, today's default) and one JSON
// line. Bounded: stops starting rounds after 150 s.
import { DEFAULT_PREFETCH } from '../../agent/kafka/config';
import { engineRun, median, partitions } from './kafkaBench';
import { benchRun } from './support/benchRun';

const perRun = Number(process.argv[2] ?? 20_000);
const runs = Number(process.argv[3] ?? 3);
const budgetMs = 150_000;
const SIZES = [100, 250, 500, 1000, 2000];
const BASELINE = 2000;

async function main(): Promise<void> {
  const recorder = benchRun('kafka-chunk');
  const deadline = Date.now() + budgetMs;
  const rates = new Map<number, number[]>(SIZES.map((s) => [s, []]));
  for (let i = 0; i < runs && Date.now() < deadline; i++) {
    for (const size of SIZES) rates.get(size)!.push(await engineRun(perRun, size));
  }
  const base = median(rates.get(BASELINE)!);
  console.log(
    `records per run: ${perRun} (1 KiB, ${partitions} partitions, 2 routes + app), runs: ${rates.get(BASELINE)!.length}, default chunk: ${DEFAULT_PREFETCH}`,
  );
  console.log('chunk   median rec/s   vs ' + `${BASELINE}`.padEnd(6) + ' dup bound/crash   runs (rec/s)');
  const rows = SIZES.map((size) => {
    const m = median(rates.get(size)!);
    console.log(
      `${String(size).padStart(5)}   ${m.toFixed(0).padStart(12)}   ${(m / base).toFixed(2).padStart(6)}   ${String(size).padStart(15)}   ${rates
        .get(size)!
        .map((r) => r.toFixed(0))
        .join(' ')}`,
    );
    return {
      chunk: size,
      msgsPerSec: Math.round(m),
      ratio: Number((m / base).toFixed(3)),
      duplicateBound: size,
    };
  });
  recorder.finish({
    bench: 'kafka-chunk',
    client: 'kafkajs 2.2.4',
    messageBytes: 1024,
    partitions,
    routes: 2,
    perRun,
    runs: rates.get(BASELINE)!.length,
    baseline: BASELINE,
    rows,
  });
}

main().catch((err: unknown) => {
  console.error(err);
  process.exit(1);
});
