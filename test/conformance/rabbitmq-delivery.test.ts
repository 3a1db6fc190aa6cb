// test-order: first (about 2 minutes of waiting on broker statistics)
// What a RabbitMQ copy carries when real producers send it (docs/design.md §7): sender-selected distribution headers (CC/BCC), the producer's routing key on every
// hop, header values of every AMQP type (sent by a second client, pika), broker-added delivery
// headers, and a publish lost with its channel while the route table changes. Classic and
// quorum sources.
import assert from 'node:assert/strict';
import { after, describe, test } from 'node:test';
import * as amqp from 'amqplib';
import { silentLogger } from '../../agent/log';
import { PublishBarrier } from '../../agent/engine/publishBarrier';
import { Relay, type RelaySelection } from '../../agent/rabbitmq/relay';
import { ensureRoute, RouteNames } from '../../agent/rabbitmq/routing';
import { AmqpConnection } from '../../agent/rabbitmq/amqpConnection';
import { amqpTarget } from '../../agent/rabbitmq/urls';
import { pollUntil } from '../support/poll';
import {
  deleteExchangesStartingWith,
  exchangesBoundTo,
  exchangesStartingWith,
} from '../support/rabbitManagement';
import { loadServices, uniqueName } from '../support/services';
import { rabbitConnection } from './rabbitmq/connection';
import { rabbitHarness } from './rabbitmq/harness';
import { runPika } from './rabbitmq/pikaClient';
import type { TestMessage } from './harness';
import { assertDelivery, batch, ids, seenIds, USER } from './delivery';
import { done, running, untilDone } from './steps';
import { testLogger, withSplit } from './support';

const services = loadServices();
const { connection, withChannel, close } = rabbitConnection(services.amqpUrl);
after(close);

interface PikaCopy {
  readonly id: string;
  readonly routingKey: string;
  /** Header name -> its field value as sent on the wire (type tag + bytes, hex). */
  readonly headers: Readonly<Record<string, string>>;
}

const pika = (command: 'publish' | 'read', queue: string, ...args: string[]): Promise<string> =>
  runPika('pika_typed.py', [command, services.amqpUrl, queue, ...args]);

/** A field value's encoding (hex), for a failure message: its AMQP type and bytes. */
function describeField(hex: string): string {
  const types: Record<string, string> = {
    t: 'boolean',
    b: 'byte',
    B: 'unsigned byte',
    s: 'short',
    u: 'unsigned short',
    I: 'long',
    i: 'unsigned long',
    l: 'longlong',
    f: 'float',
    d: 'double',
    D: 'decimal',
    T: 'timestamp',
    S: 'longstr',
    x: 'bytes',
    F: 'table',
    A: 'array',
    V: 'void',
  };
  const tag = String.fromCharCode(parseInt(hex.slice(0, 2), 16));
  return `${types[tag] ?? `tag ${tag}`} ${hex.slice(2)}`;
}

/** Everything delivered to `queue` within `quietMs` of the last delivery (acked). */
async function drainAll(queue: string, quietMs = 1_500, timeoutMs = 15_000): Promise<amqp.ConsumeMessage[]> {
  const ch = await (await connection()).createChannel();
  ch.on('error', () => undefined);
  const seen: amqp.ConsumeMessage[] = [];
  let lastAt = Date.now();
  const { consumerTag } = await ch.consume(queue, (msg) => {
    if (!msg) return;
    seen.push(msg);
    lastAt = Date.now();
    ch.ack(msg);
  });
  const deadline = Date.now() + timeoutMs;
  while (Date.now() - lastAt < quietMs && Date.now() < deadline) await new Promise((r) => setTimeout(r, 100));
  await ch.cancel(consumerTag);
  await ch.close().catch(() => undefined);
  return seen;
}

