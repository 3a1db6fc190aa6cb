// Consumes a Kafka session shadow topic with the session consumer group the controller named.
// One message at a time (partitionsConsumedConcurrently 1): order is kept per partition, and
// the offset is committed after the delivery mode reports success and before the message is
// reported delivered, also while stopping (a reported message is never drained to the app). A
// message the developer rejected is committed past the same way: Kafka has no reject, and the
// app's equivalent is to skip the record.
// Messages not committed when the sidecar stops stay in the topic: a restart resumes there, a
// detach drains them.
import type { Consumer } from 'kafkajs';
import { kafkaShadowMessage } from '../../core/providers/kafka/message';
// Shadows keep their source's codec (snappy, lz4, zstd too), which kafkajs alone cannot read.
import '../../core/providers/kafka/codecs';
import type { AddressMap } from '../../laptop/addressMap';
import { SidecarError, errorText } from '../../laptop/errors';
import { kafkaClient, kafkaStartError, type KafkaConnection } from '../../laptop/kafka';
import type { Reporter } from '../output';
import type { Delivery, DeliveryHandler, ShadowConsumer } from './types';

/** Long deliveries (a breakpoint in the handler) must not cost the group membership. */
const HEARTBEAT_DURING_DELIVERY_MS = 3_000;
/** Short, so a restarted sidecar gets its partitions soon after a kill -9 of the old one. */
const SESSION_TIMEOUT_MS = 15_000;

export interface KafkaShadowOptions {
  queue: string;
  topic: string;
  group: string;
  connection: KafkaConnection;
  addressMap: AddressMap;
  reporter: Reporter;
  /** A failure kafkajs does not recover from after start. */
  onFatal: (err: SidecarError) => void;
}

export class KafkaShadowConsumer implements ShadowConsumer {
  readonly queue: string;
  private consumer: Consumer | undefined;
  private stopping = false;

  constructor(private readonly options: KafkaShadowOptions) {
    this.queue = options.queue;
  }

  async start(handler: DeliveryHandler): Promise<void> {
    const { topic, group, connection, reporter } = this.options;
    const kafka = kafkaClient(
      connection,
      this.options.addressMap,
      (line) => reporter.log(line),
      `queue-split-sidecar-${this.queue}`,
    );
    const consumer = kafka.consumer({
      groupId: group,
      sessionTimeout: SESSION_TIMEOUT_MS,
      heartbeatInterval: 3_000,
      allowAutoTopicCreation: false,
      retry: { retries: 10, initialRetryTime: 300, maxRetryTime: 10_000 },
    });
    this.consumer = consumer;
    try {
      await consumer.connect();
      await consumer.subscribe({ topics: [topic], fromBeginning: true });
    } catch (err) {
      await consumer.disconnect().catch(() => undefined);
      throw kafkaStartError(err, `session shadow topic ${topic}`, connection);
    }
    consumer.on(consumer.events.CRASH, (event) => {
      if (this.stopping || event.payload.restart) return;
      this.options.onFatal(kafkaStartError(event.payload.error, `session shadow topic ${topic}`, connection));
    });
    await consumer.run({
      autoCommit: false,
      // eachBatch, one message at a time: its commitOffsetsIfNecessary(offsets) commits at once
      // even while the consumer is stopping, where consumer.commitOffsets returns silently
      // without committing (kafkajs 2.2.4) and a delivered message would be drained to the app.
      eachBatchAutoResolve: false,
      partitionsConsumedConcurrently: 1,
      eachBatch: async ({
        batch,
        resolveOffset,
        heartbeat,
        commitOffsetsIfNecessary,
        isRunning,
        isStale,
      }) => {
        for (const message of batch.messages) {
          // Stopping: leave the rest uncommitted; it stays in the shadow for a restart or the drain.
          if (this.stopping || !isRunning() || isStale()) return;
          const shadowMessage = kafkaShadowMessage(this.queue, batch.partition, message);
          const beat = setInterval(
            () => void heartbeat().catch(() => undefined),
            HEARTBEAT_DURING_DELIVERY_MS,
          );
          let delivery: Delivery;
          try {
            delivery = await handler.deliver(shadowMessage);
          } catch (err) {
            if (this.stopping) return;
            throw err;
          } finally {
            clearInterval(beat);
          }
          const next = (BigInt(message.offset) + 1n).toString();
          try {
            await commitOffsetsIfNecessary({
              topics: [{ topic: batch.topic, partitions: [{ partition: batch.partition, offset: next }] }],
            });
          } catch (err) {
            // Not committed: it comes again (or the drain moves it), so it is not reported delivered.
            reporter.log(
              `kafka consumer ${this.queue}: message ${shadowMessage.id} was delivered but its commit failed (${errorText(err)}); it will be delivered again`,
            );
            if (this.stopping) return;
            throw err;
          }
          resolveOffset(message.offset);
          handler.settled(shadowMessage, delivery);
        }
      },
    });
  }

  async stop(): Promise<void> {
    this.stopping = true;
    await this.consumer
      ?.disconnect()
      .catch((err: unknown) =>
        this.options.reporter.log(`kafka consumer ${this.queue}: disconnect failed: ${errorText(err)}`),
      );
  }
}
