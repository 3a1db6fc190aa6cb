// What the RabbitMQ benches share: a connection to the broker of `npm run env:up`, a prefilled
// source of 1 KiB persistent messages, and the engine they measure, started on it.
import * as amqp from 'amqplib';
import type { RouteSpec } from '../../../agent/engine/contract';
import { RabbitEngine } from '../../../agent/rabbitmq/engine';
import { deleteExchangesStartingWith } from '../../support/rabbitManagement';
import { loadServices } from '../../support/services';

export const services = loadServices();
export const USER_HEADER = 'x-queue-split-user';
export type QueueType = 'classic' | 'quorum';
const body = Buffer.alloc(1024, 'x');

export async function withConnection<T>(op: (c: amqp.ChannelModel) => Promise<T>): Promise<T> {
  const c = await amqp.connect(services.amqpUrl);
  c.on('error', () => undefined);
  try {
    return await op(c);
  } finally {
    await c.close().catch(() => undefined);
  }
}

/** Declares `queues` (durable, of `type`) and publishes `count` messages into `source`, confirmed,
 * message i with the x-queue-split-user header `user(i)`. */
export async function prefill(
  c: amqp.ChannelModel,
  queues: readonly string[],
  source: string,
  type: QueueType,
  count: number,
  user: (i: number) => string,
): Promise<void> {
  const ch = await c.createConfirmChannel();
  for (const q of queues) await ch.assertQueue(q, { durable: true, arguments: { 'x-queue-type': type } });
  for (let i = 0; i < count; i++) {
    const ok = ch.publish('', source, body, {
      persistent: true,
      messageId: `m-${i}`,
      headers: { [USER_HEADER]: user(i) },
    });
    if (!ok) await new Promise((r) => ch.once('drain', r));
    if (i % 500 === 499) await ch.waitForConfirms();
  }
  await ch.waitForConfirms();
  await ch.close();
}

/** Deletes the queues and exchanges a run made (an absent one is no error), and every exchange
 * whose name starts with `exchangePrefix` (an engine's: named after its app shadow). */
export async function drop(
  c: amqp.ChannelModel,
  queues: readonly string[],
  exchanges: readonly string[] = [],
  exchangePrefix?: string,
): Promise<void> {
  const ch = await c.createChannel();
  ch.on('error', () => undefined);
  for (const q of queues) await ch.deleteQueue(q).catch(() => undefined);
  for (const x of exchanges) await ch.deleteExchange(x).catch(() => undefined);
  await ch.close().catch(() => undefined);
  if (exchangePrefix !== undefined)
    await deleteExchangesStartingWith(services.rabbitManagementUrl, exchangePrefix);
}

const must = async (o: Promise<{ kind: string }>) => {
  const r = await o;
  if (r.kind !== 'done') throw new Error(JSON.stringify(r));
};

/**
 * Prepares an engine on `source` with `routes`, starts it, and returns messages per second until
 * `count` messages are published to their shadows, timed from the moment `start` returns (its
 * preflight is not throughput). Closes the engine; the caller drops what it made.
 */
export async function engineThroughput(options: {
  base: string;
  source: string;
  appShadow: string;
  routes: readonly RouteSpec[];
  count: number;
  prefetch?: number;
}): Promise<number> {
  const engine = new RabbitEngine({
    activationId: options.base,
    epoch: 1,
    amqpUrl: services.amqpUrl,
    managementUrl: services.rabbitManagementUrl,
    sourceQueue: options.source,
    appShadow: options.appShadow,
    lockQueue: `${options.base}-lock`,
    ...(options.prefetch !== undefined ? { prefetch: options.prefetch } : {}),
    timing: { quiesceMs: 0, pollIntervalMs: 100 },
  });
  try {
    await must(engine.prepare());
    await must(engine.reconcileRoutes(1, options.routes));
    // One status() per poll: it lists every route, which with 1,000 routes is work of its own.
    const total = () => {
      const status = engine.status();
      return status.app.published + status.routes.reduce((n, r) => n + r.published, 0);
    };
    await must(engine.start());
    const started = process.hrtime.bigint();
    const before = total();
    while (total() < options.count) await new Promise((r) => setTimeout(r, 5));
    return (options.count - before) / (Number(process.hrtime.bigint() - started) / 1e9);
  } finally {
    await engine.close();
  }
}
