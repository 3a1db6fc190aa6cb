// Throughput of the SQS engine beside a raw @aws-sdk/client-sqs pipe doing the same minimum
// work, in one process, against the SQS (ElasticMQ) from `npm run env:up`: 1 KiB messages in a
// prefilled standard source, 1 route (half the messages, `x-queue-split-user: alice`) and the
// application shadow (the other half). Fresh queues per run, deleted after.
//   raw          ReceiveMessage (10, long poll) → SendMessageBatch per destination →
//                DeleteMessageBatch, in as many loops as hold the engine's prefetch (10 each)
//   queue-split  the engine (one receive loop, a SendMessage then a DeleteMessage per message)
// The engine makes about five times the raw pipe's requests per message (no batch calls), and
// on ElasticMQ the rate follows the request count.
//
//   npx tsx test/bench/sqs-engine.bench.ts [messages-per-run] [runs]
//
// Prints a table and one JSON line. Bounded: stops starting runs after 45 s.
import { setTimeout as sleep } from 'node:timers/promises';
import {
  DeleteMessageBatchCommand,
  DeleteQueueCommand,
  ReceiveMessageCommand,
  SendMessageBatchCommand,
  type Message,
} from '@aws-sdk/client-sqs';
import { DEFAULT_PREFETCH, queueNameOf } from '../../agent/sqs/config';
import { SqsEngine } from '../../agent/sqs/engine';
import { SOURCE_VISIBILITY_SECONDS, sqsQueueUrl, sqsTestTiming } from '../conformance/sqs/harness';
import { running } from '../conformance/steps';
import { loadServices } from '../support/services';
import { SqsQueues, sqsClient, sqsTestCredentials } from '../support/sqs';
import { median } from './stats';
import { benchRun } from './support/benchRun';

const perRun = Number(process.argv[2] ?? 2000);
const runs = Number(process.argv[3] ?? 5);
const budgetMs = 45_000;
/** A run that copies nothing for this long failed (not a slow run). */
const stallMs = 30_000;
const USER = 'x-queue-split-user';
const body = 'x'.repeat(1024);
/** Short, so the engine's start (a quiet source over one visibility timeout) takes seconds. */
const sourceAttributes = { VisibilityTimeout: String(SOURCE_VISIBILITY_SECONDS) };
/** Raw loops: each holds at most one receive (10 messages), so together the engine's prefetch. */
const rawLoops = Math.max(1, Math.floor(DEFAULT_PREFETCH / 10));
const client = sqsClient();

const failed = (op: string, answer: { Failed?: unknown[] }) => {
  if (answer.Failed?.length) throw new Error(`${op}: ${JSON.stringify(answer.Failed)}`);
};

/** `perRun` messages, alice and nobody in turn, sent 10 at a time by 8 senders. */
async function prefill(url: string): Promise<void> {
  let next = 0;
  const sender = async () => {
    while (next < perRun) {
      const from = next;
      next = Math.min(perRun, next + 10);
      const Entries = [];
      for (let i = from; i < next; i++) {
        Entries.push({
          Id: String(i - from),
          MessageBody: body,
          MessageAttributes: {
            [USER]: { DataType: 'String', StringValue: i % 2 ? 'nobody' : 'alice' },
            'x-message-id': { DataType: 'String', StringValue: `m-${i}` },
          },
        });
      }
      failed('SendMessageBatch', await client.send(new SendMessageBatchCommand({ QueueUrl: url, Entries })));
    }
  };
  await Promise.all(Array.from({ length: 8 }, sender));
}

/** Queues the engine made (by name): deleted after its run. */
const drop = (names: string[]) =>
  Promise.all(
    names.map((n) =>
      client.send(new DeleteQueueCommand({ QueueUrl: sqsQueueUrl(n) })).catch(() => undefined),
    ),
  );

/** Messages per second through the engine, from the moment `start` returns. */
async function engineRun(): Promise<number> {
  const queues = new SqsQueues(client);
  const source = await queues.create('bench-sqse', sourceAttributes);
  const base = queueNameOf(source);
  const names = { app: `${base}-app`, a: `${base}-a`, lock: `${base}-lock` };
  await prefill(source);
  const { endpoint, region } = loadServices().sqs;
  const engine = new SqsEngine({
    activationId: base,
    epoch: 1,
    region,
    endpoint,
    credentials: sqsTestCredentials,
    sourceQueueUrl: source,
    appShadow: names.app,
    lockQueue: names.lock,
    timing: sqsTestTiming,
  });
  try {
    const total = () =>
      engine.status().app.published + engine.status().routes.reduce((n, r) => n + r.published, 0);
    // Its preflight (a quiet source over one visibility timeout) is not throughput: time from here.
    await running(engine, 1, [{ routeId: 'a', filter: { [USER]: 'alice' }, shadow: names.a }]);
    const started = process.hrtime.bigint();
    const before = total();
    let last = before;
    let lastAt = Date.now();
    while (total() < perRun) {
      await sleep(5);
      if (total() !== last) [last, lastAt] = [total(), Date.now()];
      else if (Date.now() - lastAt > stallMs) throw new Error(`engine stalled at ${last}/${perRun}`);
    }
    return (perRun - before) / (Number(process.hrtime.bigint() - started) / 1e9);
  } finally {
    await engine.close();
    await drop(Object.values(names));
    await queues.deleteAll();
  }
}

