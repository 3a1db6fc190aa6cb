// The two brokers as the split-path bench drives them: publish batches (each message with its
// send time and window headers, latencySinks.ts), consume a queue/topic directly from this process
// (the raw pipe, and `env` mode's read of a session shadow), count what waits in a shadow, and
// create and delete the bench's own sources.
import * as amqp from 'amqplib';
import { Partitioners, type Kafka, type Producer } from 'kafkajs';
import { ResilientAdmin } from '../../../agent/kafka/admin';
import { createTopicWithLeaders, kafkaClient } from '../../support/kafkaSplit';
import type { Services } from '../../support/services';
import { SENT_AT, WINDOW } from './latencySinks';

export interface BenchMessage {
  id: string;
  user: string | undefined;
  sentAt: number;
  window: string;
}

export interface BenchBroker {
  readonly provider: 'rabbitmq' | 'kafka';
  /** A fresh source (queue/topic) for this bench. */
  createSource(name: string): Promise<void>;
  deleteSource(name: string): Promise<void>;
  /** Publishes without waiting; `flush` waits for every publish so far to be confirmed. */
  send(target: string, batch: readonly BenchMessage[]): void;
  flush(): Promise<void>;
  /**
   * A consumer of `target` in this process (Kafka: in `group`, from the earliest offset), calling
   * `onMessage` with each message's window and send → receive latency; resolves once it is
   * consuming. The returned function stops it.
   */
  consume(
    target: string,
    group: string,
    onMessage: (window: string, latencyMs: number) => void,
  ): Promise<() => Promise<void>>;
  /** Messages in `target` not yet consumed (Kafka: `group`'s lag). */
  waiting(target: string, group: string): Promise<number>;
  close(): Promise<void>;
}

const header = (v: unknown): string =>
  Buffer.isBuffer(v) ? v.toString() : Array.isArray(v) ? header(v[v.length - 1]) : String(v ?? '');

export async function rabbitBroker(services: Services): Promise<BenchBroker> {
  const conn = await amqp.connect(services.amqpUrl);
  const ch = await conn.createConfirmChannel();
  const headersOf = (m: BenchMessage) => ({
    ...(m.user ? { 'x-queue-split-user': m.user } : {}),
    [SENT_AT]: String(m.sentAt),
    [WINDOW]: m.window,
  });
  return {
    provider: 'rabbitmq',
    createSource: async (name) => void (await ch.assertQueue(name, { durable: true })),
    deleteSource: async (name) => void (await ch.deleteQueue(name)),
    send: (target, batch) => {
      for (const m of batch)
        ch.sendToQueue(target, Buffer.from(m.id), {
          messageId: m.id,
          persistent: true,
          headers: headersOf(m),
        });
    },
    flush: () => ch.waitForConfirms(),
    consume: async (target, _group, onMessage) => {
      const local = await conn.createChannel();
      await local.prefetch(100);
      const { consumerTag } = await local.consume(target, (m) => {
        if (!m) return;
        const h = m.properties.headers ?? {};
        onMessage(header(h[WINDOW]), Date.now() - Number(header(h[SENT_AT])));
        local.ack(m);
      });
      return async () => {
        await local.cancel(consumerTag);
        await local.close();
      };
    },
    waiting: async (target) => {
      // A channel of its own: checkQueue on a missing queue closes the channel it runs on.
      const probe = await conn.createChannel();
      try {
        return (await probe.checkQueue(target)).messageCount;
      } finally {
        await probe.close().catch(() => undefined);
      }
    },
    close: async () => {
      await conn.close().catch(() => undefined);
    },
  };
}

export async function kafkaBroker(services: Services): Promise<BenchBroker> {
  const kafka: Kafka = kafkaClient(services, 'qs-bench-split-path');
  // A producer refreshes the metadata of every topic it ever sent to, so once one of those is
  // deleted it fails every later send (UNKNOWN_TOPIC_OR_PARTITION): deleting a source replaces it.
  const connectProducer = async (): Promise<Producer> => {
    const p = kafka.producer({ createPartitioner: Partitioners.DefaultPartitioner });
    await p.connect();
    return p;
  };
  let producer = connectProducer();
  await producer;
  // Resilient, as the agent's: `waiting` reads a session shadow's offsets, and the agent deletes
  // that shadow at the handback; a plain kafkajs admin then refreshes the deleted topic's metadata
  // on every later call and fails them all (UNKNOWN_TOPIC_OR_PARTITION: the next run's topic
  // could not be created).
  const admin = new ResilientAdmin(kafka).client;
  await admin.connect();
  let pending: Promise<unknown>[] = [];
  return {
    provider: 'kafka',
    // The suites' wait for leaders, not kafkajs' (which gives up on UNKNOWN_TOPIC_OR_PARTITION as a
    // new topic spreads: two of three Kafka runs of split-path.bench.ts failed so).
    createSource: (name) => createTopicWithLeaders(kafka, { topic: name, numPartitions: 3 }),
    deleteSource: async (name) => {
      await admin.deleteTopics({ topics: [name] });
      const old = producer;
      producer = connectProducer();
      await (await old).disconnect();
    },
    send: (target, batch) => {
      // Each batch's send is chained on the producer in order: batches go out as sent.
      pending.push(
        producer.then((p) =>
          p.send({
            topic: target,
            acks: -1,
            messages: batch.map((m) => ({
              key: m.id,
              value: m.id,
              headers: {
                ...(m.user ? { 'x-queue-split-user': m.user } : {}),
                'x-message-id': m.id,
                [SENT_AT]: String(m.sentAt),
                [WINDOW]: m.window,
              },
            })),
          }),
        ),
      );
    },
    flush: async () => {
      const all = pending;
      pending = [];
      await Promise.all(all);
    },
    consume: async (target, group, onMessage) => {
      const consumer = kafka.consumer({ groupId: group, maxWaitTimeInMs: 100 });
      await consumer.connect();
      const joined = new Promise<void>((resolve) => consumer.on(consumer.events.GROUP_JOIN, () => resolve()));
      await consumer.subscribe({ topic: target, fromBeginning: true });
      await consumer.run({
        eachMessage: async ({ message }) => {
          const h = message.headers ?? {};
          onMessage(header(h[WINDOW]), Date.now() - Number(header(h[SENT_AT])));
        },
      });
      await joined;
      return () => consumer.disconnect();
    },
    waiting: async (target, group) => {
      const ends = await admin.fetchTopicOffsets(target);
      const [committed] = await admin.fetchOffsets({ groupId: group, topics: [target] });
      const at = new Map(committed?.partitions.map((p) => [p.partition, Number(p.offset)]));
      return ends.reduce((sum, p) => {
        const c = at.get(p.partition) ?? -1;
        return sum + Number(p.high) - (c < 0 ? Number(p.low) : c);
      }, 0);
    },
    close: async () => {
      await (await producer).disconnect().catch(() => undefined);
      await admin.disconnect().catch(() => undefined);
    },
  };
}
