// Proves the Kafka from `npm run env:up` is a real broker with the behaviour the engines rely
// on: topic configs that stick, headers kept byte for byte (duplicates, non-UTF-8), records
// landing in the partition asked for, and group offsets readable through the admin API.
import assert from 'node:assert/strict';
import { after, before, test } from 'node:test';
import { Kafka, logLevel, Partitioners, type Admin } from 'kafkajs';
import { createTopicWithLeaders } from '../support/kafkaSplit';
import { loadServices, uniqueName } from '../support/services';

const services = loadServices();
const kafka = new Kafka({ clientId: 'qs-smoke', brokers: services.kafkaBrokers, logLevel: logLevel.WARN });
let admin: Admin;

before(async () => {
  admin = kafka.admin();
  await admin.connect();
});
after(async () => admin.disconnect());

test('a 3-partition topic keeps retention.ms=-1 and retention.bytes=-1', async () => {
  const topic = uniqueName('smoke-retention');
  // Not kafkajs' own wait for leaders: see createTopicWithLeaders (smoke failed on it beside the
  // conformance suite, which creates topics by the hundred).
  await createTopicWithLeaders(kafka, {
    topic,
    numPartitions: 3,
    configEntries: [
      { name: 'retention.ms', value: '-1' },
      { name: 'retention.bytes', value: '-1' },
    ],
  });
  const meta = await admin.fetchTopicMetadata({ topics: [topic] });
  assert.equal(meta.topics[0]?.partitions.length, 3);
  const described = await admin.describeConfigs({
    includeSynonyms: false,
    resources: [{ type: 2 /* TOPIC */, name: topic, configNames: ['retention.ms', 'retention.bytes'] }],
  });
  const entries = Object.fromEntries(
    described.resources[0]!.configEntries.map((e) => [e.configName, e.configValue]),
  );
  assert.deepEqual(entries, { 'retention.ms': '-1', 'retention.bytes': '-1' });
});

test('headers, partitions and committed offsets round-trip through a consumer group', async () => {
  const topic = uniqueName('smoke-headers');
  const groupId = uniqueName('smoke-group');
  await createTopicWithLeaders(kafka, { topic, numPartitions: 3 });

  const nonUtf8 = Buffer.from([0xc3, 0x28, 0xff]);
  const producer = kafka.producer({ createPartitioner: Partitioners.DefaultPartitioner, idempotent: true });
  await producer.connect();
  // Kafka allows the same header key twice; kafkajs takes a list value for that.
  await producer.send({
    topic,
    acks: -1,
    messages: [
      {
        partition: 0,
        key: 'k0',
        value: 'm0',
        headers: { 'x-queue-split-user': ['bob', 'alice'], raw: nonUtf8 },
      },
      { partition: 2, key: 'k1', value: 'm1', headers: { 'x-queue-split-user': 'carol' } },
      { partition: 2, key: 'k2', value: 'm2' },
    ],
  });
  await producer.disconnect();

  const consumer = kafka.consumer({ groupId });
  await consumer.connect();
  await consumer.subscribe({ topic, fromBeginning: true });
  const seen: { partition: number; offset: string; value: string; headers: Record<string, unknown> }[] = [];
  await new Promise<void>((resolve, reject) => {
    consumer
      .run({
        autoCommit: false,
        eachMessage: async ({ partition, message }) => {
          seen.push({
            partition,
            offset: message.offset,
            value: message.value?.toString() ?? '',
            headers: message.headers ?? {},
          });
          await consumer.commitOffsets([{ topic, partition, offset: String(Number(message.offset) + 1) }]);
          if (seen.length === 3) resolve();
        },
      })
      .catch(reject);
  });
  await consumer.disconnect();

  const m0 = seen.find((s) => s.value === 'm0');
  assert.equal(m0?.partition, 0);
  const dup = m0?.headers['x-queue-split-user'] as Buffer[];
  assert.deepEqual(
    dup.map((b) => b.toString()),
    ['bob', 'alice'],
    'both values of a repeated header key arrive, in order',
  );
  assert.ok(
    Buffer.isBuffer(m0?.headers.raw) && (m0?.headers.raw as Buffer).equals(nonUtf8),
    'non-UTF-8 bytes kept',
  );
  assert.deepEqual(
    seen.filter((s) => s.partition === 2).map((s) => s.value),
    ['m1', 'm2'],
    'order kept within a partition',
  );

  const offsets = await admin.fetchOffsets({ groupId, topics: [topic] });
  const committed = Object.fromEntries(offsets[0]!.partitions.map((p) => [p.partition, p.offset]));
  assert.deepEqual(committed, { 0: '1', 1: '-1', 2: '2' });
  const ends = await admin.fetchTopicOffsets(topic);
  assert.deepEqual(Object.fromEntries(ends.map((p) => [p.partition, p.high])), { 0: '1', 1: '0', 2: '2' });
});