/** Messages per second for the same work done by hand with the SDK. */
async function rawRun(): Promise<number> {
  const queues = new SqsQueues(client);
  const source = await queues.create('bench-sqsr', sourceAttributes);
  const app = await queues.create('bench-sqsr-app', sourceAttributes);
  const a = await queues.create('bench-sqsr-a', sourceAttributes);
  try {
    await prefill(source);
    let copied = 0;
    let finished = 0n;
    const started = process.hrtime.bigint();
    const loop = async () => {
      while (copied < perRun) {
        const { Messages = [] } = await client.send(
          new ReceiveMessageCommand({
            QueueUrl: source,
            MaxNumberOfMessages: 10,
            WaitTimeSeconds: sqsTestTiming.receiveWaitSeconds,
            VisibilityTimeout: 30, // SQS's default: no handle goes stale in a slow round
            MessageAttributeNames: ['All'],
          }),
        );
        if (Messages.length === 0) continue;
        const byDestination = new Map<string, Message[]>();
        for (const m of Messages) {
          const to = m.MessageAttributes?.[USER]?.StringValue === 'alice' ? a : app;
          byDestination.set(to, [...(byDestination.get(to) ?? []), m]);
        }
        for (const [url, ms] of byDestination) {
          const Entries = ms.map((m, i) => ({
            Id: String(i),
            MessageBody: m.Body,
            MessageAttributes: m.MessageAttributes,
          }));
          failed(
            'SendMessageBatch',
            await client.send(new SendMessageBatchCommand({ QueueUrl: url, Entries })),
          );
        }
        const Entries = Messages.map((m, i) => ({ Id: String(i), ReceiptHandle: m.ReceiptHandle }));
        failed(
          'DeleteMessageBatch',
          await client.send(new DeleteMessageBatchCommand({ QueueUrl: source, Entries })),
        );
        copied += Messages.length;
        if (copied >= perRun) finished ||= process.hrtime.bigint();
      }
    };
    await Promise.all(Array.from({ length: rawLoops }, loop));
    return perRun / (Number(finished - started) / 1e9);
  } finally {
    await queues.deleteAll();
  }
}

async function main(): Promise<void> {
  const recorder = benchRun('sqs-engine');
  const deadline = Date.now() + budgetMs;
  const engineRates: number[] = [];
  const rawRates: number[] = [];
  for (let i = 0; i < runs && Date.now() < deadline; i++) {
    // Alternate so drift on a shared machine hits both sides alike.
    rawRates.push(await rawRun());
    engineRates.push(await engineRun());
  }
  const engine = median(engineRates);
  const raw = median(rawRates);
  const fmt = (n: number) => n.toFixed(0).padStart(8);
  console.log(
    `messages per run: ${perRun} (1 KiB, standard queues, 1 route + app), runs: ${engineRates.length}`,
  );
  console.log('pipeline        median msg/s   runs (msg/s)');
  console.log(`raw aws-sdk     ${fmt(raw)}       ${rawRates.map((r) => r.toFixed(0)).join(' ')}`);
  console.log(`queue-split     ${fmt(engine)}       ${engineRates.map((r) => r.toFixed(0)).join(' ')}`);
  console.log(`engine / raw    ${(engine / raw).toFixed(2)}`);
  recorder.finish({
    bench: 'sqs-engine',
    server: 'ElasticMQ',
    messageBytes: 1024,
    routes: 1,
    perRun,
    runs: engineRates.length,
    prefetch: DEFAULT_PREFETCH,
    rawLoops,
    engineMsgsPerSec: Math.round(engine),
    rawMsgsPerSec: Math.round(raw),
    ratio: Number((engine / raw).toFixed(3)),
  });
}

main()
  .then(() => client.destroy())
  .catch((err: unknown) => {
    console.error(err);
    process.exit(1);
  });
