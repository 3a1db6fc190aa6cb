// The Kafka provider harness against the real broker from `npm run env:up`. It talks to Kafka
// with plain kafkajs (producer, group consumers, admin), never through engine code, so the
// suite checks the engine rather than agreeing with it.
//
// Mapping of the provider-neutral notions:
// - "consume / acknowledge" = a group consumer committing `offset + 1`; the group is the one
//   that reads the destination: the application group on the source, the app-shadow group on
//   the application shadow, the route's session group on a session shadow.
// - "backlog" = committed data records after the group's position (transaction markers are not
//   messages); on the source it is the splitter group's, since the split owns the source.
// - "hold one unacknowledged" = a holder owns that record's partition: other readers of the
//   group neither see nor commit it until it is released.
// - Records are keyed by user: the first user a topology sees gets partition 0, the next 1,
//   and so on, as a producer keyed by customer would keep each one's messages together.
import type { Socket } from 'node:net';
import { Kafka, logLevel, type Admin, type ISocketFactory, type Message } from 'kafkajs';
import type { Engine, RouteSpec } from '../../../agent/engine/contract';
import type { KafkaEngineConfig } from '../../../agent/kafka/config';
import { KafkaEngine } from '../../../agent/kafka/engine';
import { createTopicWithLeaders } from '../../support/kafkaSplit';
import { loadServices, uniqueName } from '../../support/services';
import type { ChildSpec, EngineOptions, ProviderHarness, TestMessage, Topology } from '../harness';
import { consumeGroup, readGroup, scan } from './consumers';
import { toRecord } from './messages';
import { kafkaTestTiming, trackingSocketFactory } from './support';

export const PARTITIONS = 3;
const USER = 'x-queue-split-user';

export interface KafkaTopology extends Topology {
  readonly activationId: string;
  readonly appGroup: string;
  readonly appShadowGroup: string;
  readonly splitterGroup: string;
  readonly transactionalId: string;
  readonly topics: Set<string>;
  readonly groups: Set<string>;
  readonly userPartitions: Map<string, number>;
  next: number;
}

export interface KafkaHarness extends ProviderHarness {
  readonly kafka: Kafka;
  withAdmin<T>(op: (a: Admin) => Promise<T>): Promise<T>;
  /** Creates a topic of the harness's partitions, retention -1/-1 unless `config` says otherwise, and waits for its leaders. */
  createTopic(topic: string, config?: Readonly<Record<string, string>>): Promise<void>;
  config(t: Topology, label: string, options?: EngineOptions): KafkaEngineConfig;
  groupOf(destination: string): string;
}

export interface KafkaHarnessOptions {
  /** Another cluster than the environment's broker (test/env/kafka/cluster.ts). */
  readonly brokers?: readonly string[];
  /** How each topology's source is created: replication factor and topic configs. */
  readonly source?: { readonly replicationFactor: number; readonly config: Readonly<Record<string, string>> };
}

