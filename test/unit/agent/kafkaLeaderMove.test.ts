// A read right after a topic grew, or after a partition's leader moved, can reach a broker that
// does not lead the partition (yet): NOT_LEADER_FOR_PARTITION. kafkajs' own consumer reads the
// metadata again and fetches again; a Wire read did not, and the error reached the pump (a
// "reading the source failed" DEGRADED flicker) and the tests (CI: conformance kafka-specific "a
// read of partitions the reader's metadata does not know yet…"). The real Wire over a stand-in
// for kafkajs' internal Cluster, whose broker answers as a real one does.
import assert from 'node:assert/strict';
import { createRequire } from 'node:module';
import { describe, test } from 'node:test';
import { Wire } from '../../../agent/kafka/wire';
import { defaultTiming } from '../../../agent/kafka/config';

const load = createRequire(__filename);
const { createErrorFromCode } = load('kafkajs/src/protocol/error') as {
  createErrorFromCode(code: number): Error;
};
const NOT_LEADER_FOR_PARTITION = 6;
const UNKNOWN_TOPIC_OR_PARTITION = 3;

/** A Wire whose cluster's broker fails fetches with `errors` in turn, then answers. */
function wireFailing(errors: number[]) {
  const topic = 'orders';
  const seen = { fetches: 0, refreshes: 0 };
  const cluster = {
    targetTopics: new Set([topic]),
    findLeaderForPartitions: (_: string, partitions: number[]) => ({ '1': partitions }),
    refreshMetadata: async () => {
      seen.refreshes++;
    },
    findBroker: async () => ({
      fetch: async () => {
        const code = errors[seen.fetches++];
        if (code !== undefined) throw createErrorFromCode(code);
        return {
          responses: [
            {
              topicName: topic,
              partitions: [
                {
                  partition: 0,
                  errorCode: 0,
                  highWatermark: '0',
                  lastStableOffset: '0',
                  abortedTransactions: [],
                  messages: [],
                },
              ],
            },
          ],
        };
      },
    }),
  };
  const wire = new Wire({ brokers: ['127.0.0.1:1'] }, 'unit-leader-move', defaultTiming);
  Object.assign(wire, { cluster });
  return { wire, topic, seen };
}

describe('Wire.read when a partition’s leader moved or is not elected yet', () => {
  test('a read that meets NOT_LEADER_FOR_PARTITION reads the metadata again and reads the partition', async () => {
    const { wire, topic, seen } = wireFailing([NOT_LEADER_FOR_PARTITION, NOT_LEADER_FOR_PARTITION]);
    const reads = await wire.read(topic, new Map([[0, '0']]));
    assert.deepEqual(
      reads.map((r) => r.partition),
      [0],
    );
    assert.equal(seen.fetches, 3);
    assert.ok(seen.refreshes >= 2, 'the metadata is read again before each new fetch');
  });

  test('any other error fails the read at once', async () => {
    const { wire, topic, seen } = wireFailing([UNKNOWN_TOPIC_OR_PARTITION]);
    await assert.rejects(wire.read(topic, new Map([[0, '0']])), /does not host this topic-partition/);
    assert.equal(seen.fetches, 1);
  });

  test('a leader still not there after four reads fails the read with its error (the caller retries)', async () => {
    const { wire, topic, seen } = wireFailing(Array(10).fill(NOT_LEADER_FOR_PARTITION) as number[]);
    await assert.rejects(wire.read(topic, new Map([[0, '0']])), /not the leader/i);
    assert.equal(seen.fetches, 4);
  });
});
