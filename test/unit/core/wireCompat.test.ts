// The session stream's message frame stays v2's, byte for byte, now that each provider encodes its
// own part (core/providers/<provider>/message.ts): agents and sidecars of other versions talk to
// this one. Each literal below is a frame as v2's first code sent it for a message its reader
// built (one key per broker part: `kafka`, `amqp`, `sqs`), written out in full: a newer side must
// decode it to the same message, and encode that message to the same bytes.
import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import { encode } from '@msgpack/msgpack';
import type { Message as AmqpMessage } from 'amqplib';
import type { KafkaMessage } from 'kafkajs';
import { kafkaShadowMessage } from '../../../core/providers/kafka/message';
import { amqpShadowMessage } from '../../../core/providers/rabbitmq/message';
import { sqsShadowMessage } from '../../../core/providers/sqs/message';
import { decodeAgentFrame, encodeFrame, unreadableMessage } from '../../../core/sessionStream';
import { fromWireMessage, toWireMessage, type ShadowMessage } from '../../../core/shadowMessage';

const bytes = (text: string) => Buffer.from(text, 'utf8');

/** Encodes as v2 did (core/sessionStream.ts encodeFrame: MessagePack, undefined left out). */
const v2Bytes = (frame: object) => Buffer.from(encode(frame, { ignoreUndefined: true }));

function assertCompatible(queue: string, built: ShadowMessage, v2Message: Record<string, unknown>) {
  const v2Frame = { type: 'message', tag: 3, queue, message: v2Message };

  // Decoding: the v2 frame is the message the reader built.
  const decoded = decodeAgentFrame(v2Bytes(v2Frame));
  assert.ok(decoded.ok && decoded.frame.type === 'message', JSON.stringify(decoded));
  assert.deepEqual(fromWireMessage(queue, decoded.frame.message), built);

  // Encoding: the same keys in the same order, and the same bytes.
  const wire = toWireMessage(built);
  assert.deepEqual(Object.keys(wire), Object.keys(v2Message));
  const partKey = Object.keys(v2Message).at(-1)!;
  assert.deepEqual(
    Object.keys((wire as Record<string, unknown>)[partKey] as object),
    Object.keys(v2Message[partKey] as object),
  );
  const encoded = Buffer.from(encodeFrame({ type: 'message', tag: 3, queue, message: wire }));
  assert.ok(encoded.equals(v2Bytes(v2Frame)), 'the frame is v2 byte for byte');
}

