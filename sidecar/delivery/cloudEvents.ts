// CloudEvents 1.0 HTTP binary mode for one shadow message: the body goes as-is, the event
// attributes and the broker headers go in HTTP headers. What a broker's messages add (an
// attribute from their own fields, headers of their own, the text of values only its client
// decodes) is their provider's (sidecar/providers/contract.ts CloudEventsFacet); the whole
// mapping, per broker, is in sidecar/README.md ("CloudEvents mapping (http)").
//
// Attributes:
//   ce-specversion  1.0
//   ce-id           the message's id (core/shadowMessage.ts)
//   ce-source       queuesplit://<namespace>/<workload>/<logical queue>
//   ce-type         dev.queuesplit.message
//   ce-time         the message's time (RFC 3339)
//   content-type    the message's content type, else application/octet-stream
//
// Broker headers, by name (first rule that applies):
//   1. a valid CloudEvents extension name (1-20 of a-z 0-9) that is not a core attribute name
//      (id, source, type, time, ...) nor partitionkey → `ce-<name>`            e.g. traceparent → ce-traceparent
//   2. starts with `x-`/`X-` and is an HTTP token without `%` → the name itself, lower-cased
//                                                            e.g. x-queue-split-user → x-queue-split-user
//   3. anything else → `x-` + the lower-cased name with every byte that is not an HTTP token
//      character (and `%`) percent-encoded               e.g. tenant-id → x-tenant-id, ünï → x-%c3%bcn%c3%af
//   HTTP names are case-insensitive, so case is not preserved. A repeated broker header becomes
//   repeated HTTP headers, in order; the provider's own headers follow the carried ones.
// Values: every header value is percent-encoded as the CloudEvents HTTP binding requires for
// attributes (UTF-8 bytes outside printable ASCII, space, `"` and `%` → %XX), so plain ASCII
// values arrive unchanged and anything else decodes with decodeURIComponent (or byte-wise for
// values that are not UTF-8). Before that, a value is text as headerValueBytes says.
import type { ShadowMessage } from '../../core/shadowMessage';
import { sidecarProvider } from '../providers/registry';

export const CLOUD_EVENT_TYPE = 'dev.queuesplit.message';

// Core attributes, plus partitionkey (the Partitioning extension, which a provider may carry).
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

function isSerializedBuffer(v: unknown): v is { type: 'Buffer'; data: number[] } {
  return (
    typeof v === 'object' &&
    v !== null &&
    (v as { type?: unknown }).type === 'Buffer' &&
    Array.isArray((v as { data?: unknown }).data)
  );
}

/** A broker header value as text or bytes (never logged): text, bytes, numbers and booleans as
 * themselves, null as empty, anything else as JSON (bytes in it as base64, NaN and Infinity as
 * null); `valueText` gives the text of the values only its broker's client decodes, at any
 * depth (the provider's CloudEventsFacet). */
export function headerValueBytes(
  value: unknown,
  valueText?: (value: unknown) => string | undefined,
): string | Uint8Array {
  if (typeof value === 'string') return value;
  if (value instanceof Uint8Array) return value;
  if (typeof value === 'number' || typeof value === 'boolean' || typeof value === 'bigint')
    return String(value);
  if (value instanceof Date) return value.toISOString();
  if (value === null || value === undefined) return '';
  const text = valueText?.(value);
  if (text !== undefined) return text;
  return JSON.stringify(value, (_key, v: unknown) => {
    if (typeof v === 'bigint') return v.toString();
    const own = valueText?.(v);
    if (own !== undefined) return own;
    // JSON.stringify has already turned a Buffer into {type: 'Buffer', data} here.
    if (isSerializedBuffer(v)) return Buffer.from(v.data).toString('base64');
    if (typeof v === 'number' && !Number.isFinite(v)) return null;
    return v;
  });
}

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
  const events = sidecarProvider(message.broker.provider).cloudEvents;
  for (const header of message.headers) {
    if (events.omits?.(header)) continue;
    add(mapHeaderName(header.name), encodeHeaderValue(headerValueBytes(header.value, events.valueText)));
  }
  for (const [name, value] of events.headers(message.broker)) add(name, encodeHeaderValue(value));
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
