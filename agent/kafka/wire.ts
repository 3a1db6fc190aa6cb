// Group-less reads and guarded offset commits, which kafkajs' public API lacks:
// - The pump, the route drain and the backlog proofs read partitions at offsets the engine
//   chooses, without joining a consumer group. So no rebalance, session timeout or stale member
//   ever stands between a restarted engine and its partitions, and the groups the engine writes
//   (splitter, drain) stay pure offset stores that no member ever joins.
// - An offset commit with generation -1 and no member id is what the broker refuses with
//   UNKNOWN_MEMBER_ID while the group has live members: the atomic guard handback relies on.
//   kafkajs' `admin.setOffsets` instead joins the group itself after a describe (a race).
// Both come from kafkajs 2.2.4's internal Cluster/Broker (frozen since 2023; declared in
// kafkajsInternals.d.ts). A move to another client replaces this file.
import Cluster from 'kafkajs/src/cluster';
import filterAbortedMessages from 'kafkajs/src/consumer/filterAbortedMessages';
import { createLogger, LEVELS } from 'kafkajs/src/loggers';
import defaultSocketFactory from 'kafkajs/src/network/socketFactory';
import type { IHeaders, ISocketFactory } from 'kafkajs';
import { kafkaConfig } from './clients';
import type { KafkaConnection, KafkaTiming } from './config';

const READ_COMMITTED = 1;

export interface FetchedRecord {
  readonly partition: number;
  readonly offset: string;
  readonly key: Buffer | null;
  readonly value: Buffer | null;
  readonly headers: IHeaders;
  readonly timestamp: string;
}

export interface PartitionRead {
  readonly partition: number;
  /** Committed data records (aborted records and transaction markers removed). */
  readonly records: readonly FetchedRecord[];
  /** Where the next read of this partition starts: past every record, marker and aborted
   * record this read covered. */
  readonly nextOffset: string;
  readonly lastStableOffset: string;
}

/** Offsets keyed by partition, as strings (Kafka offsets are 64-bit). */
export type Offsets = ReadonlyMap<number, string>;

export class Wire {
  private readonly cluster: Cluster;
  private connected = false;

  constructor(
    connection: KafkaConnection,
    clientId: string,
    private readonly timing: KafkaTiming,
    socketFactory?: ISocketFactory,
  ) {
    const config = kafkaConfig(connection, clientId, timing, socketFactory);
    this.cluster = new Cluster({
      logger: createLogger({ level: LEVELS.NOTHING, logCreator: () => () => undefined }),
      socketFactory: socketFactory ?? defaultSocketFactory(),
      brokers: [...connection.brokers],
      ssl: config.ssl,
      sasl: config.sasl,
      clientId,
      connectionTimeout: timing.connectionTimeoutMs,
      authenticationTimeout: 10_000,
      requestTimeout: timing.requestTimeoutMs,
      enforceRequestTimeout: true,
      metadataMaxAge: 300_000,
      retry: { retries: 2, initialRetryTime: 100, maxRetryTime: 1_000 },
      allowAutoTopicCreation: false,
      isolationLevel: READ_COMMITTED,
    });
  }

  async connect(): Promise<void> {
    await this.cluster.connect();
    this.connected = true;
  }

  async disconnect(): Promise<void> {
    this.connected = false;
    await this.cluster.disconnect().catch(() => undefined);
  }

  get isConnected(): boolean {
    return this.connected && this.cluster.isConnected();
  }

  /** Reads committed records of `topic` from each partition's position. */
  async read(topic: string, positions: Offsets, maxBytesPerPartition = 1 << 20): Promise<PartitionRead[]> {
    if (positions.size === 0) return [];
    await this.ensureTopic(topic);
    const byLeader = this.cluster.findLeaderForPartitions(topic, [...positions.keys()]);
    const reads = await Promise.all(
      Object.entries(byLeader).map(async ([nodeId, partitions]) => {
        const broker = await this.cluster.findBroker({ nodeId });
        const response = await broker.fetch({
          replicaId: -1,
          isolationLevel: READ_COMMITTED,
          maxWaitTime: this.timing.fetchMaxWaitMs,
          minBytes: 1,
          maxBytes: maxBytesPerPartition * partitions.length,
          topics: [
            {
              topic,
              partitions: partitions.map((partition) => ({
                partition,
                fetchOffset: positions.get(partition) ?? '0',
                maxBytes: maxBytesPerPartition,
              })),
            },
          ],
        });
        return response.responses.flatMap((r) => r.partitions);
      }),
    );
    return reads.flat().map((p) => toPartitionRead(p, positions.get(p.partition) ?? '0'));
  }

  /** Commits offsets as an outsider (generation -1): refused with UNKNOWN_MEMBER_ID while the
   * group has live members, which is exactly the guard a handback needs. */
  async commitAsOutsider(groupId: string, topic: string, offsets: Offsets): Promise<void> {
    if (offsets.size === 0) return;
    const coordinator = await this.cluster.findGroupCoordinator({ groupId });
    await coordinator.offsetCommit({
      groupId,
      groupGenerationId: -1,
      memberId: '',
      topics: [{ topic, partitions: [...offsets].map(([partition, offset]) => ({ partition, offset })) }],
    });
  }

  /** Drops a topic from the metadata kafkajs refreshes: a deleted topic left there fails every
   * later metadata refresh of this client. */
  forget(topic: string): void {
    this.cluster.targetTopics.delete(topic);
  }

  private async ensureTopic(topic: string): Promise<void> {
    if (this.cluster.targetTopics.has(topic)) return;
    await this.cluster.addTargetTopic(topic);
  }

  async refresh(): Promise<void> {
    await this.cluster.refreshMetadata();
  }
}

function toPartitionRead(p: Cluster.WireFetchPartition, fetchOffset: string): PartitionRead {
  const from = BigInt(fetchOffset);
  // A fetch can start at the beginning of a record batch before the requested offset.
  const within = p.messages.filter((m) => BigInt(m.offset) >= from);
  const committed = filterAbortedMessages({ messages: within, abortedTransactions: p.abortedTransactions });
  const last = within[within.length - 1];
  return {
    partition: p.partition,
    records: committed
      .filter((m) => !m.isControlRecord)
      .map((m) => ({
        partition: p.partition,
        offset: m.offset,
        key: m.key,
        value: m.value,
        headers: m.headers,
        timestamp: m.timestamp,
      })),
    nextOffset: last ? (BigInt(last.offset) + 1n).toString() : fetchOffset,
    lastStableOffset: p.lastStableOffset,
  };
}