export function kafkaHarness(options: KafkaHarnessOptions = {}): KafkaHarness {
  const brokers = [...(options.brokers ?? loadServices().kafkaBrokers)];
  const kafka = new Kafka({
    clientId: 'qs-conformance',
    brokers,
    logLevel: logLevel.NOTHING,
  });
  const groupOf = new Map<string, string>();
  const sources = new Map<string, KafkaTopology>();
  const holds = new Map<string, Set<number>>();
  const sockets = new WeakMap<Engine, Set<Socket>>();
  let engines = 0;

  // Fresh clients per call: kafkajs clients keep refreshing metadata of every topic they
  // touched, and a topic deleted by another client (the engine, a test) fails those refreshes.
  const withAdmin = async <T>(op: (a: Admin) => Promise<T>): Promise<T> => {
    const a = kafka.admin();
    await a.connect();
    try {
      return await op(a);
    } finally {
      await a.disconnect().catch(() => undefined);
    }
  };
  /** Sends until a broker acknowledged every named partition. kafkajs 2.2.4 drops a record for a
   * partition its metadata lacks and still resolves (a KRaft broker answers with the old count
   * for a moment after createPartitions): such records go again with a fresh producer, and a
   * partition still unknown after 3 s fails the send by name. */
  const send = async (topic: string, messages: Message[]) => {
    let unsent = messages;
    for (let attempt = 0; ; attempt++) {
      const p = kafka.producer({ idempotent: true, maxInFlightRequests: 1, allowAutoTopicCreation: false });
      await p.connect();
      try {
        const acked = new Set((await p.send({ topic, acks: -1, messages: unsent })).map((r) => r.partition));
        unsent = unsent.filter((m) => m.partition !== undefined && !acked.has(m.partition));
      } finally {
        await p.disconnect().catch(() => undefined);
      }
      if (unsent.length === 0) return;
      if (attempt >= 30) {
        const partitions = [...new Set(unsent.map((m) => m.partition))].join(', ');
        throw new Error(`${topic}: no broker took the records for partition ${partitions}`);
      }
      await new Promise((r) => setTimeout(r, 100));
    }
  };
  const asTopology = (t: Topology) => t as KafkaTopology;
  const partitionsOf = (topic: string) =>
    withAdmin(
      async (a) =>
        (await a.fetchTopicMetadata({ topics: [topic] })).topics[0]?.partitions.length ?? PARTITIONS,
    );
  const createTopic = async (
    topic: string,
    numPartitions = PARTITIONS,
    shape: KafkaHarnessOptions['source'] = undefined,
    config: Readonly<Record<string, string>> = {},
  ) => {
    await createTopicWithLeaders(kafka, {
      topic,
      numPartitions,
      ...(shape ? { replicationFactor: shape.replicationFactor } : {}),
      configEntries: Object.entries({
        'retention.ms': '-1',
        'retention.bytes': '-1',
        ...shape?.config,
        ...config,
      }).map(([name, value]) => ({ name, value })),
    });
  };
  const exists = (topic: string) => withAdmin(async (a) => (await a.listTopics()).includes(topic));
  const group = (destination: string) => {
    const g = groupOf.get(destination);
    if (!g) throw new Error(`no group reads ${destination} in this harness`);
    return g;
  };

  /** Records after a group's position (its commit, or the log start), counted, not subtracted. */
  const backlogOf = (topic: string, groupId: string) =>
    withAdmin(async (a) => {
      const [ends, committed] = await Promise.all([
        a.fetchTopicOffsets(topic),
        a.fetchOffsets({ groupId, topics: [topic] }),
      ]);
      const ranges = new Map<number, { from: string; to: string }>();
      for (const e of ends) {
        const c = committed[0]?.partitions.find((p) => p.partition === e.partition)?.offset ?? '-1';
        ranges.set(e.partition, { from: BigInt(c) < BigInt(e.low) ? e.low : c, to: e.high });
      }
      return (await scan(kafka, a, topic, ranges)).count;
    });

  const config = (t: Topology, label: string, options: EngineOptions = {}): KafkaEngineConfig => {
    const k = asTopology(t);
    return {
      activationId: k.activationId,
      epoch: 1,
      connection: { brokers },
      sourceTopic: k.source,
      appGroup: k.appGroup,
      offsetReset: 'earliest',
      appShadow: k.appShadow,
      appShadowGroup: k.appShadowGroup,
      splitterGroup: k.splitterGroup,
      transactionalId: k.transactionalId,
      ...(options.prefetch === undefined ? {} : { prefetch: options.prefetch }),
      timing: {
        ...kafkaTestTiming,
        ...(options.stepTimeoutMs === undefined ? {} : { stepTimeoutMs: options.stepTimeoutMs }),
      },
      clientLabel: label,
    };
  };

  const partitionFor = (t: KafkaTopology, m: TestMessage): number => {
    const explicit = (m.extra as { partition?: unknown } | undefined)?.partition;
    if (typeof explicit === 'number') return explicit;
    const user = m.headers?.[USER];
    if (typeof user !== 'string') return t.next++ % PARTITIONS;
    if (!t.userPartitions.has(user)) t.userPartitions.set(user, t.userPartitions.size % PARTITIONS);
    return t.userPartitions.get(user) ?? 0;
  };

  const harness: KafkaHarness = {
    name: 'kafka',
    provider: 'kafka',
    kafka,
    withAdmin,
    config,
    groupOf: group,
    cleanupRetainsShadows: false,
    countsConsumers: true,
    richProperties: {
      key: 'order-17',
      partition: 2,
      headers: { 'x-bytes': Buffer.from([0, 1, 254, 255]), 'x-dup': ['first', 'second'] },
    },
    notPreserved: [
      'offset: a copy gets the shadow partition’s next offset (transaction markers take offsets too)',
      'header order across different keys: kafkajs groups repeated keys, so [a, b, a] arrives as [a, a, b] (values and their order per key kept; filters read the last)',
      'timestamp type: the copy carries the source timestamp as CreateTime',
      'producer id, epoch and sequence: the engine’s transactional producer writes the copy',
      'record batches: copies are batched per engine transaction (batch boundaries, base offsets, leader epochs and the attributes of the source batch are the shadow’s)',
      'compression: a copy is written with its source batch’s codec, except zstd where the runtime cannot encode it (Node < 22.15): then gzip (agent/kafka/DECISIONS.md, "Compression")',
      'transaction state: every copy is part of an engine transaction; aborted source records are not copied, and a read_uncommitted reader of a shadow can see an aborted copy before its retry (a duplicate in the same shadow, agent/kafka/DECISIONS.md)',
    ],

    async topology() {
      const label = uniqueName('cf-kafka');
      const topics = new Set<string>();
      const groups = new Set<string>();
      const topic = (role: string) => {
        const n = `${label}-${role}`;
        topics.add(n);
        return n;
      };
      const groupName = (role: string, reads: string) => {
        const n = `${label}-${role}`;
        groups.add(n);
        groupOf.set(reads, n);
        return n;
      };
      const source = topic('source');
      await createTopic(source, PARTITIONS, options.source);
      const appShadow = topic('app');
      const t: KafkaTopology = {
        label,
        source,
        appShadow,
        activationId: label,
        appGroup: groupName('appg', source),
        appShadowGroup: groupName('appsg', appShadow),
        splitterGroup: `${label}-split`,
        transactionalId: `${label}-tx`,
        topics,
        groups,
        userPartitions: new Map(),
        next: 0,
        route: (routeId, filter): RouteSpec => {
          const shadow = topic(`route-${routeId}`);
          const drainGroup = `${label}-drain-${routeId}`;
          groups.add(drainGroup);
          return { routeId, filter, shadow, sessionGroup: groupName(`ses-${routeId}`, shadow), drainGroup };
        },
      };
      groups.add(t.splitterGroup);
      sources.set(source, t);
      return t;
    },

    engine(t, options = {}) {
      const label = `${t.label}-e${++engines}`;
      const tracked = new Set<Socket>();
      const socketFactory: ISocketFactory = trackingSocketFactory(tracked);
      const engine = new KafkaEngine(config(t, label, options), {
        socketFactory,
        ...(options.logger ? { logger: options.logger } : {}),
        ...(options.hooks ? { hooks: options.hooks } : {}),
      });
      sockets.set(engine, tracked);
      return engine;
    },

    childSpec(t, generation, routes, options = {}): ChildSpec {
      return { provider: 'kafka', config: config(t, `${t.label}-child`, options), generation, routes };
    },

    async produce(t, messages) {
      const k = asTopology(t);
      await send(
        t.source,
        messages.map((m) => toRecord(m, partitionFor(k, m))),
      );
    },

    async inject(destination, messages) {
      const n = await partitionsOf(destination);
      await send(
        destination,
        messages.map((m, i) => toRecord(m, i % n)),
      );
    },

    read: (destination, expectIds, timeoutMs = 20_000) =>
      readGroup(
        kafka,
        destination,
        group(destination),
        expectIds,
        timeoutMs,
        () => holds.get(destination) ?? new Set(),
      ),

    consume: (destination, { ackFirst }) => consumeGroup(kafka, destination, group(destination), ackFirst),

    async holdOne(destination) {
      const found = await withAdmin(async (a) => {
        const [ends, committed] = await Promise.all([
          a.fetchTopicOffsets(destination),
          a.fetchOffsets({ groupId: group(destination), topics: [destination] }),
        ]);
        const ranges = new Map<number, { from: string; to: string }>();
        for (const e of ends) {
          const c = committed[0]?.partitions.find((p) => p.partition === e.partition)?.offset ?? '-1';
          ranges.set(e.partition, { from: BigInt(c) < BigInt(e.low) ? e.low : c, to: e.high });
        }
        return scan(kafka, a, destination, ranges);
      });
      const [partition, record] = [...found.first].sort(([x], [y]) => x - y)[0] ?? [];
      if (partition === undefined || !record)
        throw new Error(`holdOne: ${destination} has nothing unconsumed`);
      const set = holds.get(destination) ?? new Set<number>();
      set.add(partition);
      holds.set(destination, set);
      return { id: record.id, release: async () => void holds.get(destination)?.delete(partition) };
    },

    async backlog(name) {
      // The split owns its source: what the pump has not committed is the source's backlog.
      const source = sources.get(name);
      return backlogOf(name, source ? source.splitterGroup : group(name));
    },

    exists,

    async deleteBehindEngine(name) {
      await withAdmin((a) => a.deleteTopics({ topics: [name] }));
      for (let i = 0; i < 50 && (await exists(name)); i++) await new Promise((r) => setTimeout(r, 100));
    },

    recreate: (name) => createTopic(name),

    createTopic: (name, config) => createTopic(name, PARTITIONS, undefined, config),

    async preempt(engine) {
      const tracked = sockets.get(engine);
      if (!tracked) throw new Error('preempt: this engine was not made by this harness');
      for (const socket of tracked) socket.destroy(new Error('preempted by the test'));
    },

    async dispose(t) {
      const k = asTopology(t);
      await withAdmin(async (a) => {
        const existing = new Set(await a.listTopics());
        await a.deleteTopics({ topics: [...k.topics].filter((n) => existing.has(n)) }).catch(() => undefined);
        await a.deleteGroups([...k.groups]).catch(() => undefined);
      });
      sources.delete(t.source);
    },

    async close() {
      // Every client is per call; nothing stays open.
    },
  };
  return harness;
}
