// The consumers of the Kafka harness, written as an application would with plain kafkajs
// group consumers: each processed record is committed as `offset + 1` (so transaction markers
// after the last record stay uncommitted, as with many real applications), and a killed
// consumer leaves its group without committing what it holds.
import { randomBytes } from 'node:crypto';
import type { Admin, Consumer, Kafka, KafkaMessage } from 'kafkajs';
import type { ConsumerHandle, Observed } from '../harness';
import { ID_HEADER, observe } from './messages';

const idOf = (m: KafkaMessage): string => {
  const v = m.headers?.[ID_HEADER];
  return String(Array.isArray(v) ? v[v.length - 1] : v);
};

function groupConsumer(kafka: Kafka, groupId: string): Consumer {
  return kafka.consumer({ groupId, maxWaitTimeInMs: 100, sessionTimeout: 10_000, heartbeatInterval: 1_000 });
}

async function commitNext(
  consumer: Consumer,
  topic: string,
  partition: number,
  offset: string,
): Promise<void> {
  await consumer.commitOffsets([{ topic, partition, offset: (BigInt(offset) + 1n).toString() }]);
}

/** Reads and commits until every expected id arrived and it has been quiet for a moment.
 * Records of `held` partitions are neither seen nor committed (another holder owns them). */
export async function readGroup(
  kafka: Kafka,
  topic: string,
  groupId: string,
  expectIds: readonly string[],
  timeoutMs: number,
  held: () => ReadonlySet<number>,
): Promise<Observed[]> {
  const consumer = groupConsumer(kafka, groupId);
  const seen: Observed[] = [];
  const read = new Set<string>();
  let lastAt = Date.now();
  await consumer.connect();
  try {
    await consumer.subscribe({ topic, fromBeginning: true });
    await consumer.run({
      autoCommit: false,
      eachMessage: async ({ partition, message }) => {
        if (held().has(partition)) return;
        // A commit that fails (a coordinator moving after a broker restart) makes kafkajs hand
        // the same record over again: that is this reader's retry, not a second copy in the log.
        const at = `${partition}/${message.offset}`;
        if (!read.has(at)) {
          read.add(at);
          seen.push(observe(message, partition));
        }
        lastAt = Date.now();
        await commitNext(consumer, topic, partition, message.offset);
      },
    });
    const want = new Set(expectIds);
    const deadline = Date.now() + timeoutMs;
    while (Date.now() < deadline) {
      const got = new Set(seen.map((o) => o.id));
      if ([...want].every((id) => got.has(id)) && Date.now() - lastAt > 600) break;
      await new Promise((r) => setTimeout(r, 100));
    }
  } finally {
    await consumer.disconnect();
  }
  return seen;
}

export async function consumeGroup(
  kafka: Kafka,
  topic: string,
  groupId: string,
  ackFirst: number,
): Promise<ConsumerHandle> {
  const consumer = groupConsumer(kafka, groupId);
  const received: string[] = [];
  const acked: string[] = [];
  const held: { partition: number; message: KafkaMessage }[] = [];
  let ackEverything = false;
  const ack = async (partition: number, message: KafkaMessage) => {
    await commitNext(consumer, topic, partition, message.offset);
    acked.push(idOf(message));
  };
  await consumer.connect();
  await consumer.subscribe({ topic, fromBeginning: true });
  await consumer.run({
    autoCommit: false,
    eachMessage: async ({ partition, message }) => {
      received.push(idOf(message));
      if (ackEverything || acked.length < ackFirst) await ack(partition, message);
      else held.push({ partition, message });
    },
  });
  return {
    received,
    acked,
    ackAll() {
      ackEverything = true;
      for (const h of held.splice(0)) void ack(h.partition, h.message);
    },
    async kill() {
      await consumer.disconnect();
    },
  };
}

export interface Scan {
  /** Committed data records in [from, to) per partition. */
  readonly count: number;
  /** The first such record per partition. */
  readonly first: ReadonlyMap<number, { offset: string; id: string }>;
}

/** Reads a topic with a throwaway group (never committing) and counts the data records in
 * the given ranges; control-only batches still report their offsets, so markers are passed. */
export async function scan(
  kafka: Kafka,
  admin: Admin,
  topic: string,
  ranges: ReadonlyMap<number, { from: string; to: string }>,
  timeoutMs = 15_000,
): Promise<Scan> {
  const open = new Map([...ranges].filter(([, r]) => BigInt(r.from) < BigInt(r.to)));
  const first = new Map<number, { offset: string; id: string }>();
  let count = 0;
  if (open.size === 0) return { count, first };
  const groupId = `qs-scan-${randomBytes(6).toString('hex')}`;
  const consumer = groupConsumer(kafka, groupId);
  const reached = (partition: number, lastOffset: string) => {
    const r = open.get(partition);
    if (r && BigInt(lastOffset) + 1n >= BigInt(r.to)) open.delete(partition);
  };
  consumer.on(consumer.events.END_BATCH_PROCESS, (e) => reached(e.payload.partition, e.payload.lastOffset));
  await consumer.connect();
  try {
    await consumer.subscribe({ topic, fromBeginning: true });
    await consumer.run({
      autoCommit: false,
      eachMessage: async ({ partition, message }) => {
        const r = ranges.get(partition);
        const o = BigInt(message.offset);
        if (!r || o < BigInt(r.from) || o >= BigInt(r.to)) return;
        count++;
        if (!first.has(partition)) first.set(partition, { offset: message.offset, id: idOf(message) });
      },
    });
    const deadline = Date.now() + timeoutMs;
    while (open.size > 0 && Date.now() < deadline) await new Promise((r) => setTimeout(r, 50));
    if (open.size > 0)
      throw new Error(`scan of ${topic}: partitions ${[...open.keys()].join(',')} not read in time`);
  } finally {
    await consumer.disconnect();
    await admin.deleteGroups([groupId]).catch(() => undefined);
  }
  return { count, first };
}
