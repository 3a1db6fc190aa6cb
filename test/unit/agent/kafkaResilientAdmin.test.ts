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
