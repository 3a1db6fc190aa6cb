// Kafka helpers for the cluster suites: a topic per test, messages with unique ids (the
// `x-message-id` header the fixture consumer records) and a developer's local consumer of a
// session shadow, reading it with the group the split's env overrides name.
import {
  Kafka,
  logLevel,
  Partitioners,
  type Admin,
  type Consumer,
  type ITopicConfig,
  type Producer,
} from 'kafkajs';
import { messageBody, messageHeaders } from './secrets';
import type { Services } from './services';

export function kafkaClient(services: Services, clientId: string): Kafka {
  return new Kafka({ clientId, brokers: services.kafkaBrokers, logLevel: logLevel.NOTHING });
}

/** Creates `topic` with `numPartitions` and waits until every partition has a leader. */
export async function createTopic(kafka: Kafka, topic: string, numPartitions = 3): Promise<void> {
  await createTopicWithLeaders(kafka, { topic, numPartitions });
}

/**
 * Creates a topic and waits until every partition has a leader. Not kafkajs's own wait
 * (`waitForLeaders`, on by default): it retries only LEADER_NOT_AVAILABLE, while a KRaft broker
 * answers UNKNOWN_TOPIC_OR_PARTITION as a new topic spreads (split-kafka and kafka-specific failed
 * on it in full runs). Polled with a fresh admin each time: one that saw the topic missing keeps
 * failing.
 */
export async function createTopicWithLeaders(kafka: Kafka, spec: ITopicConfig): Promise<void> {
  const withAdmin = async <T>(act: (admin: Admin) => Promise<T>): Promise<T> => {
    const admin = kafka.admin();
    await admin.connect();
    try {
      return await act(admin);
    } finally {
      await admin.disconnect();
    }
  };
  await withAdmin((a) => a.createTopics({ waitForLeaders: false, topics: [spec] }));
  for (let i = 0; i < 100; i++) {
    const ready = await withAdmin(async (a) => {
      const meta = await a.fetchTopicMetadata({ topics: [spec.topic] });
      const partitions = meta.topics[0]?.partitions ?? [];
      const expected = spec.numPartitions ?? partitions.length;
      return (
        partitions.length > 0 && partitions.length === expected && partitions.every((p) => p.leader >= 0)
      );
    }).catch(() => false);
    if (ready) return;
    await new Promise((r) => setTimeout(r, 100));
  }
  throw new Error(`${spec.topic}: no partition leaders after its creation`);
}

export async function connectProducer(kafka: Kafka): Promise<Producer> {
  const producer = kafka.producer({ createPartitioner: Partitioners.DefaultPartitioner });
  await producer.connect();
  return producer;
}

/** Produces one record per id (keyed by it), with the split header when `user` is given. */
export async function produceIds(
  producer: Producer,
  topic: string,
  ids: readonly string[],
  user?: string,
): Promise<void> {
  await producer.send({
    topic,
    acks: -1,
    messages: ids.map((id) => ({
      key: id,
      value: messageBody(id),
      headers: messageHeaders(user, { 'x-message-id': id }),
    })),
  });
}

/** A local consumer of `topic` in `group` (from the beginning) pushing each record's id to `sink`. */
export async function consumeIds(
  kafka: Kafka,
  topic: string,
  group: string,
  sink: string[],
): Promise<Consumer> {
  const consumer = kafka.consumer({ groupId: group });
  await consumer.connect();
  await consumer.subscribe({ topic, fromBeginning: true });
  await consumer.run({
    eachMessage: async ({ message }) => {
      const id = message.headers?.['x-message-id'];
      sink.push(String(Array.isArray(id) ? id[id.length - 1] : id));
    },
  });
  return consumer;
}
