// What the Kafka benchmarks share: the broker from `npm run env:up`, prefilled 1 KiB sources in
// 3 partitions (alice, bob and everyone else a third each), and one engine run timed from the
// moment `start` returns.
import { CompressionTypes, Kafka, logLevel, type Admin, type Message } from 'kafkajs';
import { KafkaEngine } from '../../agent/kafka/engine';
import { produceWithJava, type JavaCompression } from '../conformance/kafka/foreign';
import { createTopicWithLeaders } from '../support/kafkaSplit';
import { loadServices, uniqueName } from '../support/services';

export const partitions = 3;
export const services = loadServices();
export const kafka = new Kafka({
  clientId: 'qs-bench',
  brokers: services.kafkaBrokers,
  logLevel: logLevel.NOTHING,
});
const users = ['alice', 'bob', 'nobody'];
const body = Buffer.alloc(1024, 'x');
export const USER = 'x-queue-split-user';

async function withAdmin<T>(op: (a: Admin) => Promise<T>): Promise<T> {
  const a = kafka.admin();
  await a.connect();
  try {
    return await op(a);
  } finally {
    await a.disconnect();
  }
}

/** Creates each topic and waits for its partitions' leaders as the suites do (kafkajs' own wait
 * gives up on a KRaft broker's UNKNOWN_TOPIC_OR_PARTITION: test/support/kafkaSplit.ts). */
export async function createTopics(names: string[]): Promise<void> {
  for (const topic of names) await createTopicWithLeaders(kafka, { topic, numPartitions: partitions });
}

/** How a run's source is filled (default: 1 KiB of one repeated byte, uncompressed). */
export interface Fill {
  readonly body?: (i: number) => Buffer;
  readonly compression?: CompressionTypes;
  /** Written by the Java client with this `compression.type` instead of kafkajs. */
  readonly java?: JavaCompression;
}

export async function prefill(source: string, perRun: number, fill: Fill = {}): Promise<void> {
  if (fill.java) {
    const records = Array.from({ length: perRun }, (_, j) => ({
      partition: j % partitions,
      value: (fill.body ? fill.body(j) : body).toString('utf8'),
      headers: [
        [USER, users[j % 3]!],
        ['x-message-id', `m-${j}`],
      ] as const,
    }));
    produceWithJava(services.kafkaBrokers, source, records, { compression: fill.java });
    return;
  }
  const producer = kafka.producer({
    idempotent: true,
    maxInFlightRequests: 1,
    allowAutoTopicCreation: false,
  });
  await producer.connect();
  for (let i = 0; i < perRun; i += 1000) {
    const messages: Message[] = [];
    for (let j = i; j < Math.min(perRun, i + 1000); j++) {
      messages.push({
        partition: j % partitions,
        value: fill.body ? fill.body(j) : body,
        headers: { [USER]: users[j % 3]!, 'x-message-id': `m-${j}` },
      });
    }
    await producer.send({
      topic: source,
      acks: -1,
      messages,
      compression: fill.compression ?? CompressionTypes.None,
    });
  }
  await producer.disconnect();
}

export const drop = (topics: string[], groups: string[]) =>
  withAdmin(async (a) => {
    await a.deleteTopics({ topics }).catch(() => undefined);
    await a.deleteGroups(groups).catch(() => undefined);
  });

/** Records per second through the engine (records per transaction `prefetch`, else the
 * default), from the moment `start` returns. */
export async function engineRun(
  perRun: number,
  prefetch?: number,
  fill: Fill = {},
  /** Called once everything is copied, before the topics are deleted. */
  afterRun?: (shadows: readonly string[]) => void,
  /** Engine switches a bench compares (DECISIONS.md, "Performance"). */
  levers: { readonly readAhead?: boolean } = {},
): Promise<number> {
  const base = uniqueName('bench-kengine');
  const names = { source: `${base}-src`, app: `${base}-app`, a: `${base}-a`, b: `${base}-b` };
  const groups = [
    `${base}-appg`,
    `${base}-appsg`,
    `${base}-split`,
    `${base}-sa`,
    `${base}-sb`,
    `${base}-da`,
    `${base}-db`,
  ];
  await createTopics([names.source]);
  await prefill(names.source, perRun, fill);
  const engine = new KafkaEngine({
    activationId: base,
    epoch: 1,
    connection: { brokers: services.kafkaBrokers },
    sourceTopic: names.source,
    appGroup: groups[0]!,
    offsetReset: 'earliest',
    appShadow: names.app,
    appShadowGroup: groups[1]!,
    splitterGroup: groups[2]!,
    transactionalId: `${base}-tx`,
    ...(prefetch !== undefined ? { prefetch } : {}),
    ...levers,
  });
  try {
    const must = async (o: Promise<{ kind: string }>) => {
      const r = await o;
      if (r.kind !== 'done') throw new Error(JSON.stringify(r));
    };
    await must(engine.prepare());
    await must(
      engine.reconcileRoutes(1, [
        {
          routeId: 'a',
          filter: { [USER]: 'alice' },
          shadow: names.a,
          sessionGroup: groups[3],
          drainGroup: groups[5],
        },
        {
          routeId: 'b',
          filter: { [USER]: 'bob' },
          shadow: names.b,
          sessionGroup: groups[4],
          drainGroup: groups[6],
        },
      ]),
    );
    const total = () =>
      engine.status().app.published + engine.status().routes.reduce((n, r) => n + r.published, 0);
    await must(engine.start()); // its preflight and seeding are not throughput: time from here
    const started = process.hrtime.bigint();
    while (total() < perRun) await new Promise((r) => setTimeout(r, 5));
    const rate = perRun / (Number(process.hrtime.bigint() - started) / 1e9);
    afterRun?.([names.app, names.a, names.b]);
    return rate;
  } finally {
    await engine.close();
    await drop(Object.values(names), groups);
  }
}

export { median } from './stats';
