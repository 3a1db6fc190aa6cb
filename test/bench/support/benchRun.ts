// What every benchmark does around its measurement (issue 33's rules for benchmark work): print
// the load average when it starts and when it ends, so a reader sees how busy the shared machine
// was, then print its one JSON line and keep it in bench-results/<bench>.json, which
// test/bench/report/render.ts turns into bench-results/index.html.
import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';

/** Where the results go: bench-results/ at the repository's root (kept out of git). */
export const RESULTS_DIR = path.resolve(__dirname, '../../../bench-results');

/** One bench's result: its name and whatever numbers it reports. */
export type BenchResult = { readonly bench: string } & Record<string, unknown>;

export interface BenchRun {
  /** Prints the end load average and the JSON line, and writes bench-results/<bench>.json. */
  finish(result: BenchResult): void;
}

const load = () => os.loadavg().map((x) => Number(x.toFixed(2))) as [number, number, number];

/** Starts a bench run: prints the load average now. Call first thing in main(). */
export function benchRun(bench: string): BenchRun {
  const started = { at: new Date().toISOString(), load: load() };
  console.log(
    `${bench}: load average at start ${started.load.join(' ')} (1/5/15 min, ${os.cpus().length} cores)`,
  );
  return {
    finish(result) {
      const ended = { at: new Date().toISOString(), load: load() };
      console.log(`${bench}: load average at end ${ended.load.join(' ')}`);
      const line = JSON.stringify(result);
      console.log(line);
      const record = {
        ...result,
        loadAverage: { start: started.load, end: ended.load },
        startedAt: started.at,
        endedAt: ended.at,
      };
      fs.mkdirSync(RESULTS_DIR, { recursive: true });
      fs.writeFileSync(
        path.join(RESULTS_DIR, `${result.bench}.json`),
        `${JSON.stringify(record, null, 2)}\n`,
      );
    },
  };
}
