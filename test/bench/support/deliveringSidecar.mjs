// Stands in for dist/sidecar.js in test/bench/ui-redraw.bench.ts: says on stdout, in the sidecar
// line protocol (core/sidecarProtocol.ts), what a sidecar says while it delivers a steady stream —
// hello, active, ready, then one `delivered` line per message at QS_BENCH_LINES_PER_SECOND, each
// line its own write as the real one's Reporter does — and detaches on the stop request (stdin).
// Its arguments (the real sidecar's) are ignored. Plain JavaScript: the extension runs it with
// a bare Node, as it runs the sidecar bundle.
import { performance } from 'node:perf_hooks';
import * as readline from 'node:readline';
import { clearInterval, setInterval } from 'node:timers';

const rate = Number(process.env.QS_BENCH_LINES_PER_SECOND ?? 1000);
const queues = (process.env.QS_BENCH_QUEUES ?? 'orders').split(',');
const split = { name: process.env.QS_BENCH_SPLIT ?? 'qs-bench', namespace: 'team-a', routeId: 'bench' };
const line = (message) =>
  process.stdout.write(`${JSON.stringify({ time: new Date().toISOString(), ...message })}\n`);

line({ type: 'hello', protocol: 1, version: 'bench', pid: process.pid, mode: 'http' });
line({ type: 'progress', stage: 'active', message: 'Active', split, phase: 'Active' });
line({
  type: 'ready',
  mode: 'http',
  split,
  queues: queues.map((name) => ({
    name,
    provider: 'rabbitmq',
    via: 'agent',
    shadow: `${name}-shadow`,
    deliversTo: 'http://127.0.0.1:8080/',
  })),
  env: {},
  secretEnv: [],
});

const started = performance.now();
let sent = 0;
const delivered = Object.fromEntries(queues.map((q) => [q, 0]));
const timer = setInterval(() => {
  const due = Math.floor(((performance.now() - started) * rate) / 1000);
  for (; sent < due; sent++) {
    const queue = queues[sent % queues.length];
    delivered[queue] += 1;
    line({
      type: 'delivered',
      queue,
      messageId: `m-${sent}`,
      attempts: 1,
      counts: { delivered: delivered[queue], failed: 0, rejected: 0 },
    });
  }
}, 1);

const stop = () => {
  clearInterval(timer);
  line({ type: 'detached', drained: true, message: 'Your route drained back to the app.' });
  process.exit(0);
};
readline.createInterface({ input: process.stdin }).on('line', (text) => {
  if (text.includes('"stop"')) stop();
});
process.stdin.on('end', stop);
