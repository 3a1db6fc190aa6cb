// RabbitMQ-only behaviour of the engine (docs/design.md §7) that the provider-neutral suite cannot
// phrase: management-API preflight refusals, ownership on classic vs quorum sources, capped
// prefetch, reconnection after connection loss, and logs free of secrets.
import assert from 'node:assert/strict';
import { after, describe, test } from 'node:test';
import * as amqp from 'amqplib';
import type { Engine } from '../../agent/engine/contract';
import { jsonLogger, redact } from '../../agent/log';
import { RabbitEngine } from '../../agent/rabbitmq/engine';
import { pollUntil } from '../support/poll';
import { getQueue, queueExists } from '../support/rabbitManagement';
import { loadServices, uniqueName } from '../support/services';
import { rabbitConnection } from './rabbitmq/connection';
import { rabbitHarness } from './rabbitmq/harness';
import { assertDelivery, batch, ids, seenIds, USER } from './delivery';
import { done, expectPending, running } from './steps';
import { waitFor, withSplit } from './support';
import { testTiming } from './timing';

const services = loadServices();
const { connection, close } = rabbitConnection(services.amqpUrl);
after(close);

/** An engine on an arbitrary source, outside any harness topology. */
function engineFor(source: string): Engine {
  const label = uniqueName('rq');
  return new RabbitEngine({
    activationId: label,
    epoch: 1,
    amqpUrl: services.amqpUrl,
    managementUrl: services.rabbitManagementUrl,
    sourceQueue: source,
    appShadow: `${label}-app`,
    lockQueue: `${label}-lock`,
    timing: { ...testTiming, stepTimeoutMs: 2_500 },
  });
}

describe('RabbitMQ preflight refuses sources the split cannot own', { concurrency: 1 }, () => {
  const cases: {
    what: string;
    declare: amqp.Options.AssertQueue;
    problem: RegExp;
    sameConnection?: boolean;
  }[] = [
    {
      what: 'a stream',
      declare: { durable: true, arguments: { 'x-queue-type': 'stream' } },
      problem: /stream/,
    },
    { what: 'an exclusive queue', declare: { durable: false, exclusive: true }, problem: /exclusive/ },
    { what: 'an auto-delete queue', declare: { durable: true, autoDelete: true }, problem: /auto-delete/ },
    { what: 'a transient queue', declare: { durable: false }, problem: /not durable/ },
    {
      // The arguments the shadows reproduce are accepted (rabbitmq-source-rules.test.ts).
      what: 'a queue with a declaration argument the engine does not know',
      declare: { durable: true, arguments: { 'x-acme-routing-hint': 'left', 'x-max-length': 10 } },
      problem: /x-acme-routing-hint/,
    },
  ];
  for (const c of cases) {
    test(`refuses ${c.what}`, async () => {
      const source = uniqueName('rq-src');
      const ch = await (await connection()).createChannel();
      ch.on('error', () => undefined);
      await ch.assertQueue(source, c.declare);
      const e = engineFor(source);
      try {
        const outcome = await e.prepare();
        assert.equal(outcome.kind, 'rejected', JSON.stringify(outcome));
        if (outcome.kind === 'rejected') {
          assert.equal(outcome.errors[0]?.path, 'source');
          assert.match(outcome.errors.map((err) => err.problem).join(' '), c.problem);
          assert.ok(outcome.errors[0]?.fix, 'every refusal says how to fix it');
        }
        assert.equal(e.status().phase, 'new');
        assert.equal(e.status().app.published, 0);
      } finally {
        await e.close();
        await ch.deleteQueue(source).catch(() => undefined);
        await ch.close().catch(() => undefined);
      }
    });
  }

  test('refuses a source that does not exist, and creates nothing', async () => {
    const source = uniqueName('rq-missing');
    const e = engineFor(source);
    try {
      const outcome = await e.prepare();
      assert.equal(outcome.kind, 'rejected');
      if (outcome.kind === 'rejected') assert.match(outcome.errors[0]!.problem, /does not exist/);
      assert.equal(await queueExists(services.rabbitManagementUrl, source), false);
    } finally {
      await e.close();
    }
  });
});

