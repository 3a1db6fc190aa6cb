// What the shadows reproduce of a RabbitMQ source's rules (README "What the shadows reproduce",
// agent/rabbitmq/shadowArguments.ts): during a split the application, an app whose client is
// Debian's pika, meets the dead-lettering, TTL, length limits, overflow and priority its source
// has, whether they come from the declaration or from an operator's policy, with the reason
// headers RabbitMQ writes. Each case was refused before (a split of a policy-dead-lettered
// queue lost the messages the app rejected or let expire).
import assert from 'node:assert/strict';
import { after, describe, test } from 'node:test';
import type { Engine, RouteSpec } from '../../agent/engine/contract';
import { RabbitEngine } from '../../agent/rabbitmq/engine';
import { pollUntil } from '../support/poll';
import { deleteExchangesStartingWith, deletePolicy, getQueue, putPolicy } from '../support/rabbitManagement';
import { loadServices, uniqueName } from '../support/services';
import { rabbitConnection } from './rabbitmq/connection';
import { runPika } from './rabbitmq/pikaClient';
import { USER } from './delivery';
import { running } from './steps';
import { testTiming } from './timing';

const services = loadServices();
const { withChannel: onChannel, close } = rabbitConnection(services.amqpUrl);
after(close);

interface AppMessage {
  id: string;
  expiration?: string;
  priority?: number;
  headers?: Record<string, string>;
}

/** The application's own client (pika). */
const app = {
  declare: (queue: string, args: Record<string, unknown>) =>
    runPika('pika_app.py', ['declare', services.amqpUrl, queue, JSON.stringify(args)]),
  publish: (queue: string, messages: AppMessage[]) =>
    runPika('pika_app.py', ['publish', services.amqpUrl, queue, JSON.stringify(messages)]),
  reject: async (queue: string, count: number) =>
    JSON.parse(await runPika('pika_app.py', ['reject', services.amqpUrl, queue, String(count)])) as string[],
  read: async (queue: string, count: number) =>
    JSON.parse(await runPika('pika_app.py', ['read', services.amqpUrl, queue, String(count)])) as {
      id: string;
      priority: number | null;
    }[],
};

interface DeadLetter {
  id: string;
  routingKey: string;
  reason: unknown;
  queue: unknown;
  routingKeys: unknown;
  firstReason: unknown;
}

const ready = async (queue: string) => onChannel(async (ch) => (await ch.checkQueue(queue)).messageCount);

/** Takes exactly `count` messages off the dead-letter queue, and proves no more arrive. */
async function deadLetters(queue: string, count: number): Promise<DeadLetter[]> {
  await pollUntil(
    `${count} messages dead-lettered into ${queue}`,
    () => ready(queue),
    (n) => n >= count,
    30_000,
  );
  return onChannel(async (ch) => {
    const out: DeadLetter[] = [];
    for (let msg = await ch.get(queue, { noAck: true }); msg; msg = await ch.get(queue, { noAck: true })) {
      const headers = msg.properties.headers ?? {};
      const death = (headers['x-death'] as Record<string, unknown>[] | undefined)?.[0] ?? {};
      out.push({
        id: String(msg.properties.messageId),
        routingKey: msg.fields.routingKey,
        reason: death.reason,
        queue: death.queue,
        routingKeys: death['routing-keys'],
        firstReason: headers['x-first-death-reason'],
      });
    }
    return out;
  });
}

interface Split {
  readonly engine: Engine;
  readonly source: string;
  readonly appShadow: string;
  readonly aliceShadow: string;
  readonly dlx: string;
  readonly dlq: string;
  remove(): Promise<void>;
}

/** A source the app (pika) declared, a dead-letter exchange and queue, and a running split with
 * a route for alice. */
