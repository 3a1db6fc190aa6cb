// One message of a session shadow as a delivery mode sees it, wherever it was read: by the
// sidecar from the broker itself (`--transport broker`), or by the queue-agent, which streams it
// to the sidecar (core/sessionStream.ts). The builders from each client's message and the
// conversions to and from the stream's wire form live here, once.
import { randomUUID } from 'node:crypto';
import type { Message as AmqpMessage, MessageProperties } from 'amqplib';
import type { KafkaMessage } from 'kafkajs';
import { amqpHeaders, kafkaHeaders, type MessageHeaders } from './filter';
import { sqsFilterHeaders, type SnsEnvelope } from './providers/sqs/headers';
import type { WireMessage } from './sessionStream';

/** One broker header as carried: Kafka values are bytes (repeated keys appear twice), AMQP values typed. */
export interface CarriedHeader {
  name: string;
  value: unknown;
}

/** Kafka header name → value(s) as kafkajs decodes them (null: a header sent with a null value). */
export type KafkaRawHeaders = Record<string, Buffer | string | null | (Buffer | string | null)[] | undefined>;

export interface ShadowMessage {
  /** Logical queue name. */
  queue: string;
  /** Stable across redeliveries: AMQP message-id, else Kafka `<partition>-<offset>`, else generated. */
  id: string;
  body: Buffer;
  /** Broker timestamp (Kafka record / AMQP property), else receipt time. */
  time: Date;
  contentType?: string;
  headers: CarriedHeader[];
  /** Headers as the filter sees them (core/filter normalisation). */
  filterHeaders: MessageHeaders;
  kafka?: {
    partition: number;
    offset: string;
    key: Buffer | null;
    timestamp: string;
    rawHeaders: KafkaRawHeaders;
  };
  amqp?: { properties: AmqpProperties; redelivered: boolean };
  /** SQS: every message attribute with its data type (Binary values as bytes), and the system
   * attributes as received (AWSTraceHeader, MessageGroupId, SentTimestamp, …). */
  sqs?: {
    attributes: Record<string, SqsCarriedAttribute>;
    system: Record<string, string>;
    /** Declared `off` only: the filter view reads no SNS envelope (absent: auto). */
    snsEnvelope?: 'off';
  };
}

/** One SQS message attribute as carried: its data type (custom types such as `String.uuid`
 * kept) and its value. */
export interface SqsCarriedAttribute {
  dataType: string;
  stringValue?: string;
  binaryValue?: Buffer;
}

/** The AMQP basic properties a delivery mode forwards (relay) or maps (http). */
export interface AmqpProperties {
  contentType?: string;
  contentEncoding?: string;
  headers?: Record<string, unknown>;
  deliveryMode?: number;
  priority?: number;
  correlationId?: string;
  replyTo?: string;
  expiration?: string;
  messageId?: string;
  timestamp?: number;
  type?: string;
  userId?: string;
  appId?: string;
}

/**
 * A broker's timestamp as a Date, or the receipt time when no Date can hold it (beyond ±8.64e15
 * ms: an AMQP timestamp written in microseconds, or garbage). The field is informational, and
 * an invalid Date would reach the wire as NaN, which the stream refuses: a timestamp must never
 * make a message undeliverable (docs/design.md §5, "no silent loss"). The broker's own value stays
 * in the carried properties (`amqp.properties.timestamp`, `kafka.timestamp`).
 */
export function brokerTime(ms: number): Date {
  const date = new Date(ms);
  return Number.isNaN(date.getTime()) ? new Date() : date;
}

function headerEntries(headers: KafkaRawHeaders | undefined): CarriedHeader[] {
  const out: CarriedHeader[] = [];
  for (const [name, value] of Object.entries(headers ?? {})) {
    if (value === undefined) continue;
    for (const v of Array.isArray(value) ? value : [value]) out.push({ name, value: v });
  }
  return out;
}

export function kafkaShadowMessage(queue: string, partition: number, message: KafkaMessage): ShadowMessage {
  const raw = (message.headers ?? {}) as KafkaRawHeaders;
  const filterHeaders = kafkaHeaders(message.headers);
  const timestamp = Number(message.timestamp);
  const contentType = [...filterHeaders].find(([k]) => k.toLowerCase() === 'content-type')?.[1];
  return {
    queue,
    id: `${partition}-${message.offset}`,
    body: message.value ?? Buffer.alloc(0),
    time: timestamp > 0 ? brokerTime(timestamp) : new Date(), // -1: the record has none
    ...(contentType !== undefined ? { contentType } : {}),
    headers: headerEntries(raw),
    filterHeaders,
    kafka: {
      partition,
      offset: message.offset,
      key: message.key,
      timestamp: message.timestamp,
      rawHeaders: { ...raw },
    },
  };
}

