// What a RabbitMQ shadow is declared with (agent/rabbitmq/shadowArguments.ts): the source's
// arguments and its effective policy, merged as RabbitMQ merges them; unknown arguments refused.
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { checkSource } from '../../../agent/rabbitmq/sourceCheck';
import type { ManagementQueue } from '../../../agent/rabbitmq/management';
import { sameArguments, shadowArguments } from '../../../agent/rabbitmq/shadowArguments';

const queue = (over: Partial<ManagementQueue>): ManagementQueue => ({
  name: 'orders',
  type: 'classic',
  durable: true,
  auto_delete: false,
  exclusive: false,
  arguments: {},
  ...over,
});

test('declaration arguments that decide a message fate are copied to the shadows as the source has them', () => {
  const r = shadowArguments('orders', 'classic', {
    arguments: {
      'x-dead-letter-exchange': 'dlx',
      'x-dead-letter-routing-key': 'dead',
      'x-message-ttl': 60_000,
      'x-max-length': 10,
      'x-overflow': 'drop-head',
      'x-max-priority': 5,
      'x-single-active-consumer': true,
    },
  });
  assert.ok(r.ok);
  assert.deepEqual(r.value.arguments, {
    'x-queue-type': 'classic',
    'x-dead-letter-exchange': 'dlx',
    'x-dead-letter-routing-key': 'dead',
    'x-message-ttl': 60_000,
    'x-max-length': 10,
    'x-overflow': 'drop-head',
    'x-max-priority': 5,
    'x-single-active-consumer': true,
  });
});

test('a policy gives the shadows what it gives the source: argument wins for the exchange, the lower limit wins', () => {
  const r = shadowArguments('orders', 'quorum', {
    arguments: { 'x-queue-type': 'quorum', 'x-message-ttl': 5_000, 'x-dead-letter-exchange': 'mine' },
    effective_policy_definition: {
      'dead-letter-exchange': 'policy-dlx',
      'message-ttl': 60_000,
      'max-length': 100,
      'delivery-limit': 3,
      'queue-leader-locator': 'balanced',
      expires: 1_000,
    },
  });
  assert.ok(r.ok);
  assert.deepEqual(r.value.arguments, {
    'x-queue-type': 'quorum',
    'x-message-ttl': 5_000,
    'x-dead-letter-exchange': 'mine',
    'x-max-length': 100,
    'x-delivery-limit': 3,
  });
  assert.deepEqual(r.value.fromPolicy, ['max-length', 'delivery-limit']);
  assert.deepEqual(r.value.notInherited, ['queue-leader-locator', 'expires']);
  const lower = shadowArguments('orders', 'classic', {
    arguments: { 'x-max-length': 500 },
    effective_policy_definition: { 'max-length': 20 },
  });
  assert.ok(lower.ok);
  assert.equal(lower.value.arguments['x-max-length'], 20);
});

test('reject-publish-dlx becomes reject-publish on a shadow, and x-expires is never copied', () => {
  const r = shadowArguments('orders', 'classic', {
    arguments: { 'x-overflow': 'reject-publish-dlx', 'x-max-length': 3, 'x-expires': 60_000 },
  });
  assert.ok(r.ok);
  assert.equal(r.value.arguments['x-overflow'], 'reject-publish');
  assert.equal(r.value.arguments['x-expires'], undefined);
});

test('an argument the engine does not know is refused, named, with the ones it reproduces', () => {
  const r = checkSource(
    'orders',
    queue({ arguments: { 'x-acme-routing-hint': 'left', 'x-max-priority': 5 } }),
  );
  assert.equal(r.ok, false);
  assert.ok(!r.ok);
  assert.match(r.errors[0]!.problem, /x-acme-routing-hint/);
  assert.doesNotMatch(r.errors[0]!.problem, /x-max-priority/);
  assert.match(r.errors[0]!.fix, /x-dead-letter-exchange/);
});

test('preflight of a source with dead-lettering from a policy: accepted, shadows carry it, the placement key is named', () => {
  const r = checkSource(
    'orders',
    queue({
      policy: 'dlx-policy',
      effective_policy_definition: { 'dead-letter-exchange': 'dlx', 'message-ttl': 1000, 'ha-mode': 'all' },
    }),
  );
  assert.ok(r.ok);
  assert.equal(r.value.shadows.arguments['x-dead-letter-exchange'], 'dlx');
  assert.equal(r.value.shadows.arguments['x-message-ttl'], 1000);
  assert.equal(r.value.warnings.length, 1);
  assert.match(r.value.warnings[0]!, /dlx-policy.*ha-mode/);
});

test('sameArguments compares every key both ways', () => {
  assert.ok(sameArguments({ a: 1, b: 'x' }, { b: 'x', a: 1 }));
  assert.ok(!sameArguments({ a: 1 }, { a: 1, b: true }));
  assert.ok(!sameArguments({ a: 1 }, { a: 2 }));
});