for (const type of ['classic', 'quorum'] as const) {
  describe(`RabbitMQ copies from a ${type} source`, { concurrency: 1 }, () => {
    const h = rabbitHarness(type);
    after(() => h.close());

    test('a CC header does not re-route copies: no copy re-enters the source or reaches the CC queue again', () =>
      withSplit(h, async (t, engines) => {
        const audit = uniqueName(`rq-cc-audit-${type}`);
        await withChannel((ch) => ch.assertQueue(audit, { durable: true }));
        try {
          const e = engines.track(h.engine(t, { logger: testLogger() }));
          const alice = t.route('alice', { [USER]: 'alice' });
          await running(e, 1, [alice]);
          // Sender-selected distribution (a foreign producer's CC/BCC): the broker routes the
          // publish to the source and to every queue named in CC/BCC, and strips BCC.
          const input = batch('cc', 4, (i) => ({ [USER]: i % 2 ? 'alice' : 'bob' }));
          await withChannel(async (ch) => {
            for (const m of input) {
              ch.publish('', t.source, Buffer.from(m.id), {
                persistent: true,
                messageId: m.id,
                headers: { ...m.headers, CC: [t.source, audit], BCC: [audit] },
              });
            }
            await ch.waitForConfirms();
          });
          const toAlice = input.filter((m) => m.headers?.[USER] === 'alice');
          const toApp = input.filter((m) => m.headers?.[USER] === 'bob');
          const session = await drainAll(alice.shadow);
          const app = await drainAll(t.appShadow);
          const auditSeen = await drainAll(audit, 500);
          const id = (m: amqp.ConsumeMessage) => String(m.properties.messageId);
          assertDelivery({
            inputs: ids(input),
            destinations: { [alice.shadow]: session.map(id), app: app.map(id) },
          });
          assert.deepEqual(session.map(id).sort(), ids(toAlice).sort());
          assert.deepEqual(app.map(id).sort(), ids(toApp).sort());
          // The producer's own publish reached the audit queue once per message; no copy did.
          assert.deepEqual(auditSeen.map(id).sort(), ids(input).sort(), 'the CC queue got copies');
          const source = await withChannel((ch) => ch.checkQueue(t.source));
          assert.equal(source.messageCount, 0, 'copies re-entered the source');
          for (const m of [...session, ...app]) {
            const headers = m.properties.headers ?? {};
            assert.equal(headers.CC, undefined, `${id(m)}: CC kept on the copy`);
            assert.equal(headers.BCC, undefined, `${id(m)}: BCC kept on the copy`);
            assert.deepEqual(headers['x-queue-split-cc'], [t.source, audit], `${id(m)}: CC recorded`);
          }
        } finally {
          await withChannel((ch) => ch.deleteQueue(audit)).catch(() => undefined);
        }
      }));

    test('the exchange and routing key the producer used are recorded on the copy, and kept across hops', () =>
      withSplit(h, async (t, engines) => {
        const key = uniqueName('orders.created');
        await withChannel((ch) => ch.bindQueue(t.source, 'amq.direct', key));
        const e = engines.track(h.engine(t, { logger: testLogger() }));
        const alice = t.route('alice', { [USER]: 'alice' });
        await running(e, 1, [alice]);
        const input = batch('rk', 2, () => ({ [USER]: 'alice' }));
        await withChannel(async (ch) => {
          for (const m of input) {
            ch.publish('amq.direct', key, Buffer.from(m.id), { messageId: m.id, headers: m.headers });
          }
          await ch.waitForConfirms();
        });
        // Route removed: its shadow's residue moves to the application shadow (a second hop).
        await pollUntil(
          'copied to the session shadow',
          () => withChannel((ch) => ch.checkQueue(alice.shadow)),
          (q) => q.messageCount === input.length,
          15_000,
        );
        assert.equal((await e.reconcileRoutes(2, [])).kind, 'done');
        await pollUntil(
          'route drained',
          () => e.drainRoute(alice),
          (o) => o.kind === 'done',
          40_000,
        );
        const copies = await drainAll(t.appShadow);
        assert.deepEqual(copies.map((m) => String(m.properties.messageId)).sort(), ids(input).sort());
        for (const m of copies) {
          const headers = m.properties.headers ?? {};
          assert.equal(headers['x-queue-split-exchange'], 'amq.direct');
          assert.equal(headers['x-queue-split-routing-key'], key);
        }
      }));

    test("a copy keeps the producer's routing key on every hop", () =>
      withSplit(h, async (t, engines) => {
        // A consumer that dispatches on fields.routingKey must see the producer's key in the
        // session shadow, the app shadow (also after a session's residue moved there) and the
        // source after a rollback.
        const key = uniqueName('orders.created');
        await withChannel((ch) => ch.bindQueue(t.source, 'amq.direct', key));
        const e = engines.track(h.engine(t, { logger: testLogger() }));
        const alice = t.route('alice', { [USER]: 'alice' });
        await running(e, 1, [alice]);
        const send = (messages: readonly TestMessage[]) =>
          withChannel(async (ch) => {
            for (const m of messages)
              ch.publish('amq.direct', key, Buffer.from(m.id), { messageId: m.id, headers: m.headers });
            await ch.waitForConfirms();
          });
        const id = (m: amqp.ConsumeMessage) => String(m.properties.messageId);
        const assertKept = (where: string, copies: readonly amqp.ConsumeMessage[]) => {
          for (const m of copies) {
            assert.equal(m.fields.routingKey, key, `${where}: ${id(m)} arrived with another routing key`);
            assert.equal(
              m.properties.headers?.['x-queue-split-exchange'],
              'amq.direct',
              `${where}: exchange recorded`,
            );
          }
        };
        // Hop 1: source -> session shadow and source -> app shadow.
        const first = batch('rk1', 4, (i) => ({ [USER]: i % 2 ? 'alice' : 'bob' }));
        await send(first);
        const session = await drainAll(alice.shadow);
        const app = await drainAll(t.appShadow);
        assert.deepEqual(
          session.map(id).sort(),
          ids(first.filter((m) => m.headers?.[USER] === 'alice')).sort(),
        );
        assert.deepEqual(app.map(id).sort(), ids(first.filter((m) => m.headers?.[USER] === 'bob')).sort());
        assertKept('session shadow', session);
        assertKept('app shadow', app);
        // Hop 2: the route leaves, its residue moves to the app shadow; hop 3: rollback to the source.
        const second = batch('rk2', 4, (i) => ({ [USER]: i % 2 ? 'alice' : 'bob' }));
        await send(second);
        await pollUntil(
          'copied to both shadows',
          () => Promise.all([alice.shadow, t.appShadow].map((q) => withChannel((ch) => ch.checkQueue(q)))),
          (qs) => qs.every((q) => q.messageCount === 2),
          20_000,
        );
        done(await e.reconcileRoutes(2, []), 'reconcileRoutes');
        await untilDone(() => e.drainRoute(alice), 'drainRoute');
        await untilDone(() => e.abort(), 'abort');
        const rolledBack = await drainAll(t.source);
        assert.deepEqual(rolledBack.map(id).sort(), ids(second).sort());
        assertKept('source after rollback', rolledBack);
        // Cleanup deletes the routing exchange: the restart test below proves it.
      }));

    test('headers of every AMQP type keep their type and value in copies', () =>
      withSplit(h, async (t, engines) => {
        const e = engines.track(h.engine(t, { logger: testLogger() }));
        const alice = t.route('alice', { [USER]: 'alice' });
        await running(e, 1, [alice]);
        // Produced by pika (not amqplib); every header's encoding, type tag and bytes.
        const label = uniqueName('typed');
        const sent = JSON.parse(
          await pika('publish', t.source, `${label}-a:alice`, `${label}-b:bob`),
        ) as Record<string, string>;
        const copies = [
          ...(JSON.parse(await pika('read', alice.shadow, '1')) as PikaCopy[]),
          ...(JSON.parse(await pika('read', t.appShadow, '1')) as PikaCopy[]),
        ];
        assert.deepEqual(copies.map((c) => c.id).sort(), [`${label}-a`, `${label}-b`]);
        for (const copy of copies) {
          for (const [name, encoding] of Object.entries(sent)) {
            const got = copy.headers[name];
            assert.equal(
              got,
              encoding,
              `${copy.id}: header ${name} was sent as ${describeField(encoding)}, arrived as ${got === undefined ? 'nothing' : describeField(got)}`,
            );
          }
        }
      }));

    test("broker-added headers: a copy drops the source's x-delivery-count and keeps x-death / x-first-death-*", () =>
      withSplit(h, async (t, engines) => {
        // A real dead-letter hop into the source (x-death, x-first-death-*), then a redelivery
        // in the source (a consumer that left without acking: x-delivery-count on quorum).
        const dlq = uniqueName(`rq-dlx-${type}`);
        await withChannel((ch) =>
          ch.assertQueue(dlq, {
            durable: true,
            arguments: { 'x-dead-letter-exchange': '', 'x-dead-letter-routing-key': t.source },
          }),
        );
        try {
          const input = batch('dead', 3, () => ({ [USER]: 'bob' }));
          await withChannel(async (ch) => {
            for (const m of input)
              ch.publish('', dlq, Buffer.from(m.id), { messageId: m.id, headers: m.headers });
            await ch.waitForConfirms();
            for (let i = 0; i < input.length; i++) {
              const got = await ch.get(dlq, { noAck: false });
              assert.ok(got, 'dead-letter queue delivered');
              ch.reject(got, false); // dead-lettered into the source
            }
          });
          await pollUntil(
            'dead-lettered into the source',
            () => h.backlog(t.source).catch(() => -1),
            (n) => n === input.length,
            20_000,
          );
          const app = await h.consume(t.source, { prefetch: 10, ackFirst: 0 });
          await pollUntil(
            'app holds them',
            async () => app.received.length,
            (n) => n === input.length,
            10_000,
          );
          await app.kill(); // redelivered from now on
          const e = engines.track(h.engine(t, { logger: testLogger() }));
          await pollUntil(
            'engine starts once the app left',
            () =>
              running(e, 1, []).then(
                () => true,
                () => false,
              ),
            Boolean,
            20_000,
          );
          const copies = await drainAll(t.appShadow);
          assert.deepEqual(copies.map((m) => String(m.properties.messageId)).sort(), ids(input).sort());
          for (const m of copies) {
            const headers = m.properties.headers ?? {};
            assert.equal(
              headers['x-delivery-count'],
              undefined,
              `x-delivery-count ${String(headers['x-delivery-count'])} describes the source's redeliveries, not the copy`,
            );
            // The rest of the fidelity list (rabbitmq/harness.ts), on the same redelivered input.
            assert.equal(m.fields.redelivered, false, 'a copy is delivered fresh');
            assert.equal(m.fields.routingKey, t.source, "a copy keeps the dead-lettering's routing key");
            assert.equal(m.properties.deliveryMode, 2, 'a copy is persistent');
            const death = headers['x-death'] as { queue?: string; reason?: string }[] | undefined;
            assert.ok(Array.isArray(death) && death[0]?.queue === dlq, 'x-death kept');
            assert.equal(death[0]?.reason, 'rejected');
            assert.equal(headers['x-first-death-queue'], dlq, 'x-first-death-queue kept');
            assert.equal(headers['x-first-death-reason'], 'rejected');
          }
        } finally {
          await withChannel((ch) => ch.deleteQueue(dlq)).catch(() => undefined);
        }
      }));
  });
}