function amqpProperties(p: MessageProperties): AmqpProperties {
  // amqplib types every property as `any`; keep only well-typed values.
  const str = (v: unknown): string | undefined => (typeof v === 'string' ? v : undefined);
  const num = (v: unknown): number | undefined => (typeof v === 'number' ? v : undefined);
  const out: AmqpProperties = {};
  const set = <K extends keyof AmqpProperties>(k: K, v: AmqpProperties[K] | undefined): void => {
    if (v !== undefined) out[k] = v;
  };
  set('contentType', str(p.contentType));
  set('contentEncoding', str(p.contentEncoding));
  set(
    'headers',
    typeof p.headers === 'object' && p.headers !== null ? (p.headers as Record<string, unknown>) : undefined,
  );
  set('deliveryMode', num(p.deliveryMode));
  set('priority', num(p.priority));
  set('correlationId', str(p.correlationId));
  set('replyTo', str(p.replyTo));
  set('expiration', str(p.expiration));
  set('messageId', str(p.messageId));
  set('timestamp', num(p.timestamp));
  set('type', str(p.type));
  set('userId', str(p.userId));
  set('appId', str(p.appId));
  return out;
}

function fromAmqpProperties(
  queue: string,
  properties: AmqpProperties,
  body: Buffer,
  redelivered: boolean,
  id?: string,
): ShadowMessage {
  return {
    queue,
    id:
      id ??
      (properties.messageId !== undefined && properties.messageId !== ''
        ? properties.messageId
        : randomUUID()),
    body,
    time: properties.timestamp !== undefined ? brokerTime(properties.timestamp * 1000) : new Date(),
    ...(properties.contentType !== undefined ? { contentType: properties.contentType } : {}),
    headers: Object.entries(properties.headers ?? {}).map(([name, value]) => ({ name, value })),
    filterHeaders: amqpHeaders(properties.headers),
    amqp: { properties, redelivered },
  };
}

export function amqpShadowMessage(queue: string, msg: AmqpMessage): ShadowMessage {
  return fromAmqpProperties(queue, amqpProperties(msg.properties), msg.content, msg.fields.redelivered);
}

/** An SQS message as received (the SDK's Message; its fields are structurally these). */
export interface SqsReceived {
  MessageId?: string | undefined;
  Body?: string | undefined;
  Attributes?: Partial<Record<string, string>> | undefined;
  MessageAttributes?:
    | Record<
        string,
        {
          DataType?: string | undefined;
          StringValue?: string | undefined;
          BinaryValue?: Uint8Array | undefined;
        }
      >
    | undefined;
}

/** A session shadow's SQS message; its id is the shadow's MessageId (stable across receives).
 * Its filter view reads an SNS envelope as the queue's declaration says. */
export function sqsShadowMessage(
  queue: string,
  message: SqsReceived,
  snsEnvelope: SnsEnvelope,
): ShadowMessage {
  const attributes: Record<string, SqsCarriedAttribute> = {};
  for (const [name, a] of Object.entries(message.MessageAttributes ?? {})) {
    attributes[name] = {
      dataType: a.DataType ?? 'String',
      ...(a.StringValue !== undefined ? { stringValue: a.StringValue } : {}),
      ...(a.BinaryValue !== undefined ? { binaryValue: Buffer.from(a.BinaryValue) } : {}),
    };
  }
  const system: Record<string, string> = {};
  for (const [name, value] of Object.entries(message.Attributes ?? {}))
    if (value !== undefined) system[name] = value;
  return fromSqs(queue, message.MessageId ?? randomUUID(), Buffer.from(message.Body ?? '', 'utf8'), {
    attributes,
    system,
    ...(snsEnvelope === 'off' ? { snsEnvelope } : {}),
  });
}

function fromSqs(
  queue: string,
  id: string,
  body: Buffer,
  sqs: NonNullable<ShadowMessage['sqs']>,
): ShadowMessage {
  const sent = Number(sqs.system.SentTimestamp);
  const text = body.toString('utf8');
  const attributes = Object.fromEntries(
    Object.entries(sqs.attributes).map(([name, a]) => [
      name,
      { DataType: a.dataType, StringValue: a.stringValue, BinaryValue: a.binaryValue },
    ]),
  );
  const contentType = sqs.attributes['content-type']?.stringValue;
  return {
    queue,
    id,
    body,
    time: sent > 0 ? brokerTime(sent) : new Date(),
    ...(contentType !== undefined ? { contentType } : {}),
    headers: Object.entries(sqs.attributes).map(([name, a]) => ({
      name,
      value: a.binaryValue ?? a.stringValue,
    })),
    filterHeaders: sqsFilterHeaders(attributes, text, sqs.snsEnvelope ?? 'auto'),
    sqs,
  };
}

