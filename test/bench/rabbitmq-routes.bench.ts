// Route scale on one RabbitMQ queue (issue 33 item 4): 1, 10, 100 and 1,000 routes attached.
//   (i)   throughput: the RabbitMQ engine copying a prefilled classic source (1 KiB persistent
//         messages, a third to the application shadow, the rest spread evenly over the routes:
//         `x-queue-split-user: user-<i mod routes>`), in one process, route counts interleaved
//         per round; reported as messages/s and relative to 1 route.
//   (ii)  match cost: RouteIndex.match per message (a new MessageView each, as the engines make
//         one) over the same route sets and message mix, CPU only, relative to 1 route.
//   (iii) the broker's part: confirmed publishes by hand (amqplib), the same message mix, through
//         the two routing shapes: one fanout exchange per destination, as the engine routes
//         (agent/rabbitmq/routing.ts), and the single headers exchange with one
//         `x-match: all-with-x` binding per destination that earlier agents used (the broker
//         matches every binding per publish), both with the producer's routing key; and, as the
//         ceiling of any routing, straight to each queue through the default exchange (the
//         queue's name as the routing key, which a copy cannot use: it must keep the producer's).
//   (iv)  memory: the real queue-agent process (test/bench/support/queueAgentProcess.ts) with 1
//         and with 1,000 routes ACTIVE on one queue, before and after copying a backlog; and
//         with 1,000 routes with --enable-source-maps.
//
//   npx tsx test/bench/rabbitmq-routes.bench.ts [messages-per-run] [runs]
//
// Prints a table and one JSON line. Bounded: stops starting rounds after 300 s.
import { MessageView, parseFilter } from '../../core/filter';
import { RouteIndex } from '../../core/routeIndex';
import type { RouteSpec } from '../../agent/engine/contract';
import { uniqueName } from '../support/services';
import { median } from './stats';
import { benchRun } from './support/benchRun';
import { RouteNames } from '../../agent/rabbitmq/routing';
import { drop, engineThroughput, prefill, USER_HEADER, withConnection } from './support/rabbitBench';
import { queueAgentMemory, type AgentMemory } from './support/queueAgentProcess';

const perRun = Number(process.argv[2] ?? 6000);
const runs = Number(process.argv[3] ?? 5);
const budgetMs = 300_000;
const ROUTE_COUNTS = [1, 10, 100, 1000] as const;
const MATCH_MESSAGES = 200_000;
/** The header the earlier single headers exchange routed on. */
const HEADERS_ROUTE = 'x-queue-split-to';
type RoutingShape = 'fanout' | 'headers' | 'default';

/** Message i's user: a third go to the app (no route matches), the rest spread over the routes. */
const userOf = (routes: number) => (i: number) => (i % 3 === 2 ? `nobody-${i}` : `user-${i % routes}`);

function routeSpecs(routes: number, shadowOf: (k: number) => string): RouteSpec[] {
  return Array.from({ length: routes }, (_, k) => ({
    routeId: `r${k}`,
    filter: { [USER_HEADER]: `user-${k}` },
    shadow: shadowOf(k),
  }));
}

async function throughputRun(routes: number): Promise<number> {
  const base = uniqueName(`bench-routes-${routes}`);
  const source = `${base}-src`;
  const appShadow = `${base}-app`;
  const specs = routeSpecs(routes, (k) => `${base}-r${k}`);
  return withConnection(async (c) => {
    await prefill(c, [source], source, 'classic', perRun, userOf(routes));
    try {
      return await engineThroughput({ base, source, appShadow, routes: specs, count: perRun });
    } finally {
      // The engine's exchanges are named after the app shadow (agent/rabbitmq/routing.ts).
      await drop(c, [source, appShadow, `${base}-lock`, ...specs.map((r) => r.shadow)], [], appShadow);
    }
  });
}

/** Confirmed publishes per second to `routes` + 1 queues, routed in `shape`: through each
 * queue's own fanout exchange, through one headers exchange with a binding per queue, or by the
 * default exchange. */
