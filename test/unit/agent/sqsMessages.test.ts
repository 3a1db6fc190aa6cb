// What the SQS engine's filter reads of a message and what its copy carries
// (agent/sqs/messages.ts; docs/providers/sqs.md facts 1-2 and "SNS envelopes").
import assert from 'node:assert/strict';
import { test } from 'node:test';
import type { Message } from '@aws-sdk/client-sqs';
import { copyOf, filterHeaders, pumpDedupId, snsAttributes } from '../../../agent/sqs/messages';

const message = (m: Partial<Message>): Message => ({
  MessageId: 'm-1',
  ReceiptHandle: 'rh',
  Body: 'b',
  ...m,
});

test('the filter reads String and Number attributes (custom types included) by their text; Binary never', () => {
  const headers = filterHeaders(
    message({
      MessageAttributes: {
        user: { DataType: 'String', StringValue: 'alice' },
        amount: { DataType: 'Number', StringValue: '1.50' },
        id: { DataType: 'String.uuid', StringValue: '0b5c1c4e' },
        n: { DataType: 'Number.int', StringValue: '7' },
        blob: { DataType: 'Binary', BinaryValue: new Uint8Array([1, 2]) },
        custom: { DataType: 'Binary.gzip', BinaryValue: new Uint8Array([3]) },
      },
    }),
    'auto',
  );
  assert.deepEqual(Object.fromEntries(headers), { user: 'alice', amount: '1.50', id: '0b5c1c4e', n: '7' });
});

const envelope = (attributes: Record<string, unknown>, type = 'Notification') =>
  JSON.stringify({
    Type: type,
    MessageId: 'x',
    TopicArn: 'arn:aws:sns:us-east-1:000000000000:orders',
    Message: '{"order":1}',
    MessageAttributes: attributes,
  });

test('an SNS notification body is read for its attributes with snsEnvelope auto, never with off', () => {
  const body = envelope({
    user: { Type: 'String', Value: 'bob' },
    amount: { Type: 'Number', Value: '3' },
    blob: { Type: 'Binary', Value: 'AAE=' },
    list: { Type: 'String.Array', Value: '["a"]' },
  });
  const m = message({ Body: body });
  assert.deepEqual(Object.fromEntries(filterHeaders(m, 'auto')), { user: 'bob', amount: '3', list: '["a"]' });
  assert.deepEqual(Object.fromEntries(filterHeaders(m, 'off')), {});
});

test("a message's own attribute wins over the envelope's of the same name", () => {
  const m = message({
    Body: envelope({ user: { Type: 'String', Value: 'bob' } }),
    MessageAttributes: { user: { DataType: 'String', StringValue: 'alice' } },
  });
  assert.equal(filterHeaders(m, 'auto').get('user'), 'alice');
});

test('bodies that are not SNS notifications give no attributes', () => {
  for (const body of [
    'plain text',
    '{"Type":"Notification"', // not JSON
    envelope({ user: { Type: 'String', Value: 'bob' } }, 'SubscriptionConfirmation'),
    JSON.stringify({ Type: 'Notification', MessageAttributes: { user: { Type: 'String', Value: 'x' } } }), // no TopicArn
    '["Notification"]',
    JSON.stringify({
      Type: 'Notification',
      TopicArn: 'arn',
      MessageAttributes: { user: { Type: 'String' } },
    }),
  ]) {
    assert.deepEqual(snsAttributes(body), [], body);
  }
});

test('a copy carries the body, every attribute and the trace header as received, nothing else', () => {
  const attributes = {
    user: { DataType: 'String', StringValue: 'alice' },
    blob: { DataType: 'Binary', BinaryValue: new Uint8Array([0, 255]) },
  };
  const copy = copyOf(
    message({
      Body: '{"ü":1}',
      MessageAttributes: attributes,
      Attributes: { AWSTraceHeader: 'Root=1-abc', ApproximateReceiveCount: '3', SentTimestamp: '1' },
    }),
  );
  assert.deepEqual(copy, {
    MessageBody: '{"ü":1}',
    MessageAttributes: attributes,
    MessageSystemAttributes: { AWSTraceHeader: { DataType: 'String', StringValue: 'Root=1-abc' } },
  });
  assert.deepEqual(copyOf(message({ Body: 'x', MessageAttributes: {} })), { MessageBody: 'x' });
});

test('a FIFO copy keeps the group and carries the given deduplication id; the pump’s is per message and receive', () => {
  const m = message({
    MessageId: 'id-1',
    Body: 'x',
    Attributes: {
      MessageGroupId: 'g-7',
      ApproximateReceiveCount: '2',
      MessageDeduplicationId: 'producer-id',
    },
  });
  assert.equal(pumpDedupId(m), 'qs-id-1-2');
  assert.deepEqual(copyOf(m, pumpDedupId(m)), {
    MessageBody: 'x',
    MessageGroupId: 'g-7',
    MessageDeduplicationId: 'qs-id-1-2',
  });
  assert.deepEqual(copyOf(m), { MessageBody: 'x' }, 'a standard destination gets neither');
});
