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
import { createLogger, LEVELS } from 'kafkajs/src/loggers';
import defaultSocketFactory from 'kafkajs/src/network/socketFactory';
import type { ISocketFactory } from 'kafkajs';
import { batchesOf, dropAborted } from './aborted';
import { kafkaConfig } from './clients';
import { CodecError, codecOf, type Codec } from '../../core/providers/kafka/codecs';
import type { IsolationLevel, KafkaConnection, KafkaTiming } from './config';
import { isLeaderMoved } from './kafkaErrors';
import { Backoff, sleep } from '../engine/timing';

/** Reads of one call while the partition's leader is moving (about 1.5 s of backoff in all). */
const LEADER_MOVE_READS = 4;

const ISOLATION: Readonly<Record<IsolationLevel, number>> = { read_uncommitted: 0, read_committed: 1 };

export interface ReadOptions {
  /** Default read_committed: what the engine's own topics (shadows) are read at. */
  readonly isolation?: IsolationLevel;
  readonly maxBytesPerPartition?: number;
}

/** A header value as the broker carries it: bytes, or null (legal: the Java client's
 * `new RecordHeader(k, null)`; kafkajs decodes it as null). */
export type HeaderValue = Buffer | null;
/** Headers as kafkajs decodes them: a repeated key becomes an array, in order. */
export type RecordHeaders = Readonly<Record<string, HeaderValue | readonly HeaderValue[]>>;

export interface FetchedRecord {
  readonly partition: number;
  readonly offset: string;
  readonly key: Buffer | null;
  readonly value: Buffer | null;
  readonly headers: RecordHeaders;
  readonly timestamp: string;
  /** The compression of the source batch it came from (copies keep it where they can). */
  readonly codec: Codec;
}

export interface PartitionRead {
  readonly partition: number;
  /** Data records: transaction markers removed, and at read_committed aborted records too. */
  readonly records: readonly FetchedRecord[];
  /** Where the next read of this partition starts: past every record, marker and aborted
   * record this read covered. */
  readonly nextOffset: string;
  readonly lastStableOffset: string;
  /** The batch at `nextOffset` cannot be decompressed (why, never its content): nothing at or
   * after it was read. */
  readonly undecodable?: string;
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
      isolationLevel: ISOLATION.read_committed,
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

  /** Reads records of `topic` from each partition's position, at `options.isolation`
   * (default read_committed). A batch that cannot be decompressed fails only its own
   * partition's read, marked `undecodable` at the first offset of it not read (DECISIONS.md, "Compression"). */
  async read(topic: string, positions: Offsets, options: ReadOptions = {}): Promise<PartitionRead[]> {
    if (positions.size === 0) return [];
    await this.ensureTopic(topic);
    const isolation = options.isolation ?? 'read_committed';
    const maxBytes = options.maxBytesPerPartition ?? 1 << 20;
    // A leader that moved, or a new partition's leader not elected yet, answers with a
    // leadership error: as kafkajs' own consumer does, read the metadata again and read again (a
    // read changes nothing, so it repeats safely); still failing, the caller retries.
    const backoff = new Backoff(100, 1_000);
    for (let attempt = 1; ; attempt++) {
      const byLeader = await this.leadersOf(topic, [...positions.keys()]);
      try {
        const reads = await Promise.all(
          Object.entries(byLeader).map(([nodeId, partitions]) =>
            this.readIsolating(nodeId, topic, partitions, positions, isolation, maxBytes),
          ),
        );
        return reads.flat();
      } catch (err) {
        if (!isLeaderMoved(err) || attempt >= LEADER_MOVE_READS) throw err;
        await sleep(backoff.next());
        await this.cluster.refreshMetadata();
      }
    }
  }