/** The exchanges an engine made: every one is named after its routing exchange, which is named
 * like the application shadow (agent/rabbitmq/routing.ts). */
const exchangesOf = (appShadow: string) => exchangesStartingWith(services.rabbitManagementUrl, appShadow);

/** The one exchange (besides the default) `queue` is bound to. */
async function exchangeOf(queue: string): Promise<string> {
  const bound = await exchangesBoundTo(services.rabbitManagementUrl, queue);
  assert.equal(bound.length, 1, `${queue} is bound to ${bound.join(', ') || 'no exchange'}`);
  return bound[0]!;
}

test("the split's routing exchanges survive a restart and a restart mid-cleanup leaves none behind, nor an earlier agent's headers exchange", () => {
  const h = rabbitHarness('classic');
  return withSplit(h, async (t, engines) => {
    const e = engines.track(h.engine(t, { logger: testLogger() }));
    const alice = t.route('alice', { [USER]: 'alice' });
    const started = await running(e, 1, [alice]);
    const made = await exchangesOf(t.appShadow);
    assert.equal(made.length, 2, `one exchange per destination: ${made.join(', ')}`);
    assert.deepEqual([await exchangeOf(t.appShadow), await exchangeOf(alice.shadow)].sort(), made.sort());
    // The agent dies and the exchanges go behind its back (an operator, a broker reset): the
    // successor declares and binds them again before its first copy.
    await e.close();
    await deleteExchangesStartingWith(services.rabbitManagementUrl, t.appShadow);
    const successor = engines.track(h.engine(t, { logger: testLogger() }));
    await untilDone(
      () => successor.recover(started.checkpoint, { generation: 1, routes: [alice] }),
      'recover',
    );
    const toApp = batch('restart', 2, () => ({ [USER]: 'bob' }));
    const toAlice = batch('restart-alice', 2, () => ({ [USER]: 'alice' }));
    await h.produce(t, [...toApp, ...toAlice]);
    assertDelivery({
      inputs: ids([...toApp, ...toAlice]),
      destinations: {
        app: seenIds(await h.read(t.appShadow, ids(toApp))),
        [alice.shadow]: seenIds(await h.read(alice.shadow, ids(toAlice))),
      },
    });
    assert.deepEqual((await exchangesOf(t.appShadow)).sort(), made.sort(), 'the same names again');
    const aborted = await untilDone(() => successor.abort(), 'abort');
    // The rollback moved the shadows back to the source through the source's own exchange.
    const sourceExchange = await exchangeOf(t.source);
    assert.ok(sourceExchange.startsWith(t.appShadow), `${sourceExchange} is the engine's`);
    // An earlier agent's single headers exchange, named like the routing exchange itself, as an
    // upgrade finds it: cleanup deletes it too.
    await withChannel(async (ch) => {
      await ch.assertExchange(t.appShadow, 'headers', { durable: true, autoDelete: false });
      await ch.bindQueue(t.appShadow, t.appShadow, '', {
        'x-match': 'all-with-x',
        'x-queue-split-to': t.appShadow,
      });
    });
    // Cleanup dies before it finishes (the shadow delete fails once): the exchanges are still
    // there, and the next agent's cleanup, from the checkpoint alone, deletes them.
    await successor.close();
    const dying = engines.track(
      h.engine(t, {
        logger: testLogger(),
        hooks: {
          beforeShadowDelete: () => {
            throw new Error('the agent dies mid-cleanup');
          },
        },
      }),
    );
    done(await dying.recover(aborted.checkpoint), 'recover into aborted');
    assert.notEqual((await dying.cleanup()).kind, 'done');
    await dying.close();
    assert.ok((await exchangesOf(t.appShadow)).length > 0, 'kept while a shadow is not deleted');
    const last = engines.track(h.engine(t, { logger: testLogger() }));
    done(await last.recover(aborted.checkpoint), 'recover into aborted');
    await untilDone(() => last.cleanup(), 'cleanup');
    assert.deepEqual(await exchangesOf(t.appShadow), [], 'an exchange of the split was left behind');
    assert.deepEqual(
      await exchangesBoundTo(services.rabbitManagementUrl, t.source),
      [],
      'the source is unbound',
    );
  }).finally(() => h.close());
});

