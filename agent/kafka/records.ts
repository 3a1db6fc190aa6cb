// A source record as it is copied: same partition, key, value (null stays null), headers
// (repeated keys, raw bytes and null values included) and timestamp. Only the offset is the
// shadow's own.
import type { Message, TopicMessages } from 'kafkajs';
import { kafkaHeaders } from '../../core/providers/kafka/message';
import { copyCodec, type Codec } from '../../core/providers/kafka/codecs';
import { sendableHeaders } from '../../core/providers/kafka/nullHeaders';
import type { FetchedRecord, RecordHeaders } from './wire';

export function copyOf(record: FetchedRecord): Message {
  return {
    partition: record.partition,
    key: record.key,
    value: record.value,
    headers: sendableHeaders(record.headers),
    timestamp: record.timestamp,
  };
}

/** Groups copies by destination topic, keeping their order (kafkajs keeps it per partition). */
export function topicMessages(
  items: readonly { destination: string; record: FetchedRecord }[],
): TopicMessages[] {
  const byTopic = new Map<string, Message[]>();
  for (const { destination, record } of items) {
    const list = byTopic.get(destination) ?? [];
    list.push(copyOf(record));
    byTopic.set(destination, list);
  }
  return [...byTopic].map(([topic, messages]) => ({ topic, messages }));
}

/** Consecutive runs of copies written with the same codec (their source batch's, where it can
 * be encoded), in order: kafkajs compresses a whole produce request with one codec. */
export function codecRuns<T extends { record: FetchedRecord }>(
  items: readonly T[],
): { codec: Codec; items: T[] }[] {
  const runs: { codec: Codec; items: T[] }[] = [];
  for (const item of items) {
    const codec = copyCodec(item.record.codec);
    const last = runs[runs.length - 1];
    if (last?.codec === codec) last.items.push(item);
    else runs.push({ codec, items: [item] });
  }
  return runs;
}

/** The id a test hook matches on; never logged (header values are user data). */
export function messageIdOf(headers: RecordHeaders, header: string): string | undefined {
  return kafkaHeaders(headers).get(header);
}

/** Below the broker's default `message.max.bytes` (1 MiB): kafkajs sends all records for one
 * partition of one transaction as a single record batch, which the broker refuses above it. */
export const MAX_BATCH_BYTES = 900 * 1024;

function sizeOf(record: FetchedRecord): number {
  let n = 64 + (record.key?.length ?? 0) + (record.value?.length ?? 0);
  for (const [k, v] of Object.entries(record.headers)) {
    for (const x of Array.isArray(v) ? v : [v]) n += k.length + (x === null ? 0 : x.length) + 8;
  }
  return n;
}

/** Splits copies into transactions of at most `maxRecords`, and at most MAX_BATCH_BYTES per
 * destination partition (a single larger record still goes, alone). Order is kept. */
export function chunks<T extends { destination: string; record: FetchedRecord }>(
  items: readonly T[],
  maxRecords: number,
): T[][] {
  const out: T[][] = [];
  let current: T[] = [];
  let bytes = new Map<string, number>();
  for (const item of items) {
    const key = `${item.destination}\u0000${item.record.partition}`;
    const size = sizeOf(item.record);
    const used = bytes.get(key) ?? 0;
    if (current.length > 0 && (current.length >= maxRecords || used + size > MAX_BATCH_BYTES)) {
      out.push(current);
      current = [];
      bytes = new Map();
    }
    current.push(item);
    bytes.set(key, (bytes.get(key) ?? 0) + size);
  }
  if (current.length > 0) out.push(current);
  return out;
}
