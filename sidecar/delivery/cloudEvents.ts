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
// non-UTF-8 Kafka values). Non-string AMQP values: numbers/booleans as text, byte arrays as
// bytes, tables and arrays as JSON.
import type { CarriedHeader, ShadowMessage } from '../consumers/types';

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

/** A broker header value as text or bytes (never logged). */
export function headerValueBytes(value: unknown): string | Uint8Array {
  if (typeof value === 'string') return value;
  if (value instanceof Uint8Array) return value;
  if (typeof value === 'number' || typeof value === 'boolean' || typeof value === 'bigint')
    return String(value);
  if (value instanceof Date) return value.toISOString();
  if (value === null || value === undefined) return '';
  return JSON.stringify(value, (_key, v: unknown) => {
    if (typeof v === 'bigint') return v.toString();
    if (
      typeof v === 'object' &&
      v !== null &&
      (v as { type?: unknown }).type === 'Buffer' &&
      Array.isArray((v as { data?: unknown }).data)
    ) {
      return Buffer.from((v as { data: number[] }).data).toString('base64');
    }
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
  const fromKafka = message.kafka !== undefined;
  const carried: CarriedHeader[] = fromKafka
    ? message.headers.filter((h) => h.name.toLowerCase() !== 'content-type')
    : message.headers;
  for (const header of carried)
    add(mapHeaderName(header.name), encodeHeaderValue(headerValueBytes(header.value)));
  const properties = message.amqp?.properties;
  if (properties !== undefined) {
    for (const [property, name] of AMQP_PROPERTY_HEADERS) {
      const value = properties[property];
      if (value !== undefined) add(name, encodeHeaderValue(String(value)));
    }
  }
  const key = message.kafka?.key;
  if (key !== undefined && key !== null) add('ce-partitionkey', encodeHeaderValue(key));
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
