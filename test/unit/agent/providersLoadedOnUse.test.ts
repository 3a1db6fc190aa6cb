// The queue-agent loads a provider's broker client when a queue of that provider first needs it
// (agent/providers/registry.ts): a RabbitMQ-only agent never evaluates kafkajs or the AWS SDK,
// and the controller (which reads each provider's CA trust) none of them. Each test file runs in
// its own process, so the module cache starts empty of them.
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { caTrust, testMessageSender } from '../../../agent/providers/registry';

const loaded = (pkg: string) =>
  Object.keys(require.cache).some((file) => file.includes(`/node_modules/${pkg}/`));

test('each broker client is loaded only when its provider is first used', async () => {
  assert.equal(caTrust('kafka'), 'client');
  assert.equal(caTrust('sqs'), 'process');
  for (const pkg of ['kafkajs', 'amqplib', '@aws-sdk/client-sqs'])
    assert.equal(loaded(pkg), false, `${pkg} loaded before any queue needed it`);
  const rabbit = testMessageSender('rabbitmq');
  assert.equal(loaded('amqplib'), true);
  assert.equal(loaded('kafkajs'), false, 'a RabbitMQ queue does not load kafkajs');
  assert.equal(loaded('@aws-sdk/client-sqs'), false, 'a RabbitMQ queue does not load the AWS SDK');
  const kafka = testMessageSender('kafka');
  assert.equal(loaded('kafkajs'), true);
  await Promise.all([rabbit.close(), kafka.close()]);
});
