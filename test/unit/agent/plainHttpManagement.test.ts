// RabbitMQ management credentials are never sent over plain http when AMQP
// uses TLS, unless the declaration says allowPlainHttpManagement: true. The queue-agent's
// preflight sees the values its pod env resolves to (Secrets included), which the controller's
// config check cannot.
import assert from 'node:assert/strict';
import { afterEach, test } from 'node:test';
import type { RabbitQueuePlan } from '../../../core/providers/rabbitmq/plan';
import { silentLogger } from '../../../agent/log';
import { EngineConfigError } from '../../../agent/providers/podEnv';
import { createEngine } from '../../../agent/providers/registry';
import { parseDesired, planNames } from '../../../core/agentDocuments';

const URL_ENV = 'QS_UNIT_PLAIN_MGMT_AMQP_URL';
const MGMT_ENV = 'QS_UNIT_PLAIN_MGMT_MANAGEMENT_URL';
const SECRET = 'hunter2-unit';

function plan(extra: Partial<RabbitQueuePlan> = {}): RabbitQueuePlan {
  return {
    name: 'invoices',
    provider: 'rabbitmq',
    source: 'invoices',
    env: { url: URL_ENV, managementUrl: MGMT_ENV },
    epoch: 1,
    names: { appShadow: 'qs-rapp-invoices-x', lockQueue: 'qs-lock-invoices-x' },
    ...extra,
  };
}

function preflight(amqpUrl: string, managementUrl: string, extra: Partial<RabbitQueuePlan> = {}) {
  process.env[URL_ENV] = amqpUrl;
  process.env[MGMT_ENV] = managementUrl;
  return createEngine('a/1', plan(extra), silentLogger);
}

afterEach(() => {
  delete process.env.QS_UNIT_PLAIN_MGMT_AMQP_URL;
  delete process.env.QS_UNIT_PLAIN_MGMT_MANAGEMENT_URL;
});

test('queue-agent preflight refuses a plain http management URL next to amqps, naming both env vars', () => {
  assert.throws(
    () => preflight(`amqps://app:${SECRET}@rabbit:5671/`, 'http://rabbit:15672'),
    (err: unknown) => {
      assert.ok(err instanceof EngineConfigError, String(err));
      assert.match(err.message, new RegExp(`${MGMT_ENV} is a plain http:// URL while ${URL_ENV} uses TLS`));
      assert.match(err.message, /https:\/\/ management URL, or set rabbitmq\.allowPlainHttpManagement: true/);
      assert.doesNotMatch(err.message, new RegExp(SECRET));
      assert.doesNotMatch(err.message, /rabbit:15672/);
      return true;
    },
  );
  // With a tls block the AMQP connection is TLS whatever the scheme check said earlier.
  assert.throws(
    () => preflight(`amqp://app:${SECRET}@rabbit:5671/`, 'http://rabbit:15672', { tls: {} }),
    EngineConfigError,
  );
});

test('queue-agent preflight accepts https management, plain amqp, and the explicit opt-in', () => {
  assert.ok(preflight(`amqps://app:${SECRET}@rabbit:5671/`, 'https://rabbit:15671'));
  assert.ok(preflight(`amqp://app:${SECRET}@rabbit:5672/`, 'http://rabbit:15672'));
  assert.ok(
    preflight(`amqps://app:${SECRET}@rabbit:5671/`, 'http://rabbit:15672', {
      allowPlainHttpManagement: true,
    }),
  );
});

test('the opt-in travels in the desired document the queue-agent reads', () => {
  const doc = {
    apiVersion: 'queuesplit.dev/desired/v1',
    activationId: 'a/1',
    generation: 1,
    phase: 'IDLE',
    queues: [
      plan({
        allowPlainHttpManagement: true,
        names: planNames('rabbitmq', { installId: 'a', workloadUid: '1', queue: 'invoices', epoch: 1 }),
      }),
    ],
    routes: [],
  };
  const parsed = parseDesired(JSON.stringify(doc));
  assert.ok(parsed.ok, JSON.stringify(parsed));
  const queue = parsed.value.queues[0];
  assert.ok(queue?.provider === 'rabbitmq');
  assert.equal(queue.allowPlainHttpManagement, true);
});