test("a destination's exchange deleted behind a running engine is declared again and no copy is lost", () => {
  const h = rabbitHarness('classic');
  return withSplit(h, async (t, engines) => {
    const e = engines.track(h.engine(t, { logger: testLogger() }));
    const alice = t.route('alice', { [USER]: 'alice' });
    await running(e, 1, [alice]);
    const first = batch('before', 4, () => ({ [USER]: 'alice' }));
    await h.produce(t, first);
    await h.read(alice.shadow, ids(first));
    const exchange = await exchangeOf(alice.shadow);
    await withChannel((ch) => ch.deleteExchange(exchange));
    // A copy to the missing exchange closes the engine's publishing channel: it and every copy
    // unconfirmed with it are retried (the broker may hold them: duplicates allowed, no loss).
    const toAlice = batch('after-alice', 6, () => ({ [USER]: 'alice' }));
    const toApp = batch('after-app', 6, () => ({ [USER]: 'bob' }));
    const input = [...toAlice, ...toApp];
    await h.produce(t, input);
    assertDelivery({
      inputs: ids(input),
      destinations: {
        [alice.shadow]: seenIds(await h.read(alice.shadow, ids(toAlice))),
        app: seenIds(await h.read(t.appShadow, ids(toApp))),
      },
      mayDuplicate: ids(input),
    });
    assert.equal(await exchangeOf(alice.shadow), exchange, 'declared and bound again, under its name');
  }).finally(() => h.close());
});

