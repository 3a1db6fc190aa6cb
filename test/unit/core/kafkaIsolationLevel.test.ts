// The Kafka block's `isolationLevel` (README, "Kafka shadows are written in transactions"):
// declared in the queue config, carried by the controller's plan through the desired
// document to the engine config the agent builds; absent means read_committed.
import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import { desiredState } from '../../../agent/controller/desired';
import { validateConfig, type KafkaEngineConfig } from '../../../agent/kafka/config';
import { parseDesired } from '../../../core/agentDocuments';
import { validateQueueConfig } from '../../../core/queueConfig/parseQueueConfig';
import type { ResolvedKafkaQueue } from '../../../core/providers/kafka/resolve';
import { at } from './splitFixtures';

const kafkaBlock = (extra: Record<string, unknown>) => ({
  queues: [
    {
      name: 'orders',
      kafka: {
        brokersEnv: 'KAFKA_BROKERS',
        sourceEnv: 'ORDERS_TOPIC',
        groupEnv: 'KAFKA_GROUP',
        offsetReset: 'earliest',
        ...extra,
      },
    },
  ],
});

const resolved = (extra: Partial<ResolvedKafkaQueue>): ResolvedKafkaQueue => ({
  provider: 'kafka',
  name: 'orders',
  container: 'app',
  sourceAt: { kind: 'env', name: 'SOURCE_TOPIC' },
  source: 'orders',
  groupAt: { kind: 'env', name: 'GROUP_ID' },
  group: 'orders-app',
  offsetReset: 'earliest',
  env: [{ name: 'KAFKA_BROKERS', role: 'brokers', source: { kind: 'value', value: 'kafka:9092' } }],
  ...extra,
});

const planOf = (queue: ResolvedKafkaQueue) => {
  const parsed = parseDesired(JSON.stringify(desiredState(at('ACTIVE'), [queue], true)));
  assert.ok(parsed.ok, JSON.stringify(parsed));
  const plan = parsed.value.queues[0];
  assert.ok(plan?.provider === 'kafka');
  return plan;
};

describe('Kafka isolationLevel', () => {
  test('read_committed and read_uncommitted are declared; anything else is refused', () => {
    for (const level of ['read_committed', 'read_uncommitted']) {
      const parsed = validateQueueConfig(kafkaBlock({ isolationLevel: level }));
      assert.ok(parsed.ok, JSON.stringify(parsed));
    }
    assert.ok(validateQueueConfig(kafkaBlock({})).ok, 'optional');
    const wrong = validateQueueConfig(kafkaBlock({ isolationLevel: 'read-committed' }));
    assert.ok(!wrong.ok);
    assert.match(wrong.errors[0]!.path, /isolationLevel/);
  });

  test('the plan carries the declared level through the desired document; none declared, none carried', () => {
    assert.equal(planOf(resolved({ isolationLevel: 'read_uncommitted' })).isolationLevel, 'read_uncommitted');
    assert.equal(planOf(resolved({})).isolationLevel, undefined);
  });

  test('the engine config refuses an unknown level', () => {
    const config: KafkaEngineConfig = {
      activationId: 'i/u',
      epoch: 1,
      connection: { brokers: ['kafka:9092'] },
      sourceTopic: 'orders',
      appGroup: 'orders-app',
      offsetReset: 'earliest',
      appShadow: 'orders-app-shadow',
      appShadowGroup: 'orders-app-shadow-g',
      splitterGroup: 'orders-split',
      transactionalId: 'orders-tx',
    };
    assert.deepEqual(validateConfig({ ...config, isolationLevel: 'read_uncommitted' }), []);
    const bad = { ...config, isolationLevel: 'snapshot' } as unknown as KafkaEngineConfig;
    assert.deepEqual(
      validateConfig(bad).map((e) => e.path),
      ['isolationLevel'],
    );
  });
});
