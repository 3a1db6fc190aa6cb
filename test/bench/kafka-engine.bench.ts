// Throughput of the Kafka engine beside raw kafkajs pipes doing the same minimum work, in one
// process, against the broker from `npm run env:up`: 1 KiB records in a prefilled 3-partition
// source, 2 routes (a third of the records each) and the application shadow (the last third).
//   raw          consumer group → idempotent produce (acks=all, same partition) → commit
//   raw-txn      consumer group → transaction { produce, sendOffsets } → commit (exactly-once)
//   queue-split  the engine (group-less reads, pipelined transactional copies)
//
//   npx tsx test/bench/kafka-engine.bench.ts [records-per-run] [runs]
//
// Prints a table and one JSON line. Bounded: stops starting runs after 100 s.
import { Kafka, logLevel, type Admin, type IHeaders, type Message } from 'kafkajs';
import { DEFAULT_PREFETCH } from '../../agent/kafka/config';
import { KafkaEngine } from '../../agent/kafka/engine';
import { loadServices, uniqueName } from '../support/services';

const perRun = Number(process.argv[2] ?? 20_000);
const runs = Number(process.argv[3] ?? 5);
const budgetMs = 100_000;
const partitions = 3;
const services = loadServices();
const kafka = new Kafka({ clientId: 'qs-bench', brokers: services.kafkaBrokers, logLevel: logLevel.NOTHING });
const users = ['alice', 'bob', 'nobody'];
const body = Buffer.alloc(1024, 'x');
const USER = 'x-queue-split-user';

async function withAdmin<T>(op: (a: Admin) => Promise<T>): Promise<T> {
  const a = kafka.admin();
  await a.connect();
  try {
    return await op(a);
  } finally {
    await a.disconnect();
  }
}

async function createTopics(names: string[]): Promise<void> {
  await withAdmin((a) =>
    a.createTopics({
      waitForLeaders: false,
      topics: names.map((topic) => ({ topic, numPartitions: partitions })),
    }),
  );
  await new Promise((r) => setTimeout(r, 500)); // leaders of a fresh topic
}

async function prefill(source: string): Promise<void> {
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
        value: body,
        headers: { [USER]: users[j % 3]!, 'x-message-id': `m-${j}` },
      });
    }
    await producer.send({ topic: source, acks: -1, messages });
  }
  await producer.disconnect();
}

const drop = (topics: string[], groups: string[]) =>
  withAdmin(async (a) => {
    await a.deleteTopics({ topics }).catch(() => undefined);
    await a.deleteGroups(groups).catch(() => undefined);
  });

function destination(headers: IHeaders | undefined, names: { app: string; a: string; b: string }): string {
  const user = headers?.[USER]?.toString();
  return user === 'alice' ? names.a : user === 'bob' ? names.b : names.app;
}

/** Records per second through the engine, from the moment `start` returns. */
async function engineRun(): Promise<number> {
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
  await prefill(names.source);
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
    return perRun / (Number(process.hrtime.bigint() - started) / 1e9);
  } finally {
    await engine.close();
    await drop(Object.values(names), groups);
  }
}

