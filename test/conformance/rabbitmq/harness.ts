// The RabbitMQ provider harness, for a classic or a quorum source, against the real broker
// from `npm run env:up`. It talks to the broker with plain amqplib and the management API,
// never through engine code, so the suite checks the engine rather than agreeing with it.
import * as amqp from 'amqplib';
import type { Engine, RouteSpec } from '../../../agent/engine/contract';
import { RabbitEngine } from '../../../agent/rabbitmq/engine';
import type { RabbitEngineConfig } from '../../../agent/rabbitmq/config';
import { pollUntil } from '../../support/poll';
import {
  closeConnections,
  deleteExchangesStartingWith,
  getQueue,
  queueExists,
} from '../../support/rabbitManagement';
import { loadServices, uniqueName } from '../../support/services';
import {
  NON_STRING,
  type ChildSpec,
  type ConsumerHandle,
  type EngineOptions,
  type Observed,
  type ProviderHarness,
  type TestMessage,
  type Topology,
} from '../harness';
import { testTiming } from '../timing';
import { rabbitConnection } from './connection';

type QueueType = 'classic' | 'quorum';

interface RabbitTopology extends Topology {
  readonly lockQueue: string;
  readonly activationId: string;
  readonly names: Set<string>;
}

export function rabbitHarness(type: QueueType): ProviderHarness {
  const services = loadServices();
  const labels = new WeakMap<Engine, string>();
  let engines = 0;

  const broker = rabbitConnection(services.amqpUrl);
  const { connection, withChannel } = broker;
  const declare = (name: string) =>
    withChannel((ch) => ch.assertQueue(name, { durable: true, arguments: { 'x-queue-type': type } }));

  const asTopology = (t: Topology): RabbitTopology => t as RabbitTopology;

  const config = (t: RabbitTopology, label: string, options: EngineOptions = {}): RabbitEngineConfig => ({
    activationId: t.activationId,
    epoch: 1,
    amqpUrl: services.amqpUrl,
    managementUrl: services.rabbitManagementUrl,
    sourceQueue: t.source,
    appShadow: t.appShadow,
    lockQueue: t.lockQueue,
    ...(options.prefetch === undefined ? {} : { prefetch: options.prefetch }),
    timing: {
      ...testTiming,
      ...(options.stepTimeoutMs === undefined ? {} : { stepTimeoutMs: options.stepTimeoutMs }),
    },
    connectionLabel: label,
  });

  const publish = async (queue: string, messages: readonly TestMessage[]) =>
    withChannel(async (ch) => {
      for (const m of messages) {
        const typed = (m.extra?.headers ?? {}) as Record<string, unknown>;
        const headers: Record<string, unknown> = { ...typed };
        for (const [k, v] of Object.entries(m.headers ?? {})) headers[k] = v === NON_STRING ? 42 : v;
        ch.publish('', queue, m.body ?? Buffer.from(`body of ${m.id}`), {
          ...m.extra,
          persistent: true,
          mandatory: true,
          messageId: m.id,
          headers,
          ...(m.contentType === undefined ? {} : { contentType: m.contentType }),
          ...(m.timestamp === undefined ? {} : { timestamp: Math.floor(m.timestamp / 1000) }),
        });
      }
      await ch.waitForConfirms();
    });

  const observe = (msg: amqp.Message): Observed => {
    const { headers, contentType, timestamp, messageId, ...extra } = msg.properties;
    return {
      id: String(messageId),
      body: msg.content,
      headers: headers ?? {},
      contentType,
      timestamp: typeof timestamp === 'number' ? timestamp * 1000 : undefined,
      extra,
    };
  };

  return {
    name: `rabbitmq-${type}`,
    provider: 'rabbitmq',
    cleanupRetainsShadows: false,
    countsConsumers: true,
    richProperties: {
      contentEncoding: 'identity',
      correlationId: 'corr-7',
      replyTo: 'reply-queue',
      type: 'order.created',
      appId: 'checkout',
      priority: 3,
      expiration: '86400000',
      headers: {
        'x-int': 42,
        'x-negative': -70000,
        'x-double': 3.25,
        'x-big': 2 ** 40,
        'x-bool': true,
        'x-void': null,
        'x-bytes': Buffer.from([0, 1, 254, 255]),
        'x-table': { nested: 'yes', n: 1 },
        'x-array': ['one', 2, false],
        'x-timestamp': { '!': 'timestamp', value: 1_700_000_000 },
        'x-decimal': { '!': 'decimal', value: { places: 2, digits: 12345 } },
      },
    },
    notPreserved: [
      'deliveryMode: forced to 2 (persistent) so the shadow copy is durable',
      'userId: kept only when it equals the engine user (the broker checks it against the publishing connection)',
      "exchange: copies go through their destination's own exchange (a fanout exchange named after the app shadow), with the producer's routing key kept; the first hop records the producer's exchange (and routing key) in x-queue-split-exchange / x-queue-split-routing-key",
      'redelivered flag: delivery state, not message content; every copy is delivered fresh',
      'CC/BCC headers: dropped, they would route the copy again; CC is kept as x-queue-split-cc',
      "x-delivery-count header: dropped, it counts the source's redeliveries (a quorum shadow adds its own)",
      'a longstr header whose bytes are not UTF-8: re-encoded as UTF-8 (invalid sequences become U+FFFD); every other header keeps its AMQP type and value',
      'expiration: copied, so the per-message TTL restarts at each hop (source to shadow, shadow to source)',
      "dead-lettering from a shadow (the source's rules, which the shadow is declared with): x-death names the shadow queue, and the shadow's exchange as the exchange, where the source's names the source and the producer's exchange; reason, count and routing keys are the producer's (CC keys excepted: a copy carries CC as x-queue-split-cc)",
      'x-expires: not given to shadows (a shadow that expired would delete what it holds; the source does not expire while the engine consumes it)',
    ],

    async topology() {
      const label = uniqueName(`cf-${type}`);
      const names = new Set<string>();
      const name = (role: string) => {
        const n = `${label}-${role}`;
        names.add(n);
        return n;
      };
      const source = name('source');
      await declare(source);
      const t: RabbitTopology = {
        label,
        source,
        appShadow: name('app'),
        lockQueue: name('lock'),
        activationId: label,
        names,
        route: (routeId, filter) => ({ routeId, filter, shadow: name(`route-${routeId}`) }),
      };
      return t;
    },

    engine(t, options = {}) {
      const label = `${t.label}-e${++engines}`;
      const engine = new RabbitEngine(config(asTopology(t), label, options), {
        ...(options.logger ? { logger: options.logger } : {}),
        ...(options.hooks ? { hooks: options.hooks } : {}),
      });
      labels.set(engine, label);
      return engine;
    },

    childSpec(t, generation, routes: readonly RouteSpec[], options = {}): ChildSpec {
      return {
        provider: 'rabbitmq',
        config: config(asTopology(t), `${t.label}-child`, options),
        generation,
        routes,
      };
    },

    produce: (t, messages) => publish(t.source, messages),
    inject: (destination, messages) => publish(destination, messages),

    async read(destination, expectIds, timeoutMs = 20_000) {
      const conn = await connection();
      const ch = await conn.createChannel();
      ch.on('error', () => undefined);
      await ch.prefetch(200);
      const seen: Observed[] = [];
      let lastAt = Date.now();
      const { consumerTag } = await ch.consume(destination, (msg) => {
        if (!msg) return;
        seen.push(observe(msg));
        lastAt = Date.now();
        ch.ack(msg);
      });
      const want = new Set(expectIds);
      const deadline = Date.now() + timeoutMs;
      while (Date.now() < deadline) {
        const missing = [...want].some((id) => !seen.some((o) => o.id === id));
        if (!missing && Date.now() - lastAt > 400) break;
        await new Promise((r) => setTimeout(r, 100));
      }
      await ch.cancel(consumerTag);
      await ch.close().catch(() => undefined);
      return seen;
    },

    async consume(destination, { prefetch, ackFirst }) {
      const conn = await amqp.connect(services.amqpUrl);
      conn.on('error', () => undefined);
      const ch = await conn.createChannel();
      ch.on('error', () => undefined);
      await ch.prefetch(prefetch);
      const received: string[] = [];
      const acked: string[] = [];
      const held: amqp.ConsumeMessage[] = [];
      let ackEverything = false;
      const ack = (msg: amqp.ConsumeMessage) => {
        ch.ack(msg);
        acked.push(String(msg.properties.messageId));
      };
      await ch.consume(destination, (msg) => {
        if (!msg) return;
        received.push(String(msg.properties.messageId));
        if (ackEverything || acked.length < ackFirst) ack(msg);
        else held.push(msg);
      });
      const handle: ConsumerHandle = {
        received,
        acked,
        ackAll() {
          ackEverything = true;
          for (const msg of held.splice(0)) ack(msg);
        },
        async kill() {
          // AMQP never answers a basic.ack, and a connection closed in the same moment loses the
          // acks just sent (RabbitMQ keeps the messages: a route's drain would then move what this
          // consumer counted as acked to the app shadow). A synchronous method after them proves
          // the broker has them (agent/rabbitmq/sessionReader.ts does the same); held messages
          // still go back to the queue with the connection.
          await ch.checkQueue(destination).catch(() => undefined);
          await conn.close().catch(() => undefined);
        },
      };
      return handle;
    },

    async holdOne(destination) {
      const conn = await amqp.connect(services.amqpUrl);
      conn.on('error', () => undefined);
      const ch = await conn.createChannel();
      ch.on('error', () => undefined);
      const msg = await ch.get(destination, { noAck: false });
      if (!msg) {
        await conn.close();
        throw new Error(`holdOne: ${destination} is empty`);
      }
      return { id: String(msg.properties.messageId), release: () => conn.close().catch(() => undefined) };
    },

    async backlog(name) {
      const q = await getQueue(services.rabbitManagementUrl, name);
      if (q.messages_ready === undefined || q.messages_unacknowledged === undefined) {
        throw new Error(`${name}: statistics not computed yet`);
      }
      return q.messages_ready + q.messages_unacknowledged;
    },

    exists: (name) => queueExists(services.rabbitManagementUrl, name),

    async deleteBehindEngine(name) {
      await withChannel((ch) => ch.deleteQueue(name));
    },

    async recreate(name) {
      await declare(name);
    },

    async preempt(engine) {
      const label = labels.get(engine);
      if (!label) throw new Error('preempt: this engine was not made by this harness');
      // A new connection shows in the management API only after a statistics round, and the
      // close it orders is asynchronous: wait for both ends.
      await pollUntil(
        `connection of ${label} listed and closed`,
        () => closeConnections(services.rabbitManagementUrl, ` ${label}`),
        (n) => n > 0,
        10_000,
      );
      await pollUntil(
        `${label} noticed the loss`,
        async () => engine.status().connected,
        (c) => !c,
        10_000,
      );
    },

    async dispose(t) {
      for (const name of asTopology(t).names) {
        await withChannel((ch) => ch.deleteQueue(name)).catch(() => undefined);
      }
      // The engine's exchanges are named after the application shadow.
      await deleteExchangesStartingWith(services.rabbitManagementUrl, t.appShadow).catch(() => undefined);
    },

    async close() {
      await broker.close();
    },
  };
}
