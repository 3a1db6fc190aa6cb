// The http mode's own hop (sidecar/delivery/http.ts), in one process against a local handler that
// answers 200 at once, as the developer's handler on the same machine: one POST after the other,
// as one lane delivers (the session stream keeps a lane's order, so its POSTs never overlap):
//   fresh       a new TCP connection per POST (`agent: false`, what http mode did before)
//   keep-alive  the HttpDeliverer, its sockets kept alive (./delivery/keepAlive.ts)
// Per POST: p50/p99 of its duration (request → status), and the lane's maximum (POSTs/s one after
// the other). Rounds interleave; medians over the rounds, keep-alive / fresh ratios.
//
//   npx tsx test/bench/http-delivery.bench.ts [posts-per-round] [rounds]
//
// Prints a table and one JSON line (also bench-results/http-delivery.json).
import * as http from 'node:http';
import type { AddressInfo } from 'node:net';
import { Writable } from 'node:stream';
import type { ShadowMessage } from '../../core/shadowMessage';
import { cloudEventHeaders } from '../../sidecar/delivery/cloudEvents';
import { HttpDeliverer } from '../../sidecar/delivery/http';
import { Reporter } from '../../sidecar/output';
import { median } from './stats';
import { benchRun } from './support/benchRun';

const perRound = Number(process.argv[2] ?? 2000);
const rounds = Number(process.argv[3] ?? 3);
const silent = new Reporter(
  new Writable({ write: (_c, _e, done) => done() }),
  new Writable({ write: (_c, _e, done) => done() }),
);
const source = { namespace: 'team', workload: 'app', queue: 'orders' };

const message = (n: number): ShadowMessage => ({
  queue: 'orders',
  id: `m-${n}`,
  body: Buffer.alloc(512, 'x'),
  time: new Date(),
  headers: [{ name: 'x-queue-split-user', value: Buffer.from('alice') }],
  filterHeaders: new Map([['x-queue-split-user', 'alice']]),
  broker: { provider: 'rabbitmq', properties: {}, redelivered: false },
});

/** The former http mode's attempt: one POST on a new connection. */
function freshPost(target: URL, m: ShadowMessage): Promise<boolean> {
  return new Promise((resolve) => {
    const headers = { ...cloudEventHeaders(m, source), 'content-length': String(m.body.length) };
    const req = http.request(target, { method: 'POST', headers, agent: false }, (res) => {
      res.resume();
      resolve((res.statusCode ?? 0) < 300);
    });
    req.on('error', () => resolve(false));
    req.end(m.body);
  });
}

const pct = (xs: number[], p: number) => {
  const s = [...xs].sort((a, b) => a - b);
  return s[Math.min(s.length - 1, Math.ceil((p / 100) * s.length) - 1)]!;
};

interface Round {
  p50: number;
  p99: number;
  perSecond: number;
}

async function round(post: (m: ShadowMessage) => Promise<boolean>): Promise<Round> {
  const durations: number[] = [];
  const started = process.hrtime.bigint();
  for (let n = 0; n < perRound; n++) {
    const t = process.hrtime.bigint();
    if (!(await post(message(n)))) throw new Error(`POST ${n} failed`);
    durations.push(Number(process.hrtime.bigint() - t) / 1e6);
  }
  const seconds = Number(process.hrtime.bigint() - started) / 1e9;
  return { p50: pct(durations, 50), p99: pct(durations, 99), perSecond: perRound / seconds };
}

async function main(): Promise<void> {
  const bench = benchRun('http-delivery');
  const server = http.createServer((req, res) => {
    req.resume();
    req.on('end', () => res.writeHead(200).end());
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const target = new URL(`http://127.0.0.1:${(server.address() as AddressInfo).port}/`);
  const deliverer = new HttpDeliverer({ target, source: () => source, timeoutMs: 0, reporter: silent });
  const never = new AbortController().signal;
  const keepAlive = async (m: ShadowMessage) => (await deliverer.attempt(m, never)).ok;
  const fresh = (m: ShadowMessage) => freshPost(target, m);
  await round(fresh); // warm-up: JIT, the first connections
  await round(keepAlive);
  const results: Record<'fresh' | 'keep-alive', Round[]> = { fresh: [], 'keep-alive': [] };
  for (let r = 0; r < rounds; r++) {
    results.fresh.push(await round(fresh));
    results['keep-alive'].push(await round(keepAlive));
  }
  await deliverer.close();
  server.close();

  const summary = Object.fromEntries(
    Object.entries(results).map(([name, rs]) => [
      name,
      {
        p50Ms: Number(median(rs.map((x) => x.p50)).toFixed(3)),
        p99Ms: Number(median(rs.map((x) => x.p99)).toFixed(3)),
        perSecond: Math.round(median(rs.map((x) => x.perSecond))),
      },
    ]),
  ) as Record<'fresh' | 'keep-alive', { p50Ms: number; p99Ms: number; perSecond: number }>;
  console.log(`\nOne lane's POSTs, one after the other (${perRound} per round, median of ${rounds} rounds)`);
  console.log(
    `${'connection'.padEnd(11)} ${'p50 ms'.padStart(8)} ${'p99 ms'.padStart(8)} ${'POSTs/s'.padStart(8)}`,
  );
  for (const [name, s] of Object.entries(summary))
    console.log(
      `${name.padEnd(11)} ${s.p50Ms.toFixed(3).padStart(8)} ${s.p99Ms.toFixed(3).padStart(8)} ${String(s.perSecond).padStart(8)}`,
    );
  const ratios = {
    p50: Number((summary['keep-alive'].p50Ms / summary.fresh.p50Ms).toFixed(2)),
    p99: Number((summary['keep-alive'].p99Ms / summary.fresh.p99Ms).toFixed(2)),
    perSecond: Number((summary['keep-alive'].perSecond / summary.fresh.perSecond).toFixed(2)),
  };
  console.log(`keep-alive / fresh: p50 ×${ratios.p50}, p99 ×${ratios.p99}, POSTs/s ×${ratios.perSecond}`);
  bench.finish({ bench: 'http-delivery', perRound, rounds, summary, ratios });
}

main().catch((err: unknown) => {
  console.error(
    `http-delivery bench FAILED: ${err instanceof Error ? (err.stack ?? err.message) : String(err)}`,
  );
  process.exit(1);
});
