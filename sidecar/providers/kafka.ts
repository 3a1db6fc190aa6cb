// Kafka to the sidecar (sidecar/providers/contract.ts): the session topic's consumer with the
// session group, and the relay into a local Kafka — an idempotent producer acked by every
// in-sync replica, keeping key, headers, timestamp and (when the local topic has it) the
// partition.
import { Kafka, logLevel, Partitioners, type Producer } from 'kafkajs';
import { sendableHeaders } from '../../core/providers/kafka/nullHeaders';
import type { ShadowMessage } from '../../core/shadowMessage';
import { SidecarError, errorChain, errorText } from '../../laptop/errors';
import { kafkaLogCreator } from '../../laptop/kafka';
import { KafkaShadowConsumer } from '../consumers/kafka';
import type { AttemptResult } from '../delivery/retry';
import type { Reporter } from '../output';
import type { RelayDestination, RelayPublisher, SidecarProvider } from './contract';

class KafkaRelay implements RelayPublisher {
  private producer: Producer | undefined;
  private readonly partitions = new Map<string, number>();
  readonly subject: string;

  constructor(
    private readonly brokers: readonly string[] | undefined,
    private readonly reporter: Reporter,
  ) {
    this.subject = `The local Kafka (${brokers?.join(',') ?? '-'})`;
  }

  describe(d: RelayDestination): string {
    return `local Kafka topic ${d.name} (${this.brokers?.join(',') ?? ''})`;
  }

  async open(destinations: readonly RelayDestination[]): Promise<void> {
    const brokers = [...(this.brokers ?? [])];
    const kafka = new Kafka({
      clientId: 'queue-split-sidecar-relay',
      brokers,
      logLevel: logLevel.WARN,
      logCreator: kafkaLogCreator((line) => this.reporter.log(line)),
      connectionTimeout: 5_000,
      retry: { retries: 2, initialRetryTime: 300 },
    });
    const admin = kafka.admin();
    try {
      await admin.connect();
      for (const d of destinations) {
        try {
          const meta = await admin.fetchTopicMetadata({ topics: [d.name] });
          this.partitions.set(d.name, meta.topics[0]?.partitions.length ?? 0);
        } catch (err) {
          if (errorChain(err).some((e) => (e as { type?: unknown }).type === 'UNKNOWN_TOPIC_OR_PARTITION')) {
            throw new SidecarError(
              'relay-destination-missing',
              `The local Kafka topic ${d.name} (relay destination of queue "${d.queue}") does not exist on ${brokers.join(',')}.`,
              `Create it on your local broker, or choose another in the queueSplit.delivery.relayTo setting (sidecar: --relay-to ${d.queue}=<topic>).`,
            );
          }
          throw err;
        }
      }
    } catch (err) {
      if (err instanceof SidecarError) throw err;
      throw new SidecarError(
        'broker-unreachable',
        `Cannot reach the local Kafka ${brokers.join(',')} to relay to: ${errorText(errorChain(err).at(-1))}`,
        'Start your local Kafka, or fix the queueSplit.delivery.relayKafkaBrokers setting (sidecar: --relay-kafka-brokers).',
        '--relay-kafka-brokers',
      );
    } finally {
      await admin.disconnect().catch(() => undefined);
    }
    this.producer = kafka.producer({
      idempotent: true,
      maxInFlightRequests: 1,
      allowAutoTopicCreation: false,
      createPartitioner: Partitioners.DefaultPartitioner,
      retry: { retries: 2, initialRetryTime: 300 },
    });
    await this.producer.connect();
  }

  async publish(d: RelayDestination, message: ShadowMessage): Promise<AttemptResult> {
    const producer = this.producer;
    const kafka = message.broker.provider === 'kafka' ? message.broker : undefined;
    if (producer === undefined || kafka === undefined)
      return { ok: false, reason: 'the Kafka relay is not open' };
    const partitions = this.partitions.get(d.name) ?? 0;
    try {
      await producer.send({
        topic: d.name,
        acks: -1,
        messages: [
          {
            key: kafka.key,
            value: message.body,
            headers: sendableHeaders(kafka.rawHeaders),
            timestamp: kafka.timestamp,
            ...(kafka.partition < partitions ? { partition: kafka.partition } : {}),
          },
        ],
      });
      return { ok: true };
    } catch (err) {
      return { ok: false, reason: errorText(errorChain(err).at(-1)) };
    }
  }

  async close(): Promise<void> {
    await this.producer?.disconnect().catch(() => undefined);
  }
}

export const kafkaSidecar: SidecarProvider<'kafka'> = {
  provider: 'kafka',
  consumer({ queue, shadow, connection, addressMap, reporter, onFatal }) {
    if (shadow.group === undefined) {
      throw new SidecarError(
        'split-failed',
        `The controller named no session consumer group for Kafka queue "${queue}".`,
        'Check the controller version and `kubectl describe queuesplit`.',
      );
    }
    return new KafkaShadowConsumer({
      queue,
      topic: shadow.source,
      group: shadow.group,
      connection,
      addressMap,
      reporter,
      onFatal,
    });
  },
  relay: {
    flag: '--relay-kafka-brokers',
    arg: '<list>',
    help: 'relay: local Kafka to republish Kafka queues into',
    example: '127.0.0.1:9092',
    check: () => undefined,
    redact: () => undefined,
    publisher: (text, reporter) =>
      new KafkaRelay(
        text
          ?.split(',')
          .map((b) => b.trim())
          .filter((b) => b !== ''),
        reporter,
      ),
  },
  cloudEvents: {
    // The record's content-type header is the event's content type, not an x-content-type too.
    omits: (header) => header.name.toLowerCase() === 'content-type',
    // The key, when there is one, as the CloudEvents Partitioning extension's partition key.
    headers: (part) => (part.key !== null ? [['ce-partitionkey', part.key]] : []),
  },
};