async function split(
  label: string,
  sourceArgs: Record<string, unknown>,
  dlxType: 'fanout' | 'direct',
  policy?: Record<string, unknown>,
): Promise<Split> {
  const source = `${label}-source`;
  const dlx = `${label}-dlx`;
  const dlq = `${label}-dlq`;
  const appShadow = `${label}-app`;
  const aliceShadow = `${label}-alice`;
  const lock = `${label}-lock`;
  const policyName = `${label}-policy`;
  await onChannel(async (ch) => {
    await ch.assertExchange(dlx, dlxType, { durable: true });
    await ch.assertQueue(dlq, { durable: true });
    await ch.bindQueue(dlq, dlx, dlxType === 'direct' ? 'dead' : '');
  });
  await app.declare(source, sourceArgs);
  if (policy) {
    await putPolicy(services.rabbitManagementUrl, policyName, `^${source}$`, policy);
    await pollUntil(
      'the policy applies to the source',
      async () => (await getQueue(services.rabbitManagementUrl, source)).policy,
      (p) => p === policyName,
      30_000,
    );
  }
  const engine = new RabbitEngine({
    activationId: label,
    epoch: 1,
    amqpUrl: services.amqpUrl,
    managementUrl: services.rabbitManagementUrl,
    sourceQueue: source,
    appShadow,
    lockQueue: lock,
    timing: testTiming,
  });
  const remove = async () => {
    await engine.close().catch(() => undefined);
    if (policy) await deletePolicy(services.rabbitManagementUrl, policyName);
    await onChannel(async (ch) => {
      for (const q of [source, appShadow, aliceShadow, lock, dlq])
        await ch.deleteQueue(q).catch(() => undefined);
    });
    await onChannel(async (ch) => {
      await ch.deleteExchange(dlx).catch(() => undefined);
    });
    // The engine's exchanges are named after the application shadow.
    await deleteExchangesStartingWith(services.rabbitManagementUrl, appShadow).catch(() => undefined);
  };
  const route: RouteSpec = { routeId: 'alice', filter: { [USER]: 'alice' }, shadow: aliceShadow };
  try {
    await running(engine, 1, [route]);
  } catch (err) {
    await remove();
    throw err;
  }
  return { engine, source, appShadow, aliceShadow, dlx, dlq, remove };
}

const alice = { [USER]: 'alice' };
const range = (prefix: string, n: number, extra: Omit<AppMessage, 'id'> = {}): AppMessage[] =>
  Array.from({ length: n }, (_, i) => ({ id: `${prefix}-${i + 1}`, ...extra }));

for (const type of ['classic', 'quorum'] as const) {
  describe(`the shadows of a ${type} source keep its rules`, { concurrency: 1 }, () => {
    test('dead-lettering and TTL from a policy: what the app rejects and what expires during a split reach the dead-letter queue, with the reason headers RabbitMQ writes without a split', async () => {
      const label = uniqueName(`rules-policy-${type}`);
      const policy = { 'dead-letter-exchange': `${label}-dlx`, 'message-ttl': 600_000 };
      // Without a split first: the headers RabbitMQ writes for the source itself.
      const source = `${label}-source`;
      await onChannel(async (ch) => {
        await ch.assertExchange(`${label}-dlx`, 'fanout', { durable: true });
        await ch.assertQueue(`${label}-dlq`, { durable: true });
        await ch.bindQueue(`${label}-dlq`, `${label}-dlx`, '');
      });
      await app.declare(source, { 'x-queue-type': type });
      await putPolicy(services.rabbitManagementUrl, `${label}-policy`, `^${source}$`, policy);
      await pollUntil(
        'the policy applies to the source',
        async () => (await getQueue(services.rabbitManagementUrl, source)).policy,
        (p) => p === `${label}-policy`,
        30_000,
      );
      await app.publish(source, [{ id: 'control-expired', expiration: '200' }]);
      await pollUntil(
        'the control message expired',
        () => ready(`${label}-dlq`),
        (n) => n === 1,
        30_000,
      );
      await app.publish(source, [{ id: 'control-rejected' }]);
      assert.deepEqual(await app.reject(source, 1), ['control-rejected']);
      const control = new Map((await deadLetters(`${label}-dlq`, 2)).map((d) => [d.id, d]));
      const s = await split(label, { 'x-queue-type': type }, 'fanout', policy);
      try {
        const shadowArgs = (await getQueue(services.rabbitManagementUrl, s.appShadow)).arguments;
        assert.equal(shadowArgs['x-dead-letter-exchange'], s.dlx, JSON.stringify(shadowArgs));
        assert.equal(shadowArgs['x-message-ttl'], 600_000, JSON.stringify(shadowArgs));
        // Expiring ones first: a queue expires messages at its head.
        await app.publish(s.source, [
          ...range('expired', 4, { expiration: '300' }),
          ...range('alice-expired', 2, { expiration: '300', headers: alice }),
        ]);
        await pollUntil(
          'the expired copies dead-lettered',
          () => ready(s.dlq),
          (n) => n === 6,
          30_000,
        );
        await app.publish(s.source, range('rejected', 4));
        await pollUntil(
          'the copies reached the app shadow',
          () => ready(s.appShadow),
          (n) => n === 4,
          30_000,
        );
        assert.deepEqual(
          (await app.reject(s.appShadow, 4)).sort(),
          range('rejected', 4).map((m) => m.id),
        );
        const dead = await deadLetters(s.dlq, 10);
        assert.deepEqual(
          dead.map((d) => d.id).sort(),
          [...range('alice-expired', 2), ...range('expired', 4), ...range('rejected', 4)]
            .map((m) => m.id)
            .sort(),
          'every message the app rejected or let expire is dead-lettered, once',
        );
        for (const d of dead) {
          const like = control.get(d.id.includes('rejected') ? 'control-rejected' : 'control-expired')!;
          assert.equal(d.reason, like.reason, `${d.id}: x-death reason as without a split`);
          assert.equal(d.firstReason, like.firstReason, `${d.id}: x-first-death-reason as without a split`);
          assert.deepEqual(d.routingKeys, like.routingKeys, `${d.id}: the producer's routing keys`);
          assert.equal(
            d.routingKey,
            like.routingKey,
            `${d.id}: dead-lettered with the producer's routing key`,
          );
          const shadow = d.id.startsWith('alice') ? s.aliceShadow : s.appShadow;
          assert.ok(d.queue === shadow || d.queue === s.source, `${d.id}: x-death names ${String(d.queue)}`);
        }
        assert.equal(await ready(s.appShadow), 0);
        assert.equal(await ready(s.aliceShadow), 0);
      } finally {
        await s.remove();
      }
    });
  });
}