async function routingRun(routes: number, shape: RoutingShape): Promise<number> {
  const base = uniqueName(`bench-routing-${shape}-${routes}`);
  const queues = [`${base}-app`, ...Array.from({ length: routes }, (_, k) => `${base}-r${k}`)];
  const names = new RouteNames(base);
  const exchangeOf = (q: string) =>
    shape === 'fanout' ? names.exchangeFor(q) : shape === 'headers' ? base : '';
  return withConnection(async (c) => {
    const ch = await c.createConfirmChannel();
    try {
      if (shape === 'headers') await ch.assertExchange(base, 'headers', { durable: true, autoDelete: false });
      for (const q of queues) {
        await ch.assertQueue(q, { durable: true, arguments: { 'x-queue-type': 'classic' } });
        if (shape === 'fanout') {
          await ch.assertExchange(exchangeOf(q), 'fanout', { durable: true, autoDelete: false });
          await ch.bindQueue(q, exchangeOf(q), '');
        } else if (shape === 'headers')
          await ch.bindQueue(q, base, '', { 'x-match': 'all-with-x', [HEADERS_ROUTE]: q });
      }
      const body = Buffer.alloc(1024, 'x');
      const started = process.hrtime.bigint();
      for (let i = 0; i < perRun; i++) {
        const to = i % 3 === 2 ? queues[0]! : queues[1 + (i % routes)]!;
        const ok = ch.publish(exchangeOf(to), shape === 'default' ? to : 'orders.created', body, {
          persistent: true,
          mandatory: true,
          headers: shape === 'fanout' ? { [USER_HEADER]: 'u' } : { [USER_HEADER]: 'u', [HEADERS_ROUTE]: to },
        });
        if (!ok) await new Promise((r) => ch.once('drain', r));
        // The engine's window: its prefetch (200) of copies awaiting their confirm.
        if (i % 200 === 199) await ch.waitForConfirms();
      }
      await ch.waitForConfirms();
      return perRun / (Number(process.hrtime.bigint() - started) / 1e9);
    } finally {
      await ch.close().catch(() => undefined);
      await drop(c, queues, [base], `${base}.`);
    }
  });
}

/** Nanoseconds per message of RouteIndex.match with `routes` equality routes. */
function matchCost(routes: number): number {
  const built = RouteIndex.build(
    routeSpecs(routes, () => '').map((r) => {
      const parsed = parseFilter(r.filter);
      if (!parsed.ok) throw new Error(JSON.stringify(parsed.errors));
      return { routeId: r.routeId, filter: parsed.value };
    }),
  );
  if (!built.ok) throw new Error(JSON.stringify(built.errors.slice(0, 3)));
  const index = built.value;
  const user = userOf(routes);
  const messages = Array.from({ length: 3000 }, (_, i) => {
    const headers = new Map([
      ['content-type', 'application/json'],
      [USER_HEADER, user(i)],
    ]);
    return { headers, expected: i % 3 === 2 ? undefined : `r${i % routes}` };
  });
  const body = Buffer.alloc(1024, 'x');
  for (const m of messages) {
    const got = index.match(new MessageView(m.headers, body));
    if (got !== m.expected)
      throw new Error(`${m.headers.get(USER_HEADER)} matched ${got}, not ${m.expected}`);
  }
  let hits = 0;
  const t = process.hrtime.bigint();
  for (let i = 0; i < MATCH_MESSAGES; i++) {
    const m = messages[i % messages.length]!;
    if (index.match(new MessageView(m.headers, body)) !== undefined) hits++;
  }
  const ns = Number(process.hrtime.bigint() - t) / MATCH_MESSAGES;
  if (hits < 0) console.log(hits); // keeps the loop's work observable
  return ns;
}

