// Throughput of the RabbitMQ engine beside a raw amqplib pipe doing the same minimum work
// (consume → confirmed mandatory publish → ack after the confirm), in one process, against
// the broker from `npm run env:up`. 1 KiB persistent messages, 2 routes (a third of the
// messages per route, a third to the application shadow), a prefilled classic source.
//
//   npx tsx test/bench/rabbitmq-engine.bench.ts [messages-per-run] [runs]
//
// Prints a table and one JSON line. Bounded: stops starting runs after 100 s.
import * as amqp from 'amqplib';
import { RabbitEngine } from '../../agent/rabbitmq/engine';
import { DEFAULT_PREFETCH } from '../../agent/rabbitmq/config';
import { loadServices, uniqueName } from '../support/services';
import { median } from './stats';

const perRun = Number(process.argv[2] ?? 6000);
const runs = Number(process.argv[3] ?? 5);
const budgetMs = 100_000;
const services = loadServices();
const users = ['alice', 'bob', 'nobody'];
const body = Buffer.alloc(1024, 'x');

async function withConnection<T>(op: (c: amqp.ChannelModel) => Promise<T>): Promise<T> {
  const c = await amqp.connect(services.amqpUrl);
  c.on('error', () => undefined);
  try {
    return await op(c);
  } finally {
    await c.close().catch(() => undefined);
  }
}

async function prefill(c: amqp.ChannelModel, queues: string[], source: string): Promise<void> {
  const ch = await c.createConfirmChannel();
  for (const q of queues)
    await ch.assertQueue(q, { durable: true, arguments: { 'x-queue-type': 'classic' } });
  for (let i = 0; i < perRun; i++) {
    const ok = ch.publish('', source, body, {
      persistent: true,
      messageId: `m-${i}`,
      headers: { 'x-queue-split-user': users[i % 3] },
    });
    if (!ok) await new Promise((r) => ch.once('drain', r));
    if (i % 500 === 499) await ch.waitForConfirms();
  }
  await ch.waitForConfirms();
  await ch.close();
}

async function drop(c: amqp.ChannelModel, queues: string[]): Promise<void> {
  const ch = await c.createChannel();
  for (const q of queues) await ch.deleteQueue(q).catch(() => undefined);
  await ch.close().catch(() => undefined);
}

/** Messages per second through the engine, from the moment `start` returns. */
async function engineRun(): Promise<number> {
  const base = uniqueName('bench-engine');
  const names = { source: `${base}-src`, app: `${base}-app`, a: `${base}-a`, b: `${base}-b` };
  return withConnection(async (c) => {
    await prefill(c, [names.source], names.source);
    const engine = new RabbitEngine({
      activationId: base,
      epoch: 1,
      amqpUrl: services.amqpUrl,
      managementUrl: services.rabbitManagementUrl,
      sourceQueue: names.source,
      appShadow: names.app,
      lockQueue: `${base}-lock`,
      timing: { quiesceMs: 0, pollIntervalMs: 100 },
    });
    try {
      const must = async (o: Promise<{ kind: string }>) => {
        const r = await o;
        if (r.kind !== 'done') throw new Error(JSON.stringify(r));
      };
      await must(engine.prepare());
      await must(
        engine.reconcileRoutes(1, [
          { routeId: 'a', filter: { 'x-queue-split-user': 'alice' }, shadow: names.a },
          { routeId: 'b', filter: { 'x-queue-split-user': 'bob' }, shadow: names.b },
        ]),
      );
      const total = () =>
        engine.status().app.published + engine.status().routes.reduce((n, r) => n + r.published, 0);
      await must(engine.start()); // its preflight is not throughput: time from here
      const started = process.hrtime.bigint();
      const before = total();
      while (total() < perRun) await new Promise((r) => setTimeout(r, 5));
      return (perRun - before) / (Number(process.hrtime.bigint() - started) / 1e9);
    } finally {
      await engine.close();
      await drop(c, Object.values(names));
    }
  });
}

/** Messages per second for the same work done by hand with amqplib. */
async function rawRun(): Promise<number> {
  const base = uniqueName('bench-raw');
  const names = { source: `${base}-src`, app: `${base}-app`, a: `${base}-a`, b: `${base}-b` };
  return withConnection(async (c) => {
    await prefill(c, Object.values(names), names.source);
    const consumer = await c.createChannel();
    const publisher = await c.createConfirmChannel();
    await consumer.prefetch(DEFAULT_PREFETCH);
    const destination: Record<string, string> = { alice: names.a, bob: names.b };
    let acked = 0;
    const started = process.hrtime.bigint();
    const finished = new Promise<void>((resolve) => {
      void consumer.consume(names.source, (msg) => {
        if (!msg) return;
        const user = msg.properties.headers?.['x-queue-split-user'];
        const to = (typeof user === 'string' && destination[user]) || names.app;
        publisher.publish(
          '',
          to,
          msg.content,
          { ...msg.properties, mandatory: true, persistent: true },
          (err) => {
            if (err) return; // not reached in a healthy run
            consumer.ack(msg);
            if (++acked === perRun) resolve();
          },
        );
      });
    });
    await finished;
    const seconds = Number(process.hrtime.bigint() - started) / 1e9;
    await drop(c, Object.values(names));
    return perRun / seconds;
  });
}

async function main(): Promise<void> {
  const deadline = Date.now() + budgetMs;
  const engineRates: number[] = [];
  const rawRates: number[] = [];
  for (let i = 0; i < runs && Date.now() < deadline; i++) {
    // Alternate so drift on a shared machine hits both sides alike.
    rawRates.push(await rawRun());
    engineRates.push(await engineRun());
  }
  const engine = median(engineRates);
  const raw = median(rawRates);
  const fmt = (n: number) => n.toFixed(0).padStart(8);
  console.log(`messages per run: ${perRun} (1 KiB, persistent, 2 routes + app), runs: ${engineRates.length}`);
  console.log('pipeline        median msg/s   runs (msg/s)');
  console.log(`raw amqplib     ${fmt(raw)}       ${rawRates.map((r) => r.toFixed(0)).join(' ')}`);
  console.log(`queue-split     ${fmt(engine)}       ${engineRates.map((r) => r.toFixed(0)).join(' ')}`);
  console.log(`engine / raw    ${(engine / raw).toFixed(2)}`);
  console.log(
    JSON.stringify({
      bench: 'rabbitmq-engine',
      messageBytes: 1024,
      routes: 2,
      perRun,
      runs: engineRates.length,
      prefetch: DEFAULT_PREFETCH,
      engineMsgsPerSec: Math.round(engine),
      rawMsgsPerSec: Math.round(raw),
      ratio: Number((engine / raw).toFixed(3)),
    }),
  );
}

main().catch((err: unknown) => {
  console.error(err);
  process.exit(1);
});