for (const type of ['classic', 'quorum'] as const) {
  describe(`RabbitMQ engine on a ${type} source`, { concurrency: 1 }, () => {
    const h = rabbitHarness(type);
    after(() => h.close());

    test('start waits while another consumer is on the source (the app has not quiesced)', () =>
      withSplit(h, async (t, engines) => {
        const e = engines.track(h.engine(t, { stepTimeoutMs: 2_500 }));
        done(await e.prepare(), 'prepare');
        const app = await h.consume(t.source, { prefetch: 1, ackFirst: 0 });
        expectPending(await e.start(), 'consumers-attached', 'start with the app consuming');
        assert.equal(e.status().phase, 'prepared');
        await app.kill();
        await pollUntil(
          'start once the app left',
          () => e.start(),
          (o) => o.kind === 'done',
          20_000,
        );
      }));

    test(
      type === 'classic'
        ? 'a foreign consumer is refused by the exclusive consume'
        : 'a foreign consumer is admitted by the broker and reported DEGRADED',
      () =>
        withSplit(h, async (t, engines) => {
          const e = engines.track(h.engine(t));
          await running(e, 1, []);
          const ch = await (await connection()).createChannel();
          const closed = new Promise<unknown>((resolve) => ch.on('error', resolve));
          const consumed = ch.consume(t.source, () => undefined);
          if (type === 'classic') {
            await assert.rejects(consumed, /ACCESS_REFUSED|403/);
            await closed;
            assert.equal(e.status().health, 'ok');
            return;
          }
          const { consumerTag } = await consumed;
          await waitFor(
            'foreign consumer reported',
            async () => e.status().conditions.map((c) => c.code),
            (codes) => codes.includes('foreign-consumer'),
          );
          assert.equal(e.status().health, 'degraded');
          await ch.cancel(consumerTag);
          await ch.close();
          await waitFor(
            'condition cleared',
            async () => e.status().health,
            (h) => h === 'ok',
          );
        }),
    );

    test('prefetch is capped: a stalled pump holds at most `prefetch` source deliveries', () =>
      withSplit(h, async (t, engines) => {
        const e = engines.track(h.engine(t, { prefetch: 5 }));
        const alice = t.route('alice', { [USER]: 'alice' });
        await running(e, 1, [alice]);
        await h.deleteBehindEngine(alice.shadow); // every publish now comes back unroutable
        const input = batch('stall', 20, () => ({ [USER]: 'alice' }));
        await h.produce(t, input);
        const q = await pollUntil(
          'source shows 5 unacked, 15 ready',
          () => getQueue(services.rabbitManagementUrl, t.source),
          (info) => info.messages_unacknowledged === 5 && info.messages_ready === 15,
        );
        assert.equal(q.messages_unacknowledged, 5);
        const retrying = e.status().retrying; // the held ones, minus any mid-retry right now
        assert.ok(retrying >= 1 && retrying <= 5, `retrying ${retrying}`);
        assert.equal(e.status().health, 'degraded');
        await h.recreate(alice.shadow);
        const seen = seenIds(await h.read(alice.shadow, ids(input)));
        assertDelivery({ inputs: ids(input), destinations: { [alice.shadow]: seen } });
      }));

    test('connection loss: reconnects with backoff, takes the fence again, resumes; nothing deleted or lost', () =>
      withSplit(h, async (t, engines) => {
        const e = engines.track(h.engine(t));
        const alice = t.route('alice', { [USER]: 'alice' });
        await running(e, 1, [alice]);
        const before = batch('before', 6, (i) => ({ [USER]: i % 2 ? 'alice' : 'bob' }));
        await h.produce(t, before);
        await waitFor(
          'copied',
          () => h.backlog(t.source),
          (n) => n === 0,
        );
        await h.preempt(e);
        await waitFor('reconnected', async () => e.status().connected, Boolean);
        const later = batch('later', 6, (i) => ({ [USER]: i % 2 ? 'alice' : 'bob' }));
        await h.produce(t, later);
        const all = [...before, ...later];
        const seen = {
          [alice.shadow]: seenIds(
            await h.read(alice.shadow, ids(all.filter((m) => m.headers?.[USER] === 'alice'))),
          ),
          app: seenIds(await h.read(t.appShadow, ids(all.filter((m) => m.headers?.[USER] === 'bob')))),
        };
        assertDelivery({ inputs: ids(all), destinations: seen });
        assert.equal(e.status().phase, 'running');
        assert.equal(e.status().health, 'ok');
      }));
  });
}

test('logs carry no message bodies, header values or credentials', async () => {
  const lines: string[] = [];
  const h = rabbitHarness('classic');
  try {
    await withSplit(h, async (t, engines) => {
      const logger = jsonLogger((line) => lines.push(line), 'debug');
      const e = engines.track(h.engine(t, { logger }));
      const secretRoute = t.route('r1', { [USER]: 'secret-user-value' });
      await running(e, 1, [secretRoute]);
      const input = batch('log', 4, () => ({ [USER]: 'secret-user-value', other: 'secret-other-value' })).map(
        (m) => ({
          ...m,
          body: Buffer.from('secret-body-text'),
        }),
      );
      await h.produce(t, input);
      await h.read(secretRoute.shadow, ids(input));
      await h.preempt(e); // connection errors get logged too
      await waitFor('reconnected', async () => e.status().connected, Boolean);
      await h.deleteBehindEngine(secretRoute.shadow); // and unroutable publishes
      await h.produce(t, input.slice(0, 1));
      await waitFor('warned', async () => lines.some((l) => l.includes('publish-not-routed')), Boolean);
      await h.recreate(secretRoute.shadow);
    });
  } finally {
    await h.close();
  }
  const all = lines.join('\n');
  assert.ok(lines.length > 5, 'the engine logged');
  for (const secret of ['secret-user-value', 'secret-other-value', 'secret-body-text', 'guest:guest']) {
    assert.equal(all.includes(secret), false, `logs contain ${secret}`);
  }
  for (const line of lines) JSON.parse(line); // one JSON object per line
  assert.equal(
    redact('connect amqp://user:p%40ss@host:5672/vh failed'),
    'connect amqp://***@host:5672/vh failed',
  );
  assert.equal(redact('see http://admin:pw@mgmt:15672/api'), 'see http://***@mgmt:15672/api');
});