async function main(): Promise<void> {
  const recorder = benchRun('rabbitmq-routes');
  const deadline = Date.now() + budgetMs;
  const rates = new Map<number, number[]>(ROUTE_COUNTS.map((n) => [n, []]));
  const matchNs = new Map<number, number[]>(ROUTE_COUNTS.map((n) => [n, []]));
  const routing = new Map<number, number[]>(ROUTE_COUNTS.map((n) => [n, []]));
  const headersRouting = new Map<number, number[]>(ROUTE_COUNTS.map((n) => [n, []]));
  const defaultRouting = new Map<number, number[]>(ROUTE_COUNTS.map((n) => [n, []]));
  for (const n of ROUTE_COUNTS) matchCost(n); // warm-up: compiles every filter once
  for (let i = 0; i < runs && Date.now() < deadline; i++) {
    // Interleaved so drift on a shared machine hits every route count alike.
    for (const n of ROUTE_COUNTS) {
      rates.get(n)!.push(await throughputRun(n));
      matchNs.get(n)!.push(matchCost(n));
      routing.get(n)!.push(await routingRun(n, 'fanout'));
      headersRouting.get(n)!.push(await routingRun(n, 'headers'));
      defaultRouting.get(n)!.push(await routingRun(n, 'default'));
    }
  }
  const memory: AgentMemory[] = [];
  for (const n of [1, 1000]) memory.push(await queueAgentMemory(n, perRun));
  // And with source maps, to show what --enable-source-maps (not in deploy/Dockerfile) costs.
  memory.push(await queueAgentMemory(1000, perRun, ['--enable-source-maps']));

  const one = median(rates.get(1)!);
  const oneMatch = median(matchNs.get(1)!);
  const oneRouting = median(routing.get(1)!);
  const oneHeaders = median(headersRouting.get(1)!);
  const oneDefault = median(defaultRouting.get(1)!);
  console.log(
    `messages per run: ${perRun} (1 KiB, persistent, classic; a third to the app), runs: ${rates.get(1)!.length}`,
  );
  console.log(
    'routes   engine msg/s   vs 1 route   match ns/msg   vs 1 route   fanout exchanges msg/s   vs 1 route   headers exchange msg/s   vs 1 route   default exchange msg/s   vs 1 route   engine runs (msg/s)',
  );
  const rows = ROUTE_COUNTS.map((n) => {
    const r = median(rates.get(n)!);
    const m = median(matchNs.get(n)!);
    const x = median(routing.get(n)!);
    const hx = median(headersRouting.get(n)!);
    const dx = median(defaultRouting.get(n)!);
    console.log(
      `${String(n).padStart(6)}   ${r.toFixed(0).padStart(12)}   ${(r / one).toFixed(2).padStart(10)}   ${m.toFixed(0).padStart(12)}   ${(m / oneMatch).toFixed(2).padStart(10)}   ${x.toFixed(0).padStart(22)}   ${(x / oneRouting).toFixed(2).padStart(10)}   ${hx.toFixed(0).padStart(22)}   ${(hx / oneHeaders).toFixed(2).padStart(10)}   ${dx.toFixed(0).padStart(22)}   ${(dx / oneDefault).toFixed(2).padStart(10)}   ${rates
        .get(n)!
        .map((x) => x.toFixed(0))
        .join(' ')}`,
    );
    return {
      routes: n,
      msgsPerSec: Math.round(r),
      ratio: Number((r / one).toFixed(3)),
      matchNsPerMessage: Number(m.toFixed(1)),
      matchRatio: Number((m / oneMatch).toFixed(2)),
      fanoutExchangesMsgsPerSec: Math.round(x),
      fanoutExchangesRatio: Number((x / oneRouting).toFixed(3)),
      headersExchangeMsgsPerSec: Math.round(hx),
      headersExchangeRatio: Number((hx / oneHeaders).toFixed(3)),
      defaultExchangeMsgsPerSec: Math.round(dx),
      defaultExchangeRatio: Number((dx / oneDefault).toFixed(3)),
      runs: rates.get(n)!.map(Math.round),
    };
  });
  console.log('queue-agent process (node dist/agent.js queue-agent), RSS in MiB:');
  console.log(
    'routes   started   routes ACTIVE   after backlog   peak (VmHWM)   V8 heap used/total, external (ACTIVE)   node flags',
  );
  for (const m of memory) {
    const heap = m.activeHeap
      ? `${m.activeHeap.usedMiB.toFixed(0)}/${m.activeHeap.totalMiB.toFixed(0)}, ${m.activeHeap.externalMiB.toFixed(0)}`
      : '?';
    console.log(
      `${String(m.routes).padStart(6)}   ${m.startedMiB.toFixed(0).padStart(7)}   ${m.activeMiB.toFixed(0).padStart(13)}   ${m.afterBacklogMiB.toFixed(0).padStart(13)}   ${m.peakMiB.toFixed(0).padStart(12)}   ${heap.padEnd(37)}   ${m.nodeFlags.join(' ') || '(none)'}`,
    );
  }
  recorder.finish({
    bench: 'rabbitmq-routes',
    messageBytes: 1024,
    sourceType: 'classic',
    perRun,
    runs: rates.get(1)!.length,
    rows,
    agentMemory: memory,
  });
}

main().then(
  () => process.exit(0),
  (err: unknown) => {
    console.error(err);
    process.exit(1);
  },
);