describe('the shadows of a classic source declared with arguments keep its rules', { concurrency: 1 }, () => {
  test('x-max-priority, x-max-length with drop-head and a dead-letter routing key: the app reads by priority, and the head past the limit is dead-lettered as from the source', async () => {
    const label = uniqueName('rules-args');
    const s = await split(
      label,
      {
        'x-dead-letter-exchange': `${label}-dlx`,
        'x-dead-letter-routing-key': 'dead',
        'x-max-priority': 5,
        'x-max-length': 4,
        'x-overflow': 'drop-head',
      },
      'direct',
    );
    try {
      await app.publish(s.source, [
        { id: 'low-1', priority: 1 },
        { id: 'low-2', priority: 1 },
        { id: 'high-1', priority: 5 },
        { id: 'high-2', priority: 5 },
      ]);
      await pollUntil(
        'four copies in the app shadow',
        () => ready(s.appShadow),
        (n) => n === 4,
        30_000,
      );
      assert.deepEqual(
        (await app.read(s.appShadow, 4)).map((m) => m.id),
        ['high-1', 'high-2', 'low-1', 'low-2'],
        'the app shadow delivers by priority, as the source does',
      );
      await app.publish(s.source, range('m', 6));
      const dead = await deadLetters(s.dlq, 2);
      assert.deepEqual(
        dead.map((d) => [d.id, d.reason, d.routingKey]),
        [
          ['m-1', 'maxlen', 'dead'],
          ['m-2', 'maxlen', 'dead'],
        ],
      );
      assert.deepEqual(
        (await app.read(s.appShadow, 4)).map((m) => m.id),
        ['m-3', 'm-4', 'm-5', 'm-6'],
      );
    } finally {
      await s.remove();
    }
  });

  test('x-max-length with reject-publish: a full app shadow keeps the next message in the source, never drops it, and takes it once the app reads', async () => {
    const label = uniqueName('rules-reject');
    const s = await split(label, { 'x-max-length': 2, 'x-overflow': 'reject-publish' }, 'fanout');
    try {
      await app.publish(s.source, range('full', 3));
      await pollUntil(
        'two copies in the app shadow',
        () => ready(s.appShadow),
        (n) => n === 2,
        30_000,
      );
      await pollUntil(
        'the engine reports the refused copy',
        async () =>
          s.engine
            .status()
            .conditions.map((c) => c.reason)
            .join(' '),
        (text) => /nacked|refus/i.test(text),
        30_000,
      );
      assert.equal(await ready(s.dlq), 0, 'nothing dead-lettered');
      const read = await app.read(s.appShadow, 3);
      assert.deepEqual(
        read.map((m) => m.id).sort(),
        ['full-1', 'full-2', 'full-3'],
        'the third arrives once the app made room',
      );
    } finally {
      await s.remove();
    }
  });
});
