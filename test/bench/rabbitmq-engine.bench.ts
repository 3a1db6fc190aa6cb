// Throughput of the RabbitMQ engine beside a raw amqplib pipe doing the same minimum work
// (consume → confirmed mandatory publish → ack after the confirm), in one process, against
// the broker from `npm run env:up`. 1 KiB persistent messages, 2 routes (a third of the
// messages per route, a third to the application shadow), a prefilled source: classic, then
// quorum (the engine declares quorum shadows for a quorum source; the raw pipe's destinations
// are quorum too, so both pay the same durability).
// The raw pipe batches as well as amqplib lets it: the engine's prefetch, publishes pipelined
// under that window, and one `multiple` ack per event-loop turn for the longest run of
// confirmed deliveries (never past one still waiting for its confirm). A second raw pipe acks
// each delivery on its own confirm, as the engine's relay did before it batched its acks. A
// third batches like the first but publishes as the engine must (docs/design.md §7 "Routing
// exchange"): through each destination's own fanout exchange, the producer's routing key kept:
// what of the gap the broker's routing costs.
//
//   npx tsx test/bench/rabbitmq-engine.bench.ts [messages-per-run] [runs] [engine-prefetch]
//
// Prints a table and one JSON line. Bounded: stops starting runs after 240 s.
import type * as amqp from 'amqplib';
import { DEFAULT_PREFETCH } from '../../agent/rabbitmq/config';
import { uniqueName } from '../support/services';
import { median } from './stats';
import { benchRun } from './support/benchRun';
import {
  drop,
  engineThroughput,
  prefill,
  USER_HEADER,
  withConnection,
  type QueueType,
} from './support/rabbitBench';

const perRun = Number(process.argv[2] ?? 6000);
const runs = Number(process.argv[3] ?? 5);
const budgetMs = 240_000;
const enginePrefetch = Number(process.argv[4] ?? DEFAULT_PREFETCH);
const TYPES: readonly QueueType[] = ['classic', 'quorum'];
const users = ['alice', 'bob', 'nobody'];
const userOf = (i: number) => users[i % 3]!;

/** Messages per second through the engine, from the moment `start` returns. */
async function engineRun(type: QueueType): Promise<number> {
  const base = uniqueName(`bench-engine-${type}`);
  const names = { source: `${base}-src`, app: `${base}-app`, a: `${base}-a`, b: `${base}-b` };
  return withConnection(async (c) => {
    await prefill(c, [names.source], names.source, type, perRun, userOf);
    try {
      return await engineThroughput({
        base,
        source: names.source,
        appShadow: names.app,
        routes: [
          { routeId: 'a', filter: { [USER_HEADER]: 'alice' }, shadow: names.a },
          { routeId: 'b', filter: { [USER_HEADER]: 'bob' }, shadow: names.b },
        ],
        count: perRun,
        prefetch: enginePrefetch,
      });
    } finally {
      // The engine's exchanges are named after the app shadow (agent/rabbitmq/routing.ts).
      await drop(c, [...Object.values(names), `${base}-lock`], [], names.app);
    }
  });
}

/** Messages per second for the same work done by hand with amqplib; `viaExchange`: through one
 * fanout exchange per destination, as the split routes (agent/rabbitmq/routing.ts). */
async function rawRun(type: QueueType, batchAcks: boolean, viaExchange = false): Promise<number> {
  const base = uniqueName(`bench-raw-${type}`);
  const names = { source: `${base}-src`, app: `${base}-app`, a: `${base}-a`, b: `${base}-b` };
  const exchangeOf = (q: string) => `${q}-x`;
  return withConnection(async (c) => {
    await prefill(c, Object.values(names), names.source, type, perRun, userOf);
    const consumer = await c.createChannel();
    const publisher = await c.createConfirmChannel();
    if (viaExchange) {
      for (const q of [names.app, names.a, names.b]) {
        await publisher.assertExchange(exchangeOf(q), 'fanout', { durable: true, autoDelete: false });
        await publisher.bindQueue(q, exchangeOf(q), '');
      }
    }
    await consumer.prefetch(enginePrefetch);
    const destination: Record<string, string> = { alice: names.a, bob: names.b };
    // Delivery tags in arrival order, and those whose copy is confirmed: the acked prefix
    // advances over confirmed tags only, one `multiple` ack per event-loop turn.
    const waiting: number[] = [];
    const confirmed = new Set<number>();
    let head = 0;
    let flushQueued = false;
    let acked = 0;
    let resolveDone: () => void = () => undefined;
    const finished = new Promise<void>((resolve) => (resolveDone = resolve));
    const flush = () => {
      flushQueued = false;
      const first = head;
      let last: number | undefined;
      while (head < waiting.length && confirmed.has(waiting[head]!)) {
        last = waiting[head]!;
        confirmed.delete(last);
        head++;
      }
      if (last === undefined) return;
      // amqplib's ack reads only the delivery tag; `multiple` acks every tag up to it.
      if (batchAcks) consumer.ack({ fields: { deliveryTag: last } } as amqp.Message, true);
      else
        for (const t of waiting.slice(first, head))
          consumer.ack({ fields: { deliveryTag: t } } as amqp.Message);
      acked = head;
      if (acked === perRun) resolveDone();
    };
    const started = process.hrtime.bigint();
    await consumer.consume(names.source, (msg) => {
      if (!msg) return;
      const tag = msg.fields.deliveryTag;
      waiting.push(tag);
      const user = msg.properties.headers?.[USER_HEADER];
      const to = (typeof user === 'string' && destination[user]) || names.app;
      const headers = msg.properties.headers;
      publisher.publish(
        viaExchange ? exchangeOf(to) : '',
        viaExchange ? msg.fields.routingKey : to,
        msg.content,
        { ...msg.properties, headers, mandatory: true, persistent: true },
        (err) => {
          if (err) return; // not reached in a healthy run
          confirmed.add(tag);
          if (!batchAcks) {
            flush(); // each delivery acked on its own confirm (the relay before it batched)
            return;
          }
          if (!flushQueued) {
            flushQueued = true;
            setImmediate(flush);
          }
        },
      );
    });
    await finished;
    const seconds = Number(process.hrtime.bigint() - started) / 1e9;
    await drop(c, Object.values(names), viaExchange ? [names.app, names.a, names.b].map(exchangeOf) : []);
    return perRun / seconds;
  });
}

