// SQS in the queue-agent (agent/sqs/connection.ts, agentProvider.ts) and its messages on the
// session stream (core/shadowMessage.ts): the connection from the plan and the pod's env, what
// a test message is published with, and an SQS message through the stream's wire form with its
// attribute types intact.
import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import { sqsAgent } from '../../../agent/sqs/agentProvider';
import { sqsConnection } from '../../../agent/sqs/connection';
import { EngineConfigError } from '../../../agent/providers/podEnv';
import type { SqsQueuePlan } from '../../../core/providers/sqs/plan';
import { sqsShadowMessage } from '../../../core/providers/sqs/message';
import { decodeAgentFrame, encodeFrame } from '../../../core/sessionStream';
import { fromWireMessage, toWireMessage } from '../../../core/shadowMessage';
import { sqsSidecar } from '../../../sidecar/providers/sqs';
import { partOf } from '../../support/brokerPart';

const plan = (source: string, env: SqsQueuePlan['env']): SqsQueuePlan => ({
  name: 'orders',
  provider: 'sqs',
  source,
  env,
  epoch: 1,
  names: { appShadow: 'qs-sapp-orders-x', lockQueue: 'qs-slock-orders-x' },
});

function withEnv<T>(values: Record<string, string>, run: () => T): T {
  const before = Object.fromEntries(Object.keys(values).map((k) => [k, process.env[k]]));
  Object.assign(process.env, values);
  try {
    return run();
  } finally {
    for (const [k, v] of Object.entries(before)) {
      // Reflect.deleteProperty: process.env holds no undefined values, only absent ones.
      if (v === undefined) Reflect.deleteProperty(process.env, k);
      else process.env[k] = v;
    }
  }
}

describe('the SQS connection in the queue-agent', () => {
  test("an AWS queue URL's region, the default chain without keys", () => {
    const c = sqsConnection(plan('https://sqs.eu-west-1.amazonaws.com/1/orders', { queueUrl: 'Q' }));
    assert.deepEqual(c, { region: 'eu-west-1' });
  });

  test('region, endpoint and static keys from the env the plan names', () => {
    const c = withEnv(
      {
        QS_T_REGION: 'us-east-1',
        QS_T_ENDPOINT: 'http://10.0.0.1:9324',
        QS_T_ID: 'id',
        QS_T_SECRET: 'secret',
      },
      () =>
        sqsConnection(
          plan('http://10.0.0.1:9324/000000000000/orders', {
            region: 'QS_T_REGION',
            endpoint: 'QS_T_ENDPOINT',
            accessKeyId: 'QS_T_ID',
            secretAccessKey: 'QS_T_SECRET',
          }),
        ),
    );
    assert.deepEqual(c, {
      region: 'us-east-1',
      endpoint: 'http://10.0.0.1:9324',
      credentials: { accessKeyId: 'id', secretAccessKey: 'secret' },
    });
  });

  test('an empty env var or no region is a config error that names the env var, never a value', () => {
    assert.throws(
      () => sqsConnection(plan('http://10.0.0.1:9324/000000000000/orders', { region: 'QS_T_NONE' })),
      (err: unknown) => err instanceof EngineConfigError && /QS_T_NONE/.test(err.message),
    );
    assert.throws(
      () => sqsConnection(plan('http://10.0.0.1:9324/000000000000/orders', {})),
      (err: unknown) => err instanceof EngineConfigError && /no region/.test(err.message),
    );
    assert.throws(
      () =>
        withEnv({ QS_T_ID: 'AKIDSECRETVALUE' }, () =>
          sqsConnection(
            plan('https://sqs.us-east-1.amazonaws.com/1/orders', {
              accessKeyId: 'QS_T_ID',
              secretAccessKey: 'QS_T_S',
            }),
          ),
        ),
      (err: unknown) => err instanceof EngineConfigError && !/AKIDSECRETVALUE/.test(err.message),
    );
  });

  test('a test message is routed on its headers as String attributes, empty ones left out', () => {
    const sender = sqsAgent.testMessages();
    const { headers, ownKeys } = sender.published(
      { queue: 'orders', headers: { 'x-user': 'alice', empty: '' }, body: new Uint8Array() },
      'm-1',
    );
    assert.deepEqual(Object.fromEntries(headers), { 'x-user': 'alice', 'message-id': 'm-1' });
    assert.deepEqual(ownKeys, ['message-id', 'content-type']);
  });
});

