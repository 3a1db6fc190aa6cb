// CloudEvents 1.0 HTTP binary mode for one shadow message: the body goes as-is, the event
// attributes and the broker headers go in HTTP headers.
//
// Attributes:
//   ce-specversion  1.0
//   ce-id           AMQP message-id; Kafka `<partition>-<offset>` in the session topic; else a
//                   generated UUID (AMQP without message-id: not stable across redeliveries)
//   ce-source       queuesplit://<namespace>/<workload>/<logical queue>
//   ce-type         dev.queuesplit.message
//   ce-time         Kafka record timestamp / AMQP timestamp property, else receipt time (RFC 3339)
//   content-type    AMQP content-type property / Kafka `content-type` header, else application/octet-stream
//   ce-partitionkey the Kafka record key, when there is one (CloudEvents Partitioning extension)
//
// Broker headers, by name (first rule that applies):
//   1. a valid CloudEvents extension name (1-20 of a-z 0-9) that is not a core attribute name
//      (id, source, type, time, ...) nor partitionkey → `ce-<name>`            e.g. traceparent → ce-traceparent
//   2. starts with `x-`/`X-` and is an HTTP token without `%` → the name itself, lower-cased
//                                                            e.g. x-queue-split-user → x-queue-split-user
//   3. anything else → `x-` + the lower-cased name with every byte that is not an HTTP token
//      character (and `%`) percent-encoded               e.g. tenant-id → x-tenant-id, ünï → x-%c3%bcn%c3%af
//   HTTP names are case-insensitive, so case is not preserved. Repeated Kafka keys become
//   repeated HTTP headers, in order. AMQP properties other than message-id, timestamp and
//   content-type go as x-amqp-<property> (x-amqp-correlation-id, x-amqp-reply-to, x-amqp-type,
//   x-amqp-app-id, x-amqp-user-id, x-amqp-priority, x-amqp-content-encoding, x-amqp-expiration).
// Values: every header value is percent-encoded as the CloudEvents HTTP binding requires for
// attributes (UTF-8 bytes outside printable ASCII, space, `"` and `%` → %XX), so plain ASCII
// values arrive unchanged and anything else decodes with decodeURIComponent (or byte-wise for
// non-UTF-8 Kafka values). AMQP header values, by field-table type (sidecar/README.md,
// "AMQP header values"), always as the text below, then percent-encoded:
//   S long string                  the string
//   t boolean                      true / false
//   b B s u I i l  integers        decimal text (-5, 300, 9007199254740991)
//   f d  float, double             JavaScript number text (1.5, 0.10000000149011612, NaN, Infinity)
//   T timestamp                    RFC 3339 UTC, seconds precision (2026-01-02T03:04:05Z), the
//                                  CloudEvents Timestamp form; outside JS Date range: the seconds
//   D decimal                      plain decimal text (-123.45); the 32-bit value is read signed,
//                                  as RabbitMQ and the Java/pika clients write it
//   V void                         empty value
//   x byte array                   the bytes themselves
//   F table, A array               JSON, nested values as above: numbers and booleans as JSON,
//                                  timestamps and decimals as their text, byte arrays as base64,
//                                  void as null, NaN/Infinity as null (JSON has no such numbers)
import type { CarriedHeader, ShadowMessage } from '../../core/shadowMessage';

export const CLOUD_EVENT_TYPE = 'dev.queuesplit.message';

