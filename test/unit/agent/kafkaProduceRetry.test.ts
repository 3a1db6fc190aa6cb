// A copy transaction must hold each record once. kafkajs 2.2.4's sendBatch
// (`producer/sendMessages.js`) sends one Produce per leader broker and retries the call when any
// of them fails; on the retry it sends again to every broker whose answer it does not hold yet,
// including one whose first request is still in flight (its `Promise.all` gave up on the first
// failure). That broker's request succeeds, the retry waits for its lock and sends the same
// records again with the *next* sequence numbers, and the broker appends them a second time in
// the same transaction: a read_committed reader sees the record twice once it commits
// (conformance: kafka-three-brokers "two brokers down …": `first-app-0 observed 2 times in app`,
// at app/0 offsets 0 and 4, no marker between them).
//
// Real kafkajs code (message producer, sendMessages, the transactional eosManager with its
// sequences and broker locks, the retrier with the engine's client retry settings, Broker.produce)
// over fake brokers that append by Kafka's idempotence rule (next sequence appended, the last
// batch's sequence answered as a duplicate, anything else OUT_OF_ORDER_SEQUENCE_NUMBER).
import assert from 'node:assert/strict';
import { createRequire } from 'node:module';
import { describe, test } from 'node:test';
import type { ProducerBatch, Transaction } from 'kafkajs';
import { sendAcknowledged } from '../../../agent/kafka/txn';

const load = createRequire(__filename);
/* eslint-disable @typescript-eslint/no-explicit-any -- kafkajs internals are untyped */
const createEosManager = load('kafkajs/src/producer/eosManager') as (o: any) => any;
const createMessageProducer = load('kafkajs/src/producer/messageProducer') as (o: any) => any;
const createRetry = load('kafkajs/src/retry') as (o: any) => any;
const Broker = load('kafkajs/src/broker') as { prototype: object };
const { createErrorFromCode } = load('kafkajs/src/protocol/error') as {
  createErrorFromCode(code: number): Error;
};
const { createLogger, LEVELS } = load('kafkajs/src/loggers') as any;
/* eslint-enable @typescript-eslint/no-explicit-any */

const NOT_ENOUGH_REPLICAS = 19;
const CONCURRENT_TRANSACTIONS = 51;
const OUT_OF_ORDER_SEQUENCE_NUMBER = 45;
const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

interface Batch {
  readonly firstSequence: number;
  readonly count: number;
  readonly baseOffset: number;
}

interface PartitionRequest {
  partition: number;
  firstSequence: number;
  messages: { value: Buffer | string | null }[];
}

/** One partition's log as a broker keeps it for one idempotent producer. */
class Log {
  readonly values: string[] = [];
  private last: Batch | undefined;

  append(request: PartitionRequest): { errorCode: number; baseOffset: string } {
    const next = this.last ? this.last.firstSequence + this.last.count : 0;
    if (this.last && request.firstSequence === this.last.firstSequence) {
      return { errorCode: 0, baseOffset: String(this.last.baseOffset) }; // a retry: deduplicated
    }
    if (request.firstSequence !== next) throw createErrorFromCode(OUT_OF_ORDER_SEQUENCE_NUMBER);
    const baseOffset = this.values.length;
    for (const m of request.messages) this.values.push(String(m.value));
    this.last = { firstSequence: request.firstSequence, count: request.messages.length, baseOffset };
    return { errorCode: 0, baseOffset: String(baseOffset) };
  }
}

type ProduceBehaviour = (attempt: number) => { delayMs: number; fail?: number };

/**
 * A fake three-broker cluster: `leaders` maps `topic/partition` to a node id, node 3 is the
 * transaction coordinator. `produce(node)` decides each Produce to that node (its 1-based
 * attempt number in), `addPartitions` each AddPartitionsToTxn.
 */
function fakeCluster(options: {
  leaders: Record<string, number>;
  produce: Record<number, ProduceBehaviour>;
  addPartitions?: (call: number) => number | undefined;
}) {
  const logs = new Map<string, Log>();
  const logOf = (tp: string) => logs.get(tp) ?? logs.set(tp, new Log()).get(tp)!;
  const produced = new Map<number, number>();
  let addCalls = 0;

  const broker = (nodeId: number) => {
    // A real kafkajs Broker (its produce, so anything wrapping Broker.prototype.produce sees
    // it) whose request goes to `connectionPool.send` below instead of a socket.
    const b = Object.create(Broker.prototype) as Record<string, unknown>;
    b.nodeId = nodeId;
    b.lookupRequest = () => (request: unknown) => request;
    b.connectionPool = {
      send: async (request: { topicData: { topic: string; partitions: PartitionRequest[] }[] }) => {
        const attempt = (produced.get(nodeId) ?? 0) + 1;
        produced.set(nodeId, attempt);
        const { delayMs, fail } = options.produce[nodeId]?.(attempt) ?? { delayMs: 0 };
        await sleep(delayMs);
        if (fail !== undefined) throw createErrorFromCode(fail);
        return {
          topics: request.topicData.map(({ topic, partitions }) => ({
            topicName: topic,
            partitions: partitions.map((p) => ({
              partition: p.partition,
              ...logOf(`${topic}/${p.partition}`).append(p),
            })),
          })),
        };
      },
    };
    b.addPartitionsToTxn = async () => {
      const fail = options.addPartitions?.(++addCalls);
      await sleep(5);
      if (fail !== undefined) throw createErrorFromCode(fail);
      return {};
    };
    b.initProducerId = async () => ({ producerId: 4242, producerEpoch: 0 });
    return b;
  };
  const brokers = new Map([1, 2, 3].map((id) => [id, broker(id)]));
  const topics = [...new Set(Object.keys(options.leaders).map((tp) => tp.split('/')[0]!))];

  const cluster = {
    isConnected: () => true,
    connect: async () => undefined,
    refreshMetadata: async () => undefined,
    refreshMetadataIfNecessary: async () => undefined,
    addMultipleTargetTopics: async () => undefined,
    removeBroker: () => undefined,
    findBroker: async ({ nodeId }: { nodeId: string | number }) => brokers.get(Number(nodeId)),
    findGroupCoordinator: async () => brokers.get(3),
    findTopicPartitionMetadata: (topic: string) =>
      Object.entries(options.leaders)
        .filter(([tp]) => tp.split('/')[0] === topic)
        .map(([tp, leader]) => ({ partitionId: Number(tp.split('/')[1]), leader, partitionErrorCode: 0 })),
    findLeaderForPartitions: (topic: string, partitions: (string | number)[]) => {
      const out: Record<string, number[]> = {};
      for (const p of partitions) {
        const leader = String(options.leaders[`${topic}/${p}`]);
        (out[leader] ??= []).push(Number(p));
      }
      return out;
    },
  };
  void topics;
  return { cluster, logs };
}