describe('an SQS message on the session stream', () => {
  test('keeps every attribute with its type, the system attributes and the body', () => {
    const message = sqsShadowMessage(
      'orders',
      {
        MessageId: 'mid-1',
        Body: 'héllo',
        Attributes: { SentTimestamp: '1700000000000', MessageGroupId: 'g1', AWSTraceHeader: 'Root=1-abc' },
        MessageAttributes: {
          'x-user': { DataType: 'String', StringValue: 'alice' },
          amount: { DataType: 'Number', StringValue: '1.50' },
          id: { DataType: 'String.uuid', StringValue: '4f1c' },
          blob: { DataType: 'Binary', BinaryValue: new Uint8Array([0, 1, 255]) },
        },
      },
      'auto',
    );
    assert.equal(message.id, 'mid-1');
    assert.equal(message.time.getTime(), 1700000000000);
    assert.deepEqual(Object.fromEntries(message.filterHeaders), {
      'x-user': 'alice',
      amount: '1.50',
      id: '4f1c',
    });
    const frame = decodeAgentFrame(
      encodeFrame({ type: 'message', tag: 1, queue: 'orders', message: toWireMessage(message) }),
    );
    assert.ok(frame.ok && frame.frame.type === 'message', JSON.stringify(frame));
    const back = fromWireMessage('orders', frame.frame.message);
    assert.equal(back.body.toString('utf8'), 'héllo');
    assert.deepEqual(partOf(back, 'sqs')?.system, partOf(message, 'sqs')?.system);
    assert.equal(partOf(back, 'sqs')?.attributes.amount?.dataType, 'Number');
    assert.equal(partOf(back, 'sqs')?.attributes.amount?.stringValue, '1.50');
    assert.deepEqual([...(partOf(back, 'sqs')?.attributes.blob?.binaryValue ?? [])], [0, 1, 255]);
    assert.deepEqual(Object.fromEntries(back.filterHeaders), Object.fromEntries(message.filterHeaders));
  });
});

describe('an SNS envelope on the session side', () => {
  const envelope = JSON.stringify({
    Type: 'Notification',
    MessageId: 'sns-1',
    TopicArn: 'arn:aws:sns:us-east-1:000000000000:orders',
    Message: '{}',
    MessageAttributes: { 'x-user': { Type: 'String', Value: 'alice' } },
  });
  const received = { MessageId: 'mid-2', Body: envelope, MessageAttributes: {} };
  const roundTrip = (m: ReturnType<typeof sqsShadowMessage>) => {
    const frame = decodeAgentFrame(
      encodeFrame({ type: 'message', tag: 1, queue: 'orders', message: toWireMessage(m) }),
    );
    assert.ok(frame.ok && frame.frame.type === 'message', JSON.stringify(frame));
    return fromWireMessage('orders', frame.frame.message);
  };

  test('is read for its attributes as the declaration says (auto), on both sides of the stream', () => {
    const message = sqsShadowMessage('orders', received, 'auto');
    assert.deepEqual(Object.fromEntries(message.filterHeaders), { 'x-user': 'alice' });
    assert.deepEqual(Object.fromEntries(roundTrip(message).filterHeaders), { 'x-user': 'alice' });
  });

  test('is only a body with snsEnvelope off, on both sides of the stream', () => {
    const message = sqsShadowMessage('orders', received, 'off');
    assert.deepEqual(Object.fromEntries(message.filterHeaders), {});
    assert.deepEqual(Object.fromEntries(roundTrip(message).filterHeaders), {});
  });
});

describe('the SQS relay setting', () => {
  test('an http(s) endpoint without a path; anything else names the flag', () => {
    sqsSidecar.relay.check('http://127.0.0.1:9324');
    sqsSidecar.relay.check('https://KEY:SECRET@localstack:4566/?region=eu-west-1');
    for (const bad of ['127.0.0.1:9324', 'amqp://x', 'http://127.0.0.1:9324/000000000000/q'])
      assert.throws(() => sqsSidecar.relay.check(bad), /--relay-sqs-endpoint/);
  });
});