test("a drained route's exchange is deleted with its shadow", () => {
  const h = rabbitHarness('classic');
  return withSplit(h, async (t, engines) => {
    const e = engines.track(h.engine(t, { logger: testLogger() }));
    const alice = t.route('alice', { [USER]: 'alice' });
    await running(e, 1, [alice]);
    const exchange = await exchangeOf(alice.shadow);
    const appExchange = await exchangeOf(t.appShadow);
    done(await e.reconcileRoutes(2, []), 'reconcile without alice');
    await untilDone(() => e.drainRoute(alice), 'drainRoute');
    assert.equal(await h.exists(alice.shadow), false, 'the shadow is deleted');
    assert.deepEqual(await exchangesOf(t.appShadow), [appExchange], `${exchange} is deleted with it`);
  }).finally(() => h.close());
});

test('a publish lost with its channel is retried to the destination of its own generation, not re-routed under the newest table', async () => {
  const label = uniqueName('rq-lost');
  const [source, oldShadow, newShadow] = ['source', 'old', 'new'].map((r) => `${label}-${r}`) as [
    string,
    string,
    string,
  ];
  await withChannel(async (ch) => {
    for (const q of [source, oldShadow, newShadow]) await ch.assertQueue(q, { durable: true });
    ch.publish('', source, Buffer.from('one'), { messageId: `${label}-m`, persistent: true });
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
  const barrier = new PublishBarrier();
  try {
    const up = await session.ensureUp();
    assert.equal(up.kind, 'up');
    if (up.kind !== 'up') return;
    const link = up.link;
    // Generation 1 routes the message to `old`; the first publish is sent and its channel
    // closed before the confirm (ambiguous: the broker has it). Generation 2 routes to `new`.
    let generation = 1;
    let publishes = 0;
    const select = (): RelaySelection => {
      if (++publishes === 1) {
        queueMicrotask(() => {
          void link.currentPublisher()?.close();
          generation = 2;
        });
      }
      return { destination: generation === 1 ? oldShadow : newShadow, routeId: undefined, generation };
    };
    const routes = new RouteNames(`${label}-x`);
    for (const q of [oldShadow, newShadow])
      assert.deepEqual(await ensureRoute(link, routes, q), { ok: true });
    const relay = new Relay({
      queue: source,
      routes,
      prefetch: 10,
      consumerTag: `${label}-relay`,
      engineUser: amqpTarget(services.amqpUrl, 10).username,
      select,
      barrier,
      retryInitialMs: 100,
      retryMaxMs: 500,
      logger: silentLogger,
    });
    await relay.start(link);
    await pollUntil(
      'relayed',
      async () => relay.routed,
      (n) => n === 1,
      10_000,
    );
    await relay.stop(2_000);
    const inOld = (await drainAll(oldShadow, 500)).map((m) => String(m.properties.messageId));
    const inNew = (await drainAll(newShadow, 500)).map((m) => String(m.properties.messageId));
    assert.deepEqual(inNew, [], `the retry went to generation 2's destination while generation 1's had it`);
    // The lost publish reached the broker before its channel closed, so the retry makes a
    // duplicate in the same destination (allowed), never a copy in a second one.
    assert.equal(inOld.length, 2, `the lost publish and its retry are both in the old destination`);
  } finally {
    await session.close();
    await withChannel(async (ch) => {
      for (const q of [source, oldShadow, newShadow]) await ch.deleteQueue(q).catch(() => undefined);
    }).catch(() => undefined);
    await deleteExchangesStartingWith(services.rabbitManagementUrl, `${label}-x`).catch(() => undefined);
  }
});
