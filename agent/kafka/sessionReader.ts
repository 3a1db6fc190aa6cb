// Reads one route's Kafka session shadow for its session stream: a member of the route's session
// group (the name the controller recorded, the one a route drain starts from), partitions in
// parallel, each partition's records sent in order. An offset is committed only once every
// record before it was answered by the sidecar, and only then settled, so a record the sidecar
// reports delivered is never drained to the app, and a record it never confirmed stays in the
// shadow (a resumed stream gets it again; a drain moves it to the app). A stop that comes while
// the reader is still connecting or joining waits for it and then leaves the group, so no member
// outlives its stream (docs/design.md §8, "Before a drain"). A record the developer rejected
// counts as answered like an acked one: Kafka has no reject, and the app's equivalent is to skip
// the record, so the offset is committed past it (core/sessionStream.ts `reject`).
import { type Consumer, type EachBatchPayload } from 'kafkajs';
import { kafkaShadowMessage } from '../../core/providers/kafka/message';
// Shadows keep their source's codec (snappy, lz4, zstd too), which kafkajs alone cannot read.
import '../../core/providers/kafka/codecs';
import type { SessionReader } from '../sessionStream/reader';
import type { RouteStream } from '../sessionStream/routeStream';
import { kafkaClient } from './clients';
import { defaultTiming, type KafkaConnection } from './config';

/** Long deliveries (a breakpoint in the handler) must not cost the group membership. */
const HEARTBEAT_MS = 3_000;
/** Short, so a resumed stream gets the partitions soon after an agent crash. */
const SESSION_TIMEOUT_MS = 15_000;
/** Partitions whose batches are streamed at once (the window bounds the messages). */
const CONCURRENT_PARTITIONS = 8;

export interface KafkaReaderConfig {
  queue: string;
  connection: KafkaConnection;
  topic: string;
  group: string;
}

export class KafkaSessionReader implements SessionReader {
  private consumer: Consumer | undefined;
  private stopping = false;
  private starting: Promise<void> | undefined;
  private stopped: Promise<void> | undefined;

  constructor(private readonly config: KafkaReaderConfig) {}

  start(stream: RouteStream, onFailure: (err: unknown) => void): Promise<void> {
    this.starting ??= this.open(stream, onFailure);
    return this.starting;
  }

  private async open(stream: RouteStream, onFailure: (err: unknown) => void): Promise<void> {
    const { queue, connection, topic, group } = this.config;
    const consumer = kafkaClient(connection, `queue-split-session-${queue}`, defaultTiming).consumer({
      groupId: group,
      sessionTimeout: SESSION_TIMEOUT_MS,
      heartbeatInterval: HEARTBEAT_MS,
      allowAutoTopicCreation: false,
      maxWaitTimeInMs: 500,
      retry: { retries: 5, initialRetryTime: 300, maxRetryTime: 5_000 },
    });
    this.consumer = consumer;
    await consumer.connect();
    // A stop() that came meanwhile waits for this start: run() now would join the group after
    // the disconnect (kafkajs 2.2.4 reconnects in run), holding partitions nobody reads.
    if (this.stopping) return;
    await consumer.subscribe({ topics: [topic], fromBeginning: true });
    consumer.on(consumer.events.CRASH, (event) => {
      if (!this.stopping && !event.payload.restart) onFailure(event.payload.error);
    });
    if (this.stopping) return;
    await consumer.run({
      autoCommit: false,
      eachBatchAutoResolve: false,
      partitionsConsumedConcurrently: CONCURRENT_PARTITIONS,
      eachBatch: (payload) => this.stream(payload, stream),
    });
  }

  private async stream(payload: EachBatchPayload, stream: RouteStream): Promise<void> {
    const { batch, resolveOffset, heartbeat, commitOffsetsIfNecessary, isRunning, isStale } = payload;
    const queue = this.config.queue;
    // Sent records of this batch in offset order; the answered prefix is committed and settled.
    const inflight: { offset: string; tag: number; acked: boolean }[] = [];
    let unacked = 0;
    let allAcked: () => void = () => undefined;
    let commits = Promise.resolve();
    let commitError: unknown;
    const commitAckedPrefix = () => {
      commits = commits
        .then(async () => {
          const tags: number[] = [];
          let last: string | undefined;
          while (inflight[0]?.acked) {
            const done = inflight.shift()!;
            tags.push(done.tag);
            last = done.offset;
          }
          if (last === undefined) return;
          const next = (BigInt(last) + 1n).toString();
          // commitOffsetsIfNecessary commits at once, also while the consumer stops (where
          // consumer.commitOffsets would return without committing: kafkajs 2.2.4).
          await commitOffsetsIfNecessary({
            topics: [{ topic: batch.topic, partitions: [{ partition: batch.partition, offset: next }] }],
          });
          resolveOffset(last);
          stream.settle(tags);
        })
        .catch((err: unknown) => {
          commitError ??= err;
        });
    };
    const beat = setInterval(() => void heartbeat().catch(() => undefined), HEARTBEAT_MS);
    try {
      for (const message of batch.messages) {
        if (this.stopping || stream.isClosed || commitError || !isRunning() || isStale()) break;
        let sent;
        try {
          sent = await stream.send(queue, kafkaShadowMessage(queue, batch.partition, message));
        } catch {
          break; // the stream closed while waiting for a credit: the rest stays in the shadow
        }
        const entry = { offset: message.offset, tag: sent.tag, acked: false };
        inflight.push(entry);
        unacked++;
        // Ack or reject alike: both settle by committing past the record (see the header).
        sent.answered.then(
          () => {
            entry.acked = true;
            if (--unacked === 0) allAcked();
            commitAckedPrefix();
          },
          () => undefined,
        );
      }
      if (unacked > 0) await Promise.race([new Promise<void>((r) => (allAcked = r)), stream.closed]);
      await commits;
      if (commitError) throw commitError; // kafkajs retries the batch from the last committed offset
    } finally {
      clearInterval(beat);
    }
  }

  stop(): Promise<void> {
    this.stopped ??= (async () => {
      this.stopping = true;
      await this.starting?.catch(() => undefined);
      // Leaves the group: the route's drain waits for an empty session group.
      await this.consumer?.disconnect().catch(() => undefined);
    })();
    return this.stopped;
  }
}