  /** The leader of each partition asked for. kafkajs leaves out, without a word, a partition
   * its cached metadata lacks (one added since it was read, or answered by a broker that had not
   * heard of it yet): such a partition would never be read while the engine said ok, and a
   * backlog proof or a drain would count it as not there. So the metadata is read again once,
   * and a partition still unknown fails the read by name (the caller retries, DEGRADED if it
   * lasts). */
  private async leadersOf(topic: string, partitions: number[]): Promise<Record<string, number[]>> {
    const unknown = (byLeader: Record<string, number[]>) => {
      const known = new Set(Object.values(byLeader).flat());
      return partitions.filter((p) => !known.has(p));
    };
    let byLeader = this.cluster.findLeaderForPartitions(topic, partitions);
    if (unknown(byLeader).length === 0) return byLeader;
    await this.cluster.refreshMetadata();
    byLeader = this.cluster.findLeaderForPartitions(topic, partitions);
    const missing = unknown(byLeader);
    if (missing.length > 0)
      throw new Error(`${topic} partition ${missing.join(', ')}: not in the brokers' metadata yet`);
    return byLeader;
  }

  /** A fetch that fails on a batch it cannot decompress is retried one partition at a time,
   * then for that partition with a 1-byte limit (the broker still returns the first batch
   * whole): either that batch decodes and the read goes on batch by batch, or it is the one. */
  private async readIsolating(
    nodeId: string,
    topic: string,
    partitions: number[],
    positions: Offsets,
    isolation: IsolationLevel,
    maxBytes: number,
  ): Promise<PartitionRead[]> {
    try {
      return await this.fetch(nodeId, topic, partitions, positions, isolation, maxBytes);
    } catch (err) {
      // A codec's decoder failed, or kafkajs has none for it ("… compression not implemented").
      if (!(err instanceof CodecError) && errorClass(err) !== 'KafkaJSNotImplemented') throw err;
      if (partitions.length > 1) {
        const each = await Promise.all(
          partitions.map((p) => this.readIsolating(nodeId, topic, [p], positions, isolation, maxBytes)),
        );
        return each.flat();
      }
      if (maxBytes > 1) return this.readIsolating(nodeId, topic, partitions, positions, isolation, 1);
      const partition = partitions[0]!;
      const at = positions.get(partition) ?? '0';
      const undecodable = err instanceof Error ? err.message : String(err);
      return [{ partition, records: [], nextOffset: at, lastStableOffset: at, undecodable }];
    }
  }

  private async fetch(
    nodeId: string,
    topic: string,
    partitions: number[],
    positions: Offsets,
    isolation: IsolationLevel,
    maxBytesPerPartition: number,
  ): Promise<PartitionRead[]> {
    const broker = await this.cluster.findBroker({ nodeId });
    const response = await broker.fetch({
      replicaId: -1,
      isolationLevel: ISOLATION[isolation],
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
    return response.responses
      .flatMap((r) => r.partitions)
      .map((p) => toPartitionRead(p, positions.get(p.partition) ?? '0', isolation));
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

const errorClass = (err: unknown) => (err as { name?: unknown } | null)?.name;

/** One partition's fetch as the Java consumer would deliver it at `isolation`
 * (agent/kafka/aborted.ts). */
function toPartitionRead(
  p: Cluster.WireFetchPartition,
  fetchOffset: string,
  isolation: IsolationLevel,
): PartitionRead {
  const from = BigInt(fetchOffset);
  const batches = batchesOf(p.messages);
  // Whole batches: a fetch can start inside a batch (its earlier records are before `from`),
  // and such a batch still counts for the aborted ranges.
  const kept = isolation === 'read_committed' ? dropAborted(batches, p.abortedTransactions) : batches;
  const last = batches[batches.length - 1];
  const next = last && last.lastOffset + 1n > from ? last.lastOffset + 1n : from;
  return {
    partition: p.partition,
    records: kept
      .flatMap((b) => b.records)
      .filter((m) => !m.isControlRecord && BigInt(m.offset) >= from)
      .map((m) => ({
        partition: p.partition,
        offset: m.offset,
        key: m.key,
        value: m.value,
        headers: m.headers,
        timestamp: m.timestamp,
        codec: codecOf(m),
      })),
    // Past every batch read (markers and aborted batches included).
    nextOffset: next.toString(),
    lastStableOffset: p.lastStableOffset,
  };
}