describe('a v2 message frame', () => {
  test('Kafka: its part under `kafka` (partition, offset, key, timestamp, headers with null and repeated values)', () => {
    const record = {
      key: bytes('k'),
      value: bytes('{"n":1}'),
      timestamp: '1700000000123',
      attributes: 0,
      offset: '41',
      size: 0,
      headers: {
        'x-queue-split-user': bytes('alice'),
        'content-type': bytes('application/json'),
        nothing: null,
        twice: [bytes('a'), bytes('b')],
      },
    } as unknown as KafkaMessage; // kafkajs types no null header value, which it decodes
    const v2 = {
      id: '2-41',
      body: bytes('{"n":1}'),
      time: 1700000000123,
      contentType: 'application/json',
      headers: [
        { name: 'x-queue-split-user', value: bytes('alice') },
        { name: 'content-type', value: bytes('application/json') },
        { name: 'nothing', value: null },
        { name: 'twice', value: bytes('a') },
        { name: 'twice', value: bytes('b') },
      ],
      kafka: {
        partition: 2,
        offset: '41',
        key: bytes('k'),
        timestamp: '1700000000123',
        headers: {
          'x-queue-split-user': bytes('alice'),
          'content-type': bytes('application/json'),
          nothing: null,
          twice: [bytes('a'), bytes('b')],
        },
      },
    };
    assertCompatible('orders', kafkaShadowMessage('orders', 2, record), v2);
  });

  test('AMQP: its part under `amqp` (the basic properties with typed header values, redelivered)', () => {
    const delivery = {
      content: bytes('{"a":1}'),
      fields: { deliveryTag: 7, redelivered: true, exchange: '', routingKey: 'invoices' },
      properties: {
        contentType: 'application/json',
        contentEncoding: undefined,
        headers: {
          'x-queue-split-user': 'alice',
          n: 42,
          raw: Buffer.from([9, 8]),
          when: { '!': 'timestamp', value: 1_700_000_000 },
        },
        deliveryMode: 2,
        priority: undefined,
        correlationId: 'c-1',
        replyTo: undefined,
        expiration: undefined,
        messageId: 'm-1',
        timestamp: 1_700_000_000,
        type: undefined,
        userId: undefined,
        appId: 'billing',
        clusterId: undefined,
      },
    } as unknown as AmqpMessage; // what amqplib hands a consumer, without its channel fields
    const headers = {
      'x-queue-split-user': 'alice',
      n: 42,
      raw: Buffer.from([9, 8]),
      when: { '!': 'timestamp', value: 1_700_000_000 },
    };
    const v2 = {
      id: 'm-1',
      body: bytes('{"a":1}'),
      time: 1_700_000_000_000,
      contentType: 'application/json',
      headers: Object.entries(headers).map(([name, value]) => ({ name, value })),
      amqp: {
        properties: {
          contentType: 'application/json',
          headers,
          deliveryMode: 2,
          correlationId: 'c-1',
          messageId: 'm-1',
          timestamp: 1_700_000_000,
          appId: 'billing',
        },
        redelivered: true,
      },
    };
    assertCompatible('invoices', amqpShadowMessage('invoices', delivery), v2);
  });

  test('SQS: its part under `sqs` (attributes with their types, system attributes, snsEnvelope off)', () => {
    const received = {
      MessageId: 'mid-1',
      Body: 'héllo',
      Attributes: { SentTimestamp: '1700000000000', MessageGroupId: 'g1', AWSTraceHeader: 'Root=1-abc' },
      MessageAttributes: {
        'x-user': { DataType: 'String', StringValue: 'alice' },
        'content-type': { DataType: 'String', StringValue: 'text/plain' },
        blob: { DataType: 'Binary', BinaryValue: new Uint8Array([0, 1, 255]) },
      },
    };
    const v2 = {
      id: 'mid-1',
      body: bytes('héllo'),
      time: 1_700_000_000_000,
      contentType: 'text/plain',
      headers: [
        { name: 'x-user', value: 'alice' },
        { name: 'content-type', value: 'text/plain' },
        { name: 'blob', value: Buffer.from([0, 1, 255]) },
      ],
      sqs: {
        attributes: {
          'x-user': { dataType: 'String', stringValue: 'alice' },
          'content-type': { dataType: 'String', stringValue: 'text/plain' },
          blob: { dataType: 'Binary', binaryValue: Buffer.from([0, 1, 255]) },
        },
        system: { SentTimestamp: '1700000000000', MessageGroupId: 'g1', AWSTraceHeader: 'Root=1-abc' },
        snsEnvelope: 'off',
      },
    };
    assertCompatible('payments', sqsShadowMessage('payments', received, 'off'), v2);
  });

  test('a message with no broker part, or two, is refused; an unreadable Kafka one still names its partition', () => {
    const base = { id: 'x', body: bytes('x'), time: 0, headers: [] };
    const kafka = { partition: 4, offset: '1', key: null, timestamp: '0', headers: {} };
    const amqp = { properties: {}, redelivered: false };
    for (const message of [base, { ...base, kafka, amqp }]) {
      const decoded = decodeAgentFrame(v2Bytes({ type: 'message', tag: 1, queue: 'q', message }));
      assert.ok(!decoded.ok && /broker part/.test(decoded.problem), JSON.stringify(decoded));
    }
    const broken = v2Bytes({
      type: 'message',
      tag: 1,
      queue: 'orders',
      message: { ...base, kafka: { ...kafka, key: 5 } },
    });
    assert.equal(decodeAgentFrame(broken).ok, false);
    assert.deepEqual(unreadableMessage(broken), {
      tag: 1,
      queue: 'orders',
      id: 'x',
      lane: { key: '4', name: 'partition 4' },
    });
    const amqpBroken = v2Bytes({
      type: 'message',
      tag: 2,
      queue: 'invoices',
      message: { ...base, amqp: { properties: {}, redelivered: 'no' } },
    });
    assert.deepEqual(unreadableMessage(amqpBroken), { tag: 2, queue: 'invoices', id: 'x' });
  });
});