// Core attributes, plus partitionkey, which carries the Kafka key.
const RESERVED_NAMES = new Set([
  'id',
  'source',
  'specversion',
  'type',
  'datacontenttype',
  'dataschema',
  'subject',
  'time',
  'data',
  'data_base64',
  'partitionkey',
]);
const EXTENSION_NAME = /^[a-z0-9]{1,20}$/;
const TOKEN_CHAR = /^[!#$&'*+\-.^_`|~0-9A-Za-z]$/; // RFC 9110 tchar, minus '%' (our escape)
const CONTENT_TYPE = /^[\x21-\x7e][\x20-\x7e]*$/;

export interface EventSource {
  namespace: string;
  workload: string;
  queue: string;
}

/** Kubernetes names and logical queue names are URI-safe already. */
export function cloudEventSource(source: EventSource): string {
  return `queuesplit://${source.namespace}/${source.workload}/${source.queue}`;
}

/** Percent-encodes bytes outside U+0021..U+007E, and `"` and `%`. */
export function encodeHeaderValue(value: string | Uint8Array): string {
  const bytes = typeof value === 'string' ? Buffer.from(value, 'utf8') : Buffer.from(value);
  let out = '';
  for (const b of bytes) {
    out +=
      b < 0x21 || b > 0x7e || b === 0x22 || b === 0x25
        ? `%${b.toString(16).toUpperCase().padStart(2, '0')}`
        : String.fromCharCode(b);
  }
  return out;
}

export function mapHeaderName(name: string): string {
  if (EXTENSION_NAME.test(name) && !RESERVED_NAMES.has(name)) return `ce-${name}`;
  const chars = [...name];
  if (/^x-/i.test(name) && name.length > 2 && chars.every((c) => TOKEN_CHAR.test(c)))
    return name.toLowerCase();
  let encoded = '';
  for (const byte of Buffer.from(name, 'utf8')) {
    const c = String.fromCharCode(byte);
    encoded += byte < 0x80 && TOKEN_CHAR.test(c) ? c.toLowerCase() : `%${byte.toString(16).padStart(2, '0')}`;
  }
  return `x-${encoded}`;
}

/** amqplib decodes the AMQP types JavaScript has no value for as `{'!': type, value}`. */
interface AmqpTypedValue {
  '!': string;
  value: unknown;
}

function isTyped(value: unknown): value is AmqpTypedValue {
  return typeof value === 'object' && value !== null && Object.hasOwn(value, '!');
}

/** AMQP timestamp (seconds since the epoch) as RFC 3339 UTC, seconds precision. */
export function amqpTimestampText(seconds: number): string {
  const date = new Date(seconds * 1000);
  return Number.isNaN(date.getTime()) ? String(seconds) : date.toISOString().replace(/\.\d{3}Z$/, 'Z');
}

/** AMQP decimal (scale, 32-bit value) as plain decimal text: {places: 2, digits: 12345} → 123.45. */
export function amqpDecimalText(places: number, digits: number): string {
  // amqplib reads the value unsigned; RabbitMQ and the Java/pika clients write it signed.
  const signed = digits > 0x7fffffff ? digits - 0x1_0000_0000 : digits;
  const magnitude = String(Math.abs(signed)).padStart(places + 1, '0');
  const whole = places === 0 ? magnitude : `${magnitude.slice(0, -places)}.${magnitude.slice(-places)}`;
  return signed < 0 ? `-${whole}` : whole;
}

/** The documented text of an amqplib typed value; undefined for a type amqplib does not decode. */
function typedText(typed: AmqpTypedValue): string | undefined {
  const { value } = typed;
  if (typed['!'] === 'timestamp' && typeof value === 'number') return amqpTimestampText(value);
  if (typed['!'] === 'decimal' && typeof value === 'object' && value !== null) {
    const { places, digits } = value as { places?: unknown; digits?: unknown };
    if (typeof places === 'number' && typeof digits === 'number') return amqpDecimalText(places, digits);
  }
  return undefined;
}

function isSerializedBuffer(v: unknown): v is { type: 'Buffer'; data: number[] } {
  return (
    typeof v === 'object' &&
    v !== null &&
    (v as { type?: unknown }).type === 'Buffer' &&
    Array.isArray((v as { data?: unknown }).data)
  );
}

/** A broker header value as text or bytes (never logged); AMQP types as documented above. */
export function headerValueBytes(value: unknown): string | Uint8Array {
  if (typeof value === 'string') return value;
  if (value instanceof Uint8Array) return value;
  if (typeof value === 'number' || typeof value === 'boolean' || typeof value === 'bigint')
    return String(value);
  if (value instanceof Date) return value.toISOString();
  if (value === null || value === undefined) return '';
  if (isTyped(value)) {
    const text = typedText(value);
    if (text !== undefined) return text;
  }
  return JSON.stringify(value, (_key, v: unknown) => {
    if (typeof v === 'bigint') return v.toString();
    if (isTyped(v)) return typedText(v) ?? v;
    // JSON.stringify has already turned a Buffer into {type: 'Buffer', data} here.
    if (isSerializedBuffer(v)) return Buffer.from(v.data).toString('base64');
    if (typeof v === 'number' && !Number.isFinite(v)) return null;
    return v;
  });
}

const AMQP_PROPERTY_HEADERS = [
  ['correlationId', 'x-amqp-correlation-id'],
  ['replyTo', 'x-amqp-reply-to'],
  ['type', 'x-amqp-type'],
  ['appId', 'x-amqp-app-id'],
  ['userId', 'x-amqp-user-id'],
  ['priority', 'x-amqp-priority'],
  ['contentEncoding', 'x-amqp-content-encoding'],
  ['expiration', 'x-amqp-expiration'],
] as const;

/** HTTP request headers (name → value or repeated values) for one message. */
export function cloudEventHeaders(
  message: ShadowMessage,
  source: EventSource,
): Record<string, string | string[]> {
  const headers: Record<string, string | string[]> = {};
  const add = (name: string, value: string): void => {
    const existing = headers[name];
    if (existing === undefined) headers[name] = value;
    else headers[name] = Array.isArray(existing) ? [...existing, value] : [existing, value];
  };
  const fromKafka = message.broker.provider === 'kafka';
  const carried: CarriedHeader[] = fromKafka
    ? message.headers.filter((h) => h.name.toLowerCase() !== 'content-type')
    : message.headers;
  for (const header of carried)
    add(mapHeaderName(header.name), encodeHeaderValue(headerValueBytes(header.value)));
  const properties = message.broker.provider === 'rabbitmq' ? message.broker.properties : undefined;
  if (properties !== undefined) {
    for (const [property, name] of AMQP_PROPERTY_HEADERS) {
      const value = properties[property];
      if (value !== undefined) add(name, encodeHeaderValue(String(value)));
    }
  }
  const key = message.broker.provider === 'kafka' ? message.broker.key : null;
  if (key !== null) add('ce-partitionkey', encodeHeaderValue(key));
  // Attributes last: they replace anything a broker header could have mapped onto them.
  headers['ce-specversion'] = '1.0';
  headers['ce-id'] = encodeHeaderValue(message.id);
  headers['ce-source'] = encodeHeaderValue(cloudEventSource(source));
  headers['ce-type'] = CLOUD_EVENT_TYPE;
  headers['ce-time'] = message.time.toISOString();
  headers['content-type'] =
    message.contentType !== undefined && CONTENT_TYPE.test(message.contentType)
      ? message.contentType
      : 'application/octet-stream';
  return headers;
}
