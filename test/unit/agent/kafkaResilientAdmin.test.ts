// agent/kafka/admin.ts: a client replaced after one operation met a deleted topic must not be
// closed under the operations still running on it. The Kafka soak failed that way (seed
// 1276159921): a route's drain read its shadow's offsets while another operation's
// UNKNOWN_TOPIC_OR_PARTITION reset the shared client, kafkajs's fetchTopicOffsets got no answer
// from the disconnected client and threw "Cannot destructure property 'partitions' of
// 'low.pop(...)'", and the engine reported a programming error (Degraded). The fake clients here
// stand for kafkajs's only in what ResilientAdmin relies on: they answer until disconnected.
import assert from 'node:assert/strict';
import { test } from 'node:test';
import type { Admin, Kafka } from 'kafkajs';
import { ResilientAdmin } from '../../../agent/kafka/admin';
import { isProgrammingError } from '../../../agent/engine/kernel';

class FakeAdmin {
  disconnected = false;
  private release: (() => void) | undefined;
  constructor(readonly id: number) {}
  connect(): Promise<void> {
    return Promise.resolve();
  }
  disconnect(): Promise<void> {
    this.disconnected = true;
    return Promise.resolve();
  }
  /** Answers once released, or as kafkajs does when its client was disconnected meanwhile. */
  async fetchTopicOffsets(
    topic: string,
  ): Promise<{ partition: number; offset: string; high: string; low: string }[]> {
    await new Promise<void>((resolve) => (this.release = resolve));
    if (this.disconnected)
      throw new TypeError("Cannot destructure property 'partitions' of 'low.pop(...)' as it is undefined.");
    return [{ partition: 0, offset: '5', high: '5', low: '0' }].map((o) => ({ ...o, topic }));
  }
  answer(): void {
    this.release?.();
  }
  /** An operation on a topic someone else deleted. */
  fetchTopicMetadata(): Promise<never> {
    return Promise.reject(
      Object.assign(new Error('This server does not host this topic-partition'), {
        type: 'UNKNOWN_TOPIC_OR_PARTITION',
        code: 3,
      }),
    );
  }
}

function fakeKafka(): { kafka: Kafka; made: FakeAdmin[] } {
  const made: FakeAdmin[] = [];
  const kafka = { admin: () => made[made.push(new FakeAdmin(made.length)) - 1] } as unknown as Kafka;
  return { kafka, made };
}

test('an operation in flight keeps its client when another operation meets a deleted topic and replaces it', async () => {
  const { kafka, made } = fakeKafka();
  const admin: Admin = new ResilientAdmin(kafka).client;
  const offsets = admin.fetchTopicOffsets('shadow');
  await new Promise((resolve) => setImmediate(resolve));
  // Another step's topic was deleted behind the engine: that operation fails after one retry on
  // a fresh client, and the client it failed on is replaced.
  await assert.rejects(admin.fetchTopicMetadata({ topics: ['gone'] }), /does not host/);
  assert.ok(made.length >= 2, 'the client that met the deleted topic was replaced');
  made[0]!.answer();
  assert.deepEqual(
    (await offsets).map((o) => o.high),
    ['5'],
    'the operation in flight answered on its own client',
  );
  assert.equal(made[0]!.disconnected, true, 'the replaced client is closed once its operations end');
});

/** kafkajs's fetchTopicOffsets when its metadata lists the topic without partitions. */
const metadataGap = () =>
  new TypeError("Cannot destructure property 'partitions' of 'high.pop(...)' as it is undefined.");

function gappyKafka(gaps: number): { kafka: Kafka; made: { disconnected: boolean }[] } {
  const made: { disconnected: boolean }[] = [];
  let left = gaps;
  const kafka = {
    admin: () => {
      const client = {
        disconnected: false,
        connect: () => Promise.resolve(),
        disconnect: () => {
          client.disconnected = true;
          return Promise.resolve();
        },
        fetchTopicOffsets: (topic: string) =>
          left-- > 0
            ? Promise.reject(metadataGap())
            : Promise.resolve([{ topic, partition: 0, offset: '7', high: '7', low: '0' }]),
      };
      made.push(client);
      return client;
    },
  } as unknown as Kafka;
  return { kafka, made };
}

// The Kafka soak (seed 2078952937, conformance beside a loaded cluster) met it in drainRoute: a
// client whose metadata holds a route's shadow without partitions (a topic just created or
// deleted, as the client last refreshed) keeps answering so until its metadata ages out, and the
// engine read kafkajs's TypeError as a programming error (Degraded, "a retry repeats it").
test('a client whose metadata lists a topic without partitions is replaced, and the operation runs again on a fresh one', async () => {
  const { kafka, made } = gappyKafka(1);
  const admin: Admin = new ResilientAdmin(kafka).client;
  const offsets = await admin.fetchTopicOffsets('shadow');
  assert.deepEqual(
    offsets.map((o) => o.high),
    ['7'],
  );
  assert.equal(made.length, 2, 'a fresh client answered');
  assert.equal(made[0]!.disconnected, true, 'the client with the stale metadata is closed');
});

test('a topic without partitions on a fresh client too is a broker condition to retry, not a programming error', async () => {
  const { kafka } = gappyKafka(2);
  const admin: Admin = new ResilientAdmin(kafka).client;
  const err = await admin.fetchTopicOffsets('shadow').then(
    () => assert.fail('answered'),
    (e: unknown) => e,
  );
  assert.equal(isProgrammingError(err), false, String(err));
  assert.match(String(err), /no partitions/);
});