/** Records per second for the same work done by hand with a kafkajs consumer group. */
async function rawRun(transactional: boolean): Promise<number> {
  const base = uniqueName(transactional ? 'bench-kraw-txn' : 'bench-kraw');
  const names = { source: `${base}-src`, app: `${base}-app`, a: `${base}-a`, b: `${base}-b` };
  const groupId = `${base}-g`;
  await createTopics(Object.values(names));
  await prefill(names.source);
  const producer = kafka.producer({
    idempotent: true,
    maxInFlightRequests: 1,
    allowAutoTopicCreation: false,
    ...(transactional ? { transactionalId: `${base}-tx` } : {}),
  });
  const consumer = kafka.consumer({ groupId, maxBytesPerPartition: 1 << 20 });
  await producer.connect();
  await consumer.connect();
  await consumer.subscribe({ topic: names.source, fromBeginning: true });
  let copied = 0;
  let started: bigint | undefined;
  const finished = new Promise<void>((resolve, reject) => {
    consumer
      .run({
        autoCommit: false,
        eachBatch: async ({ batch }) => {
          started ??= process.hrtime.bigint();
          for (let i = 0; i < batch.messages.length; i += DEFAULT_PREFETCH) {
            const chunk = batch.messages.slice(i, i + DEFAULT_PREFETCH);
            const last = chunk[chunk.length - 1]!;
            const byTopic = new Map<string, Message[]>();
            for (const m of chunk) {
              const to = destination(m.headers, names);
              byTopic.set(to, [
                ...(byTopic.get(to) ?? []),
                {
                  partition: batch.partition,
                  key: m.key,
                  value: m.value,
                  headers: m.headers,
                  timestamp: m.timestamp,
                },
              ]);
            }
            const topicMessages = [...byTopic].map(([topic, messages]) => ({ topic, messages }));
            const offsets = [
              {
                topic: names.source,
                partitions: [{ partition: batch.partition, offset: String(Number(last.offset) + 1) }],
              },
            ];
            if (transactional) {
              const txn = await producer.transaction();
              await txn.sendBatch({ acks: -1, topicMessages });
              await txn.sendOffsets({ consumerGroupId: groupId, topics: offsets });
              await txn.commit();
            } else {
              await producer.sendBatch({ acks: -1, topicMessages });
              await consumer.commitOffsets(offsets.map((o) => ({ topic: o.topic, ...o.partitions[0]! })));
            }
            copied += chunk.length;
          }
          if (copied >= perRun) resolve();
        },
      })
      .catch(reject);
  });
  await finished;
  const seconds = Number(process.hrtime.bigint() - (started ?? 0n)) / 1e9;
  await consumer.disconnect();
  await producer.disconnect();
  await drop(Object.values(names), [groupId]);
  return perRun / seconds;
}

const median = (xs: number[]) => {
  const s = [...xs].sort((a, b) => a - b);
  const mid = Math.floor(s.length / 2);
  return s.length % 2 ? s[mid]! : (s[mid - 1]! + s[mid]!) / 2;
};

async function main(): Promise<void> {
  const deadline = Date.now() + budgetMs;
  const rates = { raw: [] as number[], rawTxn: [] as number[], engine: [] as number[] };
  for (let i = 0; i < runs && Date.now() < deadline; i++) {
    // Interleaved so drift on a shared machine hits every pipeline alike.
    rates.raw.push(await rawRun(false));
    rates.rawTxn.push(await rawRun(true));
    rates.engine.push(await engineRun());
  }
  const m = { raw: median(rates.raw), rawTxn: median(rates.rawTxn), engine: median(rates.engine) };
  const fmt = (n: number) => n.toFixed(0).padStart(8);
  const list = (xs: number[]) => xs.map((r) => r.toFixed(0)).join(' ');
  console.log(
    `records per run: ${perRun} (1 KiB, 3 partitions, 2 routes + app), runs: ${rates.engine.length}`,
  );
  console.log('pipeline        median rec/s   runs (rec/s)');
  console.log(`raw kafkajs     ${fmt(m.raw)}       ${list(rates.raw)}`);
  console.log(`raw kafkajs txn ${fmt(m.rawTxn)}       ${list(rates.rawTxn)}`);
  console.log(`queue-split     ${fmt(m.engine)}       ${list(rates.engine)}`);
  console.log(`engine / raw    ${(m.engine / m.raw).toFixed(2)}`);
  console.log(
    JSON.stringify({
      bench: 'kafka-engine',
      client: 'kafkajs 2.2.4',
      messageBytes: 1024,
      partitions,
      routes: 2,
      perRun,
      runs: rates.engine.length,
      prefetch: DEFAULT_PREFETCH,
      engineMsgsPerSec: Math.round(m.engine),
      rawMsgsPerSec: Math.round(m.raw),
      rawTxnMsgsPerSec: Math.round(m.rawTxn),
      ratio: Number((m.engine / m.raw).toFixed(3)),
    }),
  );
}

main().catch((err: unknown) => {
  console.error(err);
  process.exit(1);
});
