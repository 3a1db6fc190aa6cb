// How the Kafka harness writes a TestMessage and reads an Observed back, with plain kafkajs.
// The test id travels in the `x-message-id` header (the fixtures' convention), the content
// type in `content-type` (Kafka has no such field), and provider extras are the record key
// and partition.
import type { IHeaders, KafkaMessage, Message } from 'kafkajs';
import type { Observed, TestMessage } from '../harness';

export const ID_HEADER = 'x-message-id';
const CONTENT_TYPE = 'content-type';
/** Not UTF-8: how the harness sends NON_STRING, a header value that must never match. */
export const NON_UTF8 = Buffer.from([0xff, 0xfe, 0xc3]);

export function toRecord(m: TestMessage, partition: number): Message {
  const extra = (m.extra ?? {}) as { key?: string; headers?: IHeaders };
  const headers: IHeaders = { ...extra.headers };
  for (const [k, v] of Object.entries(m.headers ?? {})) headers[k] = typeof v === 'string' ? v : NON_UTF8;
  headers[ID_HEADER] = m.id;
  if (m.contentType !== undefined) headers[CONTENT_TYPE] = m.contentType;
  return {
    partition,
    key: extra.key ?? null,
    value: m.body ?? Buffer.from(`body of ${m.id}`),
    headers,
    ...(m.timestamp === undefined ? {} : { timestamp: String(m.timestamp) }),
  };
}

const utf8 = new TextDecoder('utf-8', { fatal: true });
function decode(value: Buffer | string | null | undefined): unknown {
  if (value === undefined || value === null || typeof value === 'string') return value; // null: a null header value
  try {
    return utf8.decode(value);
  } catch {
    return value; // bytes that are not text stay bytes
  }
}

export function observe(message: KafkaMessage, partition: number): Observed {
  const headers: Record<string, unknown> = {};
  for (const [k, v] of Object.entries(message.headers ?? {})) {
    headers[k] = Array.isArray(v) ? v.map((x) => decode(x)) : decode(v);
  }
  return {
    id: String(headers[ID_HEADER]),
    body: message.value ?? Buffer.alloc(0),
    headers,
    contentType: typeof headers[CONTENT_TYPE] === 'string' ? headers[CONTENT_TYPE] : undefined,
    timestamp: Number(message.timestamp),
    // The offset tells a second copy (another offset) from a reader seeing one record again.
    extra: { key: message.key === null ? null : message.key.toString(), partition, offset: message.offset },
  };
}