/** The stream's form of a message (bytes as bytes; the filter view is recomputed on arrival). */
export function toWireMessage(m: ShadowMessage): WireMessage {
  return {
    id: m.id,
    body: m.body,
    time: brokerTime(m.time.getTime()).getTime(),
    ...(m.contentType !== undefined ? { contentType: m.contentType } : {}),
    headers: m.headers,
    ...(m.kafka
      ? {
          kafka: {
            partition: m.kafka.partition,
            offset: m.kafka.offset,
            key: m.kafka.key,
            timestamp: m.kafka.timestamp,
            headers: Object.fromEntries(
              Object.entries(m.kafka.rawHeaders)
                .filter(
                  (e): e is [string, Buffer | string | null | (Buffer | string | null)[]] =>
                    e[1] !== undefined,
                )
                .map(([k, v]) => [k, Array.isArray(v) ? v.map(wireBytes) : wireBytes(v)]),
            ),
          },
        }
      : {}),
    ...(m.amqp ? { amqp: { properties: { ...m.amqp.properties }, redelivered: m.amqp.redelivered } } : {}),
    ...(m.sqs
      ? {
          sqs: {
            attributes: { ...m.sqs.attributes },
            system: { ...m.sqs.system },
            ...(m.sqs.snsEnvelope ? { snsEnvelope: m.sqs.snsEnvelope } : {}),
          },
        }
      : {}),
  };
}

const wireBytes = (v: Buffer | string | null): Uint8Array | null =>
  v === null ? null : typeof v === 'string' ? Buffer.from(v, 'utf8') : v;
const asBuffer = (v: Uint8Array) => Buffer.from(v.buffer, v.byteOffset, v.byteLength);

/** MessagePack returns bytes as Uint8Array; header values that were Buffers are Buffers again. */
function withBuffers(value: unknown): unknown {
  if (value instanceof Uint8Array) return asBuffer(value);
  if (Array.isArray(value)) return value.map(withBuffers);
  if (value !== null && typeof value === 'object')
    return Object.fromEntries(Object.entries(value).map(([k, v]) => [k, withBuffers(v)]));
  return value;
}

export function fromWireMessage(queue: string, w: WireMessage): ShadowMessage {
  if (w.amqp) {
    const properties = withBuffers(w.amqp.properties) as AmqpProperties;
    const message = fromAmqpProperties(queue, properties, asBuffer(w.body), w.amqp.redelivered, w.id);
    return { ...message, time: brokerTime(w.time) };
  }
  if (w.sqs) {
    const attributes: Record<string, SqsCarriedAttribute> = {};
    for (const [name, a] of Object.entries(w.sqs.attributes))
      attributes[name] = {
        dataType: a.dataType,
        ...(a.stringValue !== undefined ? { stringValue: a.stringValue } : {}),
        ...(a.binaryValue !== undefined ? { binaryValue: asBuffer(a.binaryValue) } : {}),
      };
    const message = fromSqs(queue, w.id, asBuffer(w.body), {
      attributes,
      system: { ...w.sqs.system },
      ...(w.sqs.snsEnvelope === 'off' ? { snsEnvelope: 'off' as const } : {}),
    });
    return { ...message, time: brokerTime(w.time) };
  }
  const rawHeaders: KafkaRawHeaders = {};
  for (const [k, v] of Object.entries(w.kafka?.headers ?? {}))
    rawHeaders[k] = Array.isArray(v)
      ? v.map((x) => (x === null ? null : asBuffer(x)))
      : v === null
        ? null
        : asBuffer(v);
  return {
    queue,
    id: w.id,
    body: asBuffer(w.body),
    time: brokerTime(w.time),
    ...(w.contentType !== undefined ? { contentType: w.contentType } : {}),
    headers: headerEntries(rawHeaders),
    filterHeaders: kafkaHeaders(rawHeaders as KafkaMessage['headers']),
    ...(w.kafka
      ? {
          kafka: {
            partition: w.kafka.partition,
            offset: w.kafka.offset,
            key: w.kafka.key === null ? null : asBuffer(w.kafka.key),
            timestamp: w.kafka.timestamp,
            rawHeaders,
          },
        }
      : {}),
  };
}