async function main(): Promise<void> {
  const recorder = benchRun('rabbitmq-engine');
  const deadline = Date.now() + budgetMs;
  const rates = Object.fromEntries(
    TYPES.map((t) => [
      t,
      { engine: [] as number[], raw: [] as number[], rawSingle: [] as number[], rawExchange: [] as number[] },
    ]),
  ) as Record<QueueType, { engine: number[]; raw: number[]; rawSingle: number[]; rawExchange: number[] }>;
  for (let i = 0; i < runs && Date.now() < deadline; i++) {
    // Alternate so drift on a shared machine hits both sides alike.
    for (const type of TYPES) {
      rates[type].raw.push(await rawRun(type, true));
      rates[type].rawSingle.push(await rawRun(type, false));
      rates[type].rawExchange.push(await rawRun(type, true, true));
      rates[type].engine.push(await engineRun(type));
    }
  }
  const fmt = (n: number) => n.toFixed(0).padStart(8);
  const runsOf = (xs: number[]) => xs.map((r) => r.toFixed(0)).join(' ');
  console.log(
    `messages per run: ${perRun} (1 KiB, persistent, 2 routes + app), runs: ${rates.classic.engine.length}, prefetch: ${enginePrefetch}`,
  );
  console.log('source    pipeline        median msg/s   runs (msg/s)');
  const rows = TYPES.map((type) => {
    const { engine: e, raw: r, rawSingle: s, rawExchange: x } = rates[type];
    const engine = median(e);
    const raw = median(r);
    const single = median(s);
    const viaExchange = median(x);
    console.log(`${type.padEnd(9)} raw amqplib     ${fmt(raw)}       ${runsOf(r)}`);
    console.log(
      `${type.padEnd(9)} raw, 1 ack/msg  ${fmt(single)}       ${runsOf(s)}   (${(single / raw).toFixed(2)} of raw)`,
    );
    console.log(
      `${type.padEnd(9)} raw, fanout x   ${fmt(viaExchange)}       ${runsOf(x)}   (${(viaExchange / raw).toFixed(2)} of raw)`,
    );
    console.log(`${type.padEnd(9)} queue-split     ${fmt(engine)}       ${runsOf(e)}`);
    console.log(
      `${type.padEnd(9)} engine / raw    ${(engine / raw).toFixed(2)}   (${(engine / viaExchange).toFixed(2)} of raw through fanout exchanges)`,
    );
    return {
      sourceType: type,
      engineMsgsPerSec: Math.round(engine),
      rawMsgsPerSec: Math.round(raw),
      ratio: Number((engine / raw).toFixed(3)),
      // The ack-batching lever: the raw pipe acking each delivery on its own confirm.
      rawSingleAckMsgsPerSec: Math.round(single),
      rawSingleAckRatio: Number((single / raw).toFixed(3)),
      // The raw pipe publishing through one fanout exchange per destination, as the engine does.
      rawExchangeMsgsPerSec: Math.round(viaExchange),
      rawExchangeRatio: Number((viaExchange / raw).toFixed(3)),
      engineToRawExchangeRatio: Number((engine / viaExchange).toFixed(3)),
      engineRuns: e.map(Math.round),
      rawRuns: r.map(Math.round),
      rawSingleAckRuns: s.map(Math.round),
      rawExchangeRuns: x.map(Math.round),
    };
  });
  const classic = rows[0]!;
  recorder.finish({
    bench: 'rabbitmq-engine',
    messageBytes: 1024,
    routes: 2,
    perRun,
    runs: rates.classic.engine.length,
    prefetch: enginePrefetch,
    // The classic row at the top level, as before quorum joined (README quotes it).
    engineMsgsPerSec: classic.engineMsgsPerSec,
    rawMsgsPerSec: classic.rawMsgsPerSec,
    ratio: classic.ratio,
    rows,
  });
}

main().catch((err: unknown) => {
  console.error(err);
  process.exit(1);
});
