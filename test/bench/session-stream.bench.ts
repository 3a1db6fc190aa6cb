// The session path through the cluster (docs/design.md §8) against the former direct path, at 1 KiB, in
// one process against the brokers of `npm run env:up`:
//   direct  the sidecar's own Kafka consumer (`--transport broker`) reads the session shadow
//   stream  the queue-agent's session server reads it and streams it over a WebSocket
//           (core/sessionStream.ts) to the sidecar's AgentStream
// Both hand each message to the same delivery: a POST to a local handler that answers 200.
// Throughput: a backlog of N records (3 partitions) drained, records/s. Added latency: records
// produced at a steady 100/s, produce → handler, p50/p99, stream minus direct. Runs interleave.
// The port-forward hop through the API server is not in this bench (it needs a pod); the
// cluster suite proves it, and its cost is one more TCP relay.
//
//   npx tsx test/bench/session-stream.bench.ts [records-per-run] [runs]
//
// Prints a table and one JSON line. Bounded: stops starting rounds after 240 s.
import * as http from 'node:http';
import type { AddressInfo } from 'node:net';
import { Writable } from 'node:stream';
import { jsonLogger } from '../../agent/log';
import { SessionServer } from '../../agent/sessionStream/sessionServer';
import { DESIRED_API_VERSION } from '../../core/agentProtocol';
import { newSessionSecret, sessionPublicKey } from '../../core/sessionSecret';
import type { ShadowMessage } from '../../core/shadowMessage';
import { SESSION_PATH } from '../../core/sessionStream';
import { AddressMap } from '../../laptop/addressMap';
import { fixedEndpoint } from '../../sidecar/agentPortForward';
import { AgentStream } from '../../sidecar/agentStream';
import { KafkaShadowConsumer } from '../../sidecar/consumers/kafka';
import type { Delivery, DeliveryHandler } from '../../sidecar/consumers/types';
import { Reporter } from '../../sidecar/output';
import { createTopics, drop, kafka, median, partitions, services } from './kafkaBench';
import { benchRun } from './support/benchRun';

const perRun = Number(process.argv[2] ?? 3000);
const runs = Number(process.argv[3] ?? 3);
const budgetMs = 240_000;
const LATENCY_RECORDS = 300;
const LATENCY_PERCENTILES = [1, 10, 25, 50, 75, 90, 95, 99, 100];
process.env.QS_BENCH_BROKERS = services.kafkaBrokers.join(',');
const silent = new Reporter(
  new Writable({ write: (_c, _e, done) => done() }),
  new Writable({ write: (_c, _e, done) => done() }),
);

