// How the relay settles source deliveries (agent/rabbitmq/relay.ts): acks may cover several
// deliveries at once (`multiple`), so these prove on a real broker that no ack ever takes a
// delivery whose copy is not confirmed, that a refused copy does not hold up the ones after it,
// and that a stop in the middle of a batch settles every delivery exactly once (acked with its
// copy made, or back in the source). Classic and quorum sources.
import assert from 'node:assert/strict';
import { after, describe, test } from 'node:test';
import type * as amqp from 'amqplib';
import { silentLogger } from '../../agent/log';
import { AmqpConnection, type Link } from '../../agent/rabbitmq/amqpConnection';
import { Relay, type RelaySelection } from '../../agent/rabbitmq/relay';
import { ensureRoute, RouteNames } from '../../agent/rabbitmq/routing';
import { amqpTarget } from '../../agent/rabbitmq/urls';
import { pollUntil } from '../support/poll';
import { deleteExchangesStartingWith } from '../support/rabbitManagement';
import { loadServices, uniqueName } from '../support/services';
import { rabbitConnection } from './rabbitmq/connection';

const services = loadServices();
const { withChannel, close } = rabbitConnection(services.amqpUrl);
after(close);

type QueueType = 'classic' | 'quorum';

interface Setup {
  readonly label: string;
  readonly source: string;
  readonly destination: string;
  readonly routes: RouteNames;
  readonly link: Link;
}

/** A source holding `ids` (in order) and a destination bound to its exchange (routing.ts), on
 * an engine-style connection; removed after `op`. */
async function withSource(
  type: QueueType,
  ids: readonly string[],
  op: (s: Setup) => Promise<void>,
): Promise<void> {
  const label = uniqueName(`rq-acks-${type}`);
  const source = `${label}-src`;
  const destination = `${label}-dst`;
  const routes = new RouteNames(`${label}-x`);
  await withChannel(async (ch) => {
    for (const q of [source, destination])
      await ch.assertQueue(q, { durable: true, arguments: { 'x-queue-type': type } });
    for (const id of ids) ch.publish('', source, Buffer.from(id), { messageId: id, persistent: true });
    await ch.waitForConfirms();
  });
  const session = new AmqpConnection(
    {
      target: amqpTarget(services.amqpUrl, 10),
      lockQueue: `${label}-lock`,
      connectionName: `queue-split test ${label}`,
      reconnectInitialMs: 200,
      reconnectMaxMs: 1_000,
      logger: silentLogger,
    },
    { onUp: async () => undefined, onDown: () => undefined, onFenced: () => undefined },
  );
  try {
    const up = await session.ensureUp();
    if (up.kind !== 'up') throw new Error(`no connection: ${up.reason}`);
    assert.deepEqual(await ensureRoute(up.link, routes, destination), { ok: true });
    await op({ label, source, destination, routes, link: up.link });
  } finally {
    await session.close();
    await withChannel(async (ch) => {
      for (const q of [source, destination]) await ch.deleteQueue(q).catch(() => undefined);
    }).catch(() => undefined);
    await deleteExchangesStartingWith(services.rabbitManagementUrl, routes.routingExchange).catch(
      () => undefined,
    );
  }
}

function relayOf(
  s: Setup,
  options: { prefetch: number; select: (msg: amqp.ConsumeMessage) => string; onRouted?: () => void },
): Relay {
  return new Relay({
    queue: s.source,
    routes: s.routes,
    prefetch: options.prefetch,
    consumerTag: `${s.label}-relay`,
    engineUser: amqpTarget(services.amqpUrl, 10).username,
    select: (msg): RelaySelection => ({
      destination: options.select(msg),
      routeId: undefined,
      generation: 1,
    }),
    ...(options.onRouted ? { onRouted: options.onRouted } : {}),
    retryInitialMs: 50,
    retryMaxMs: 200,
    logger: silentLogger,
  });
}

/** Every message ready in `queue`, taken with basic.get and acked: message ids in queue order. */
async function takeAll(queue: string): Promise<string[]> {
  return withChannel(async (ch) => {
    const ids: string[] = [];
    for (;;) {
      const got = await ch.get(queue, { noAck: true });
      if (!got) return ids;
      ids.push(String(got.properties.messageId));
    }
  });
}

const range = (prefix: string, n: number) => Array.from({ length: n }, (_, i) => `${prefix}-${i + 1}`);

for (const type of ['classic', 'quorum'] as const) {
  describe(`relay acks on a ${type} source`, { concurrency: 1 }, () => {
    test('a refused copy between routed ones is never acked with them, does not hold them up, and goes back to the source at stop', () => {
      const ids = range('mid', 6);
      const refused = 'mid-3';
      return withSource(type, ids, async (s) => {
        // The refused copy's destination has no queue (deleted behind the relay: its exchange
        // stays, unbound): every publish of it is returned, and the relay retries it with
        // backoff while its delivery stays unacked between acked ones.
        const missing = `${s.label}-missing`;
        await withChannel((ch) =>
          ch.assertExchange(s.routes.exchangeFor(missing), 'fanout', { durable: true, autoDelete: false }),
        );
        const relay = relayOf(s, {
          prefetch: 10,
          select: (msg) => (msg.properties.messageId === refused ? missing : s.destination),
        });
        await relay.start(s.link);
        await pollUntil(
          'the five others routed and acked while the refused one retries',
          async () => ({ routed: relay.routed, open: relay.open }),
          (r) => r.routed === 5 && r.open === 1,
          15_000,
        );
        assert.equal(await relay.stop(10_000), true, 'stop settles every delivery');
        assert.deepEqual(
          await takeAll(s.source),
          [refused],
          'the refused delivery was requeued, and nothing else stayed in the source',
        );
        assert.deepEqual(
          (await takeAll(s.destination)).sort(),
          ids.filter((id) => id !== refused).sort(),
          'each routed message copied once',
        );
      });
    });

    test('a stop in the middle of a batch settles every delivery once: a copy and an ack, or back in the source', () => {
      const ids = range('stop', 600);
      return withSource(type, ids, async (s) => {
        let stopped: Promise<boolean> | undefined;
        let routed = 0;
        const relay: Relay = relayOf(s, {
          prefetch: 50,
          select: () => s.destination,
          // Stops from inside the settling of a batch, with confirms still arriving.
          onRouted: () => {
            if (++routed === 120) stopped = relay.stop(10_000);
          },
        });
        await relay.start(s.link);
        await pollUntil('stop called', async () => stopped !== undefined, Boolean, 30_000);
        assert.equal(await stopped, true, 'stop settles every delivery');
        assert.equal(relay.open, 0);
        const copied = await takeAll(s.destination);
        const left = await takeAll(s.source);
        assert.ok(left.length > 0, 'the stop came before the backlog was done');
        assert.equal(copied.length, relay.routed, 'one copy per acked delivery');
        assert.equal(new Set(copied).size, copied.length, 'no copy twice');
        assert.deepEqual(
          copied.filter((id) => left.includes(id)),
          [],
          'a delivery both copied and requeued: its ack was lost to the stop',
        );
        assert.deepEqual(
          [...copied, ...left].sort(),
          [...ids].sort(),
          'every message copied or in the source',
        );
      });
    });
  });
}
