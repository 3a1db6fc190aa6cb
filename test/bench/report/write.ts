// Renders bench-results/index.html from whatever bench-results/*.json exist (the last step of
// `npm run bench`; test/bench/report/render.ts draws it). Open the file in a browser.
//
//   npx tsx test/bench/report/write.ts
import * as fs from 'node:fs';
import * as path from 'node:path';
import { RESULTS_DIR } from '../support/benchRun';
import { renderReport, type BenchJson } from './render';

const results = new Map<string, BenchJson>();
if (fs.existsSync(RESULTS_DIR)) {
  for (const file of fs
    .readdirSync(RESULTS_DIR)
    .filter((f) => f.endsWith('.json'))
    .sort()) {
    const parsed = JSON.parse(fs.readFileSync(path.join(RESULTS_DIR, file), 'utf8')) as unknown;
    if (typeof parsed === 'object' && parsed !== null && typeof (parsed as BenchJson).bench === 'string')
      results.set((parsed as BenchJson).bench, parsed as BenchJson);
    else console.error(`${file}: not a bench result (no "bench" name), left out`);
  }
}
fs.mkdirSync(RESULTS_DIR, { recursive: true });
const out = path.join(RESULTS_DIR, 'index.html');
fs.writeFileSync(out, renderReport(results, new Date().toISOString()));
console.log(`bench report: ${out} (${results.size} benches; open it in a browser)`);
