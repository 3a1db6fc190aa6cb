// Broker passwords in VS Code's secret storage (README, "Using it from VS Code"): what a stored
// password is keyed on (so a workspace that points a relay setting elsewhere gets none), how it
// goes into the URL the sidecar gets, and which settings.json values are reported as passwords.
import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import {
  envSecretKey,
  envValueHoldsPassword,
  envWithSecrets,
  relaySecretKey,
  relayWithPasswords,
  urlParts,
  withoutPassword,
  withPassword,
} from '../../../extension/model/brokerSecrets';

describe('broker passwords', () => {
  test('a relay password is bound to scheme, user, host and port, not to the rest of the URL', () => {
    const key = relaySecretKey('rabbitmq', 'amqp://guest@127.0.0.1:5672');
    assert.equal(key, 'queueSplit.broker/relay/rabbitmq/amqp://guest@127.0.0.1:5672');
    assert.equal(relaySecretKey('rabbitmq', 'AMQP://guest:old@127.0.0.1:5672/vhost'), key);
    assert.notEqual(relaySecretKey('rabbitmq', 'amqp://guest@evil.example:5672'), key);
    assert.notEqual(relaySecretKey('rabbitmq', 'amqp://admin@127.0.0.1:5672'), key);
    assert.notEqual(relaySecretKey('sqs', 'amqp://guest@127.0.0.1:5672'), key);
    assert.equal(relaySecretKey('rabbitmq', 'amqp://127.0.0.1:5672'), undefined, 'no user, no key');
    assert.equal(envSecretKey('AMQP_URL'), 'queueSplit.broker/env/AMQP_URL');
  });

  test('the stored password goes into the URL, percent-encoded; what is shown never has one', () => {
    assert.equal(
      withPassword('amqp://guest@127.0.0.1:5672/%2F', 'p@ss:w/rd'),
      'amqp://guest:p%40ss%3Aw%2Frd@127.0.0.1:5672/%2F',
    );
    assert.equal(
      withPassword('http://AKID:old@127.0.0.1:9324?region=x', 'new'),
      'http://AKID:new@127.0.0.1:9324?region=x',
    );
    assert.equal(withPassword('127.0.0.1:9092', 'x'), '127.0.0.1:9092', 'not a URL with a user: unchanged');
    assert.equal(withoutPassword('amqp://guest:secret@host:5672/v'), 'amqp://guest@host:5672/v');
    assert.deepEqual(urlParts('amqp://u:p@H:1'), {
      scheme: 'amqp://',
      user: 'u',
      password: 'p',
      host: 'h:1',
    });
  });

  test('relay brokers get their stored passwords; one only in settings.json is used and reported', () => {
    const stored = new Map([['queueSplit.broker/relay/rabbitmq/amqp://guest@127.0.0.1:5672', 's3cret']]);
    const got = relayWithPasswords(
      {
        rabbitmq: 'amqp://guest@127.0.0.1:5672',
        sqs: 'http://AKID:inline-secret@127.0.0.1:9324',
        kafka: '127.0.0.1:9092',
      },
      (key) => stored.get(key),
    );
    assert.deepEqual(got.brokers, {
      rabbitmq: 'amqp://guest:s3cret@127.0.0.1:5672',
      sqs: 'http://AKID:inline-secret@127.0.0.1:9324',
      kafka: '127.0.0.1:9092',
    });
    assert.deepEqual(got.inline, ['sqs']);
    // A stored password wins over one in settings.json, which is then not reported.
    const over = relayWithPasswords({ rabbitmq: 'amqp://guest:old@127.0.0.1:5672' }, (key) =>
      stored.get(key),
    );
    assert.deepEqual(over, { brokers: { rabbitmq: 'amqp://guest:s3cret@127.0.0.1:5672' }, inline: [] });
  });

  test('env values: stored ones win; the ones in settings.json that hold a password are reported', () => {
    const got = envWithSecrets(
      {
        KAFKA_BROKERS: '127.0.0.1:19092',
        AMQP_URL: 'amqp://app:pw@rabbit:5672',
        KAFKA_SASL_PASSWORD: 'x',
        DB_URL: 'postgres://app:pw@db/app',
      },
      { DB_URL: 'postgres://app:stored@db/app' },
    );
    assert.deepEqual(got.env, {
      KAFKA_BROKERS: '127.0.0.1:19092',
      AMQP_URL: 'amqp://app:pw@rabbit:5672',
      KAFKA_SASL_PASSWORD: 'x',
      DB_URL: 'postgres://app:stored@db/app',
    });
    assert.deepEqual(got.inline, ['AMQP_URL', 'KAFKA_SASL_PASSWORD']);
    assert.equal(envValueHoldsPassword('AWS_ACCESS_KEY_ID', 'AKID'), false);
    assert.equal(envValueHoldsPassword('AWS_SECRET_ACCESS_KEY', 'x'), true);
    assert.equal(envValueHoldsPassword('API_TOKEN', ''), false);
    assert.equal(envValueHoldsPassword('AMQP_URL', 'amqp://guest@rabbit'), false);
  });
});
