// A Kafka record as a session message (core/providers/contract.ts MessageFacet): its part (the
// partition, offset, key, timestamp and headers as kafkajs decodes them), the message from a
// kafkajs record, the filter's view of its headers, and its form on the session stream.
import type { KafkaMessage } from 'kafkajs';
import { z } from 'zod';
import { brokerTime } from '../../brokerTime';
import { headerText, type MessageHeaders } from '../../filter';
import { asBuffer, wireBytes, type WireBase } from '../../messageWire';
import type { CarriedHeader, ShadowMessage } from '../../shadowMessage';
import type { MessageFacet, MessageLane } from '../contract';
import type { KafkaTypes } from './provider';

/** Header name → value(s) as kafkajs decodes them (null: a header sent with a null value). */
export type KafkaRawHeaders = Record<string, Buffer | string | null | (Buffer | string | null)[] | undefined>;

export interface KafkaMessagePart {
  provider: 'kafka';
  partition: number;
  offset: string;
  key: Buffer | null;
  timestamp: string;
  rawHeaders: KafkaRawHeaders;
}

type KafkaHeaderValue = Buffer | string | null | ReadonlyArray<Buffer | string | null> | undefined; // null: a null header value (never matches)

/** kafkajs `IHeaders` → headers: the last of repeated keys counts; non-UTF-8 bytes never match. */
export function kafkaHeaders(
  headers: Readonly<Record<string, KafkaHeaderValue>> | undefined,
): MessageHeaders {
  const result = new Map<string, string>();
  if (typeof headers !== 'object' || headers === null) return result;
  for (const key of Object.keys(headers)) {
    const raw: unknown = headers[key];
    const last: unknown = Array.isArray(raw) ? raw[raw.length - 1] : raw;
    const text = headerText(last);
    if (text !== undefined) result.set(key, text);
  }
  return result;
}

/** Every header as carried, repeated keys as repeated entries, in order. */
function headerEntries(headers: KafkaRawHeaders | undefined): CarriedHeader[] {
  const out: CarriedHeader[] = [];
  for (const [name, value] of Object.entries(headers ?? {})) {
    if (value === undefined) continue;
    for (const v of Array.isArray(value) ? value : [value]) out.push({ name, value: v });
  }
  return out;
}

/** A session topic's record; its id is `<partition>-<offset>` (stable across redeliveries). */
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
    broker: {
      provider: 'kafka',
      partition,
      offset: message.offset,
      key: message.key,
      timestamp: message.timestamp,
      rawHeaders: { ...raw },
    },
  };
}

// ---- on the session stream: under `kafka`, as v2 peers send it

const wireHeaderValue = z.union([wireBytes, z.null()]);

const kafkaWireSchema = z.object({
  partition: z.int().min(0),
  offset: z.string(),
  key: wireBytes.nullable(),
  timestamp: z.string(),
  /** Header name → value(s); a null value stays null (a Java RecordHeader(k, null)). */
  headers: z.record(z.string(), z.union([wireBytes, z.null(), z.array(wireHeaderValue)])),
});
export type KafkaWirePart = z.infer<typeof kafkaWireSchema>;

const bytesOf = (v: Buffer | string | null): Uint8Array | null =>
  v === null ? null : typeof v === 'string' ? Buffer.from(v, 'utf8') : v;

function toWire(part: KafkaMessagePart): KafkaWirePart {
  return {
    partition: part.partition,
    offset: part.offset,
    key: part.key,
    timestamp: part.timestamp,
    headers: Object.fromEntries(
      Object.entries(part.rawHeaders)
        .filter((e): e is [string, Buffer | string | null | (Buffer | string | null)[]] => e[1] !== undefined)
        .map(([k, v]) => [k, Array.isArray(v) ? v.map(bytesOf) : bytesOf(v)]),
    ),
  };
}

function fromWire(queue: string, w: WireBase, k: KafkaWirePart): ShadowMessage {
  const rawHeaders: KafkaRawHeaders = {};
  for (const [name, v] of Object.entries(k.headers))
    rawHeaders[name] = Array.isArray(v)
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
    filterHeaders: kafkaHeaders(rawHeaders),
    broker: {
      provider: 'kafka',
      partition: k.partition,
      offset: k.offset,
      key: k.key === null ? null : asBuffer(k.key),
      timestamp: k.timestamp,
      rawHeaders,
    },
  };
}

/** A partition commits only a prefix: it is the lane a parked record holds up. */
const partitionLane = (partition: number): MessageLane => ({
  key: String(partition),
  name: `partition ${partition}`,
});

const partitionOnly = z.object({ partition: z.int().min(0) });

export const kafkaMessage: MessageFacet<KafkaTypes> = {
  wireKey: 'kafka',
  wireSchema: kafkaWireSchema,
  toWire,
  fromWire,
  lane: (part) => partitionLane(part.partition),
  wireLane: (part) => {
    const parsed = partitionOnly.safeParse(part);
    return parsed.success ? partitionLane(parsed.data.partition) : undefined;
  },
};