/** The local handler: records when each message arrived (by its produce time header). */
async function handler(): Promise<{ url: string; arrivals: number[]; close: () => void }> {
  const arrivals: number[] = [];
  const agent = new http.Agent({ keepAlive: true });
  const server = http.createServer((req, res) => {
    const sent = Number(req.headers['x-sent-at']);
    req.resume();
    req.on('end', () => {
      arrivals.push(Date.now() - sent);
      res.writeHead(200).end();
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  return {
    url: `http://127.0.0.1:${(server.address() as AddressInfo).port}/`,
    arrivals,
    close: () => {
      agent.destroy();
      server.close();
    },
  };
}

/** The same delivery for both paths: one POST per message, resolved on the 200. */
function poster(url: string): DeliveryHandler {
  const agent = new http.Agent({ keepAlive: true, maxSockets: 16 });
  return {
    deliver: (m: ShadowMessage) =>
      new Promise<Delivery>((resolve, reject) => {
        const sentAt = m.headers.find((h) => h.name === 'x-sent-at')?.value;
        const req = http.request(
          url,
          { method: 'POST', agent, headers: { 'x-sent-at': String(sentAt ?? Date.now()) } },
          (res) => {
            res.resume();
            res.on('end', () => resolve({ settle: 'ack', attempts: 1 }));
          },
        );
        req.on('error', reject);
        req.end(m.body);
      }),
    settled: () => undefined,
  };
}

async function produce(topic: string, n: number, ratePerSecond?: number): Promise<void> {
  const producer = kafka.producer();
  await producer.connect();
  const body = Buffer.alloc(1024, 'x');
  if (ratePerSecond === undefined) {
    for (let i = 0; i < n; i += 500) {
      await producer.send({
        topic,
        acks: -1,
        messages: Array.from({ length: Math.min(500, n - i) }, (_, k) => ({
          partition: (i + k) % partitions,
          value: body,
          headers: { 'x-sent-at': String(Date.now()) },
        })),
      });
    }
  } else {
    for (let i = 0; i < n; i++) {
      await producer.send({
        topic,
        acks: -1,
        messages: [{ partition: i % partitions, value: body, headers: { 'x-sent-at': String(Date.now()) } }],
      });
      await new Promise((r) => setTimeout(r, 1000 / ratePerSecond));
    }
  }
  await producer.disconnect();
}

type Path = 'direct' | 'stream';

/** One run: a fresh topic, filled first (throughput) or while consuming (latency). */
async function run(path: Path, n: number, steady: boolean): Promise<{ rate: number; latencies: number[] }> {
  const topic = `bench-session-${path}-${Date.now()}`;
  const group = `${topic}-g`;
  await createTopics([topic]);
  if (!steady) await produce(topic, n);
  const target = await handler();
  const delivery = poster(target.url);
  let stop: () => Promise<void>;
  const started = Date.now();
  if (path === 'direct') {
    const consumer = new KafkaShadowConsumer({
      queue: 'orders',
      topic,
      group,
      connection: { provider: 'kafka', brokers: services.kafkaBrokers, display: 'bench' },
      addressMap: AddressMap.parse([]),
      reporter: silent,
      onFatal: (err) => console.error(err.message),
    });
    await consumer.start(delivery);
    stop = () => consumer.stop();
  } else {
    const server = new SessionServer(
      jsonLogger(undefined, 'warn').child({ component: 'bench' }),
      'bench-pod',
    );
    const httpServer = http.createServer();
    server.attach(httpServer);
    await new Promise<void>((resolve) => httpServer.listen(0, '127.0.0.1', resolve));
    const secret = newSessionSecret();
    await server.update({
      apiVersion: DESIRED_API_VERSION,
      activationId: 'bench/uid',
      generation: 1,
      phase: 'ACTIVE',
      queues: [
        {
          name: 'orders',
          provider: 'kafka',
          source: topic,
          group: 'unused',
          env: { brokers: 'QS_BENCH_BROKERS' },
          epoch: 0,
          names: { appShadow: 'unused' },
        },
      ],
      routes: [
        {
          routeId: 'r-bench-0000000001',
          filter: {},
          queues: ['orders'],
          phase: 'ACTIVE',
          generation: 1,
          shadows: { orders: { shadow: topic, sessionGroup: group } },
          publicKey: sessionPublicKey(secret),
        },
      ],
    });
    const stream = new AgentStream({
      routeId: 'r-bench-0000000001',
      secret,
      endpoint: fixedEndpoint(`ws://127.0.0.1:${(httpServer.address() as AddressInfo).port}${SESSION_PATH}`),
      handlers: new Map([['orders', delivery]]),
      reporter: silent,
      onFatal: (err) => console.error(err.message),
      startTimeoutMs: 30_000,
    });
    await stream.start();
    stop = async () => {
      await stream.stop();
      await server.close();
      httpServer.close();
    };
  }
  if (steady) await produce(topic, n, 100);
  while (target.arrivals.length < n) await new Promise((r) => setTimeout(r, 20));
  const seconds = (Date.now() - started) / 1000;
  await stop();
  target.close();
  await drop([topic], [group]);
  return { rate: n / seconds, latencies: [...target.arrivals] };
}

const percentile = (xs: number[], p: number) => {
  const sorted = [...xs].sort((a, b) => a - b);
  return sorted[Math.min(sorted.length - 1, Math.floor((p / 100) * sorted.length))] ?? NaN;
};

async function main(): Promise<void> {
  const recorder = benchRun('session-stream');
  const deadline = Date.now() + budgetMs;
  const rates: Record<Path, number[]> = { direct: [], stream: [] };
  const latency: Record<Path, number[]> = { direct: [], stream: [] };
  for (let i = 0; i < runs && Date.now() < deadline; i++) {
    for (const path of ['direct', 'stream'] as const) {
      rates[path].push((await run(path, perRun, false)).rate);
      latency[path].push(...(await run(path, LATENCY_RECORDS, true)).latencies);
    }
  }
  const row = (path: Path) => ({
    path,
    medianRecordsPerSecond: Math.round(median(rates[path])),
    p50Ms: percentile(latency[path], 50),
    p99Ms: percentile(latency[path], 99),
    // The distribution for the HTML report (test/bench/report/): produce → handler, ms.
    latencyPercentilesMs: Object.fromEntries(
      LATENCY_PERCENTILES.map((p) => [`p${p}`, percentile(latency[path], p)]),
    ),
    runs: rates[path].map(Math.round),
  });
  const direct = row('direct');
  const stream = row('stream');
  console.log(
    `records per run: ${perRun} (1 KiB, ${partitions} partitions); latency: ${LATENCY_RECORDS} records at 100/s per run; runs: ${rates.direct.length}`,
  );
  console.log('path     median rec/s   vs direct   p50 ms   p99 ms   runs (rec/s)');
  for (const r of [direct, stream])
    console.log(
      `${r.path.padEnd(8)} ${String(r.medianRecordsPerSecond).padStart(12)}   ${(r.medianRecordsPerSecond / direct.medianRecordsPerSecond).toFixed(2).padStart(9)}   ${String(r.p50Ms).padStart(6)}   ${String(r.p99Ms).padStart(6)}   ${r.runs.join(', ')}`,
    );
  const added = { p50Ms: stream.p50Ms - direct.p50Ms, p99Ms: stream.p99Ms - direct.p99Ms };
  console.log(`added latency of the stream: p50 ${added.p50Ms} ms, p99 ${added.p99Ms} ms`);
  recorder.finish({
    bench: 'session-stream',
    perRun,
    direct,
    stream,
    ratio: stream.medianRecordsPerSecond / direct.medianRecordsPerSecond,
    addedLatencyMs: added,
  });
  process.exit(0);
}

void main();
