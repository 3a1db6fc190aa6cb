// Prints the suite report's per-file table from the lines test/support/fileTiming.ts wrote:
// each file's wall time, the part spent in explicit waits (polls, rollouts, grace periods), the
// event loop's idle time and the test process's own CPU, slowest first.
//   tsx test/support/timingTable.ts <timing.jsonl> <suite> [--top N]
import * as fs from 'node:fs';
import { parseArgs } from 'node:util';

interface FileTiming {
  file: string;
  wallMs: number;
  waitMs: number;
  waits: number;
  idleMs: number;
  cpuMs: number;
}

const { values, positionals } = parseArgs({ allowPositionals: true, options: { top: { type: 'string' } } });
const [input, suite = ''] = positionals;
// Cut here rather than by `| head`, which closes the pipe under a process still writing (EPIPE).
const top = values.top !== undefined ? Number(values.top) : Infinity;
if (!input || !fs.existsSync(input)) {
  console.log(`(no per-file timing for ${suite}: ${input ?? 'no file named'} is missing)`);
  process.exit(0);
}
const rows = fs
  .readFileSync(input, 'utf8')
  .split('\n')
  .filter((l) => l.trim() !== '')
  .map((l) => JSON.parse(l) as FileTiming)
  .sort((a, b) => b.wallMs - a.wallMs);
const shown = rows.slice(0, top);
const s = (ms: number) => (ms / 1000).toFixed(1);
const pct = (part: number, whole: number) => (whole > 0 ? `${Math.round((100 * part) / whole)}%` : '-');
const table = shown.map((r) => [
  r.file,
  s(r.wallMs),
  s(r.waitMs),
  pct(r.waitMs, r.wallMs),
  String(r.waits),
  pct(r.idleMs, r.wallMs),
  s(r.cpuMs),
]);
const total = rows.reduce(
  (t, r) => ({
    wall: t.wall + r.wallMs,
    wait: t.wait + r.waitMs,
    idle: t.idle + r.idleMs,
    cpu: t.cpu + r.cpuMs,
    waits: t.waits + r.waits,
  }),
  { wall: 0, wait: 0, idle: 0, cpu: 0, waits: 0 },
);
table.push([
  `total (${rows.length} files, summed)`,
  s(total.wall),
  s(total.wait),
  pct(total.wait, total.wall),
  String(total.waits),
  pct(total.idle, total.wall),
  s(total.cpu),
]);
const head = ['file', 'wall s', 'in waits s', 'waits %', 'waits', 'loop idle %', 'cpu s'];
const widths = head.map((h, i) => Math.max(h.length, ...table.map((r) => r[i]!.length)));
const line = (r: string[]) =>
  r.map((c, i) => (i === 0 ? c.padEnd(widths[i]!) : c.padStart(widths[i]!))).join('  ');
console.log(`\n=== ${suite}: time per test file (test/support/fileTiming.ts)`);
console.log(line(head));
for (const r of table) console.log(line(r));
