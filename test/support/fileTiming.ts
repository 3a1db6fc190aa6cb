// Where a test file's time goes (the suite report, test/suite.sh): loaded into every test file's
// process with `--import`, it appends one JSON line per file to $QS_TIMING_FILE at exit:
//   wallMs   the file's process from start to exit
//   waitMs   time inside explicit waits (pollUntil, waitForGone, sleep from test/support/poll.ts,
//            and anything wrapped in `waiting`): polls, rollouts, grace periods; overlapping
//            waits count once
//   idleMs   event-loop idle time: waiting on anything (brokers, the API server, timers)
//   cpuMs    CPU of the test process itself (the work done in brokers and pods is elsewhere)
//   topWaits the labelled waits that took longest, summed per label (a label's waits may
//            overlap other waits): what to look at first when a file is slow
// Outside a test file's process (the runner itself), or without $QS_TIMING_FILE, it does nothing.
import * as fs from 'node:fs';
import * as path from 'node:path';
import { performance } from 'node:perf_hooks';

interface WaitClock {
  active: number;
  since: number;
  totalMs: number;
  count: number;
  byLabel: Map<string, number>;
}

// One clock per process, shared by every copy of this module the loaders may create.
const KEY = Symbol.for('queuesplit.test.waitClock');
const holder = globalThis as typeof globalThis & { [KEY]?: WaitClock };
const clock: WaitClock = (holder[KEY] ??= { active: 0, since: 0, totalMs: 0, count: 0, byLabel: new Map() });

/** Counts the time until `work` settles as waiting (nested and parallel waits count once). */
export async function waiting<T>(work: () => Promise<T>, label?: string): Promise<T> {
  const started = performance.now();
  if (clock.active++ === 0) clock.since = started;
  clock.count++;
  try {
    return await work();
  } finally {
    const now = performance.now();
    if (--clock.active === 0) clock.totalMs += now - clock.since;
    // Digits vary per call ("12 of 40 messages"): one label per kind of wait.
    if (label !== undefined) {
      const kind = label.replace(/\d+/g, 'N').slice(0, 120);
      clock.byLabel.set(kind, (clock.byLabel.get(kind) ?? 0) + now - started);
    }
  }
}

const target = process.env.QS_TIMING_FILE;
// The runner sets NODE_TEST_CONTEXT in the processes it starts for each file.
const file = process.env.NODE_TEST_CONTEXT ? process.argv[1] : undefined;
if (target && file && !(KEY.description! + ':exit' in holder)) {
  Object.defineProperty(holder, KEY.description! + ':exit', { value: true });
  const cpuStart = process.cpuUsage();
  process.on('exit', () => {
    const waitMs = clock.totalMs + (clock.active > 0 ? performance.now() - clock.since : 0);
    const elu = performance.eventLoopUtilization();
    const cpu = process.cpuUsage(cpuStart);
    const line = {
      file: path.relative(process.cwd(), file),
      wallMs: Math.round(performance.now()),
      waitMs: Math.round(waitMs),
      waits: clock.count,
      idleMs: Math.round(elu.idle),
      cpuMs: Math.round((cpu.user + cpu.system) / 1000),
      topWaits: [...clock.byLabel]
        .sort((a, b) => b[1] - a[1])
        .slice(0, 8)
        .map(([label, ms]) => ({ label, ms: Math.round(ms) })),
    };
    fs.mkdirSync(path.dirname(target), { recursive: true });
    fs.appendFileSync(target, `${JSON.stringify(line)}\n`);
  });
}