/** A kafkajs transaction as `producer.transaction()` makes it, over `cluster`, with the retry
 * settings of the engine's clients (agent/kafka/clients.ts). */
async function transactionOver(cluster: object): Promise<Transaction> {
  const logger = createLogger({ level: LEVELS.NOTHING, logCreator: () => () => undefined });
  const eosManager = createEosManager({
    logger,
    cluster,
    transactionTimeout: 60_000,
    transactional: true,
    transactionalId: 'qs-test-txn',
  });
  await eosManager.initProducerId();
  eosManager.beginTransaction();
  const { sendBatch } = createMessageProducer({
    logger,
    cluster,
    partitioner: () => 0,
    eosManager,
    idempotent: true,
    retrier: createRetry({ retries: 2, initialRetryTime: 100, maxRetryTime: 1_000 }),
    getConnectionStatus: () => 'connected',
  });
  return { sendBatch } as unknown as Transaction;
}

/** One copy for app/0 (leader 1) and one for alice/0 (leader 2), as one pump chunk sends them. */
const chunk: ProducerBatch = {
  acks: -1,
  topicMessages: [
    { topic: 'app', messages: [{ partition: 0, value: 'first-app-0' }] },
    { topic: 'alice', messages: [{ partition: 0, value: 'first-alice-0' }] },
  ],
};

/** Either the send fails (the transaction aborts, nothing of it is read at read_committed),
 * or every record is in its log exactly once. */
async function assertNoRecordTwice(logs: Map<string, Log>, send: Promise<void>): Promise<void> {
  const failed = await send.then(
    () => false,
    () => true,
  );
  if (failed) return;
  for (const [tp, log] of logs) {
    assert.deepEqual(
      log.values,
      [...new Set(log.values)],
      `${tp} holds a record twice in one transaction: ${log.values.join(', ')}`,
    );
  }
}

describe('a copy transaction writes each record once when kafkajs retries its produce', () => {
  test('a retry after the other leader answered: the send succeeds, each record written once', async () => {
    const { cluster, logs } = fakeCluster({
      leaders: { 'app/0': 1, 'alice/0': 2 },
      produce: {
        1: () => ({ delayMs: 0 }),
        2: (attempt) => (attempt === 1 ? { delayMs: 50, fail: NOT_ENOUGH_REPLICAS } : { delayMs: 0 }),
      },
    });
    const txn = await transactionOver(cluster);
    await sendAcknowledged(txn, chunk);
    assert.deepEqual(logs.get('app/0')?.values, ['first-app-0']);
    assert.deepEqual(logs.get('alice/0')?.values, ['first-alice-0']);
  });

  test('one leader fails fast (NOT_ENOUGH_REPLICAS) while the other is still writing', async () => {
    const { cluster, logs } = fakeCluster({
      leaders: { 'app/0': 1, 'alice/0': 2 },
      produce: {
        // acks=all on a loaded cluster: the write is made, its answer comes after the retry began.
        1: (attempt) => ({ delayMs: attempt === 1 ? 400 : 0 }),
        2: (attempt) => (attempt === 1 ? { delayMs: 0, fail: NOT_ENOUGH_REPLICAS } : { delayMs: 0 }),
      },
    });
    const txn = await transactionOver(cluster);
    await assertNoRecordTwice(logs, sendAcknowledged(txn, chunk));
  });

  test('AddPartitionsToTxn answers CONCURRENT_TRANSACTIONS for one leader (the last commit still completing)', async () => {
    const { cluster, logs } = fakeCluster({
      leaders: { 'app/0': 1, 'alice/0': 2 },
      produce: {
        1: (attempt) => ({ delayMs: attempt === 1 ? 400 : 0 }),
        2: (attempt) => ({ delayMs: attempt === 1 ? 400 : 0 }),
      },
      addPartitions: (call) => (call === 1 ? CONCURRENT_TRANSACTIONS : undefined),
    });
    const txn = await transactionOver(cluster);
    await assertNoRecordTwice(logs, sendAcknowledged(txn, chunk));
  });
});
