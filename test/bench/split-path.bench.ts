// A real split through the cluster, end to end (issue 33 items 3 and 5), on the shared test
// environment: a fixture app (RabbitMQ, then Kafka) on the real node, split by the real sidecar
// (`dist/sidecar.js`), the queue-agent the controller starts, the port-forward through the API
// server.
//
// Lifecycle, cut into phases from real timestamps (watch events on pods, QueueSplits and the
// controller's state document, the sidecar's stdout lines; support/clusterTimeline.ts):
//   activation  alice's sidecar start → `ready` (every workload phase of docs/design.md §6, the
//               queue-agent pod created/scheduled/started/Ready, the app's pod gone and back)
//   attach      bob's split on the active workload: sidecar start → `ready`       (goal ≤ 1 s)
//   detach      bob's split stopped with messages still in its shadow → gone, residue at the app
//   handback    alice's, the last, stopped → the app Ready on its source, state removed
// Median per phase over the runs.
//
// Added latency (first run of each provider): messages at a steady rate, half for the developer's
// filter and half for the app, each with its send time:
//   raw pipe    produce → a consumer of a plain queue/topic in this process (the baseline)
//   http        source → the agent → port-forward → sidecar → a local http handler
//   env         source → the agent → the session shadow → a consumer in this process
//   app         source → the agent → the app shadow → the fixture app's pod (its own records)
// at 1,000 msg/s and at the http path's measured maximum (a backlog drained through it), half
// of which goes to the developer: the developer's path then runs at half its maximum. The http
// path's first 1,000 msg/s windows are reported apart (the first traffic meets cold code), the
// third is its steady figure.
//   relay       source → the agent → port-forward → sidecar → a local queue/topic (the test
//               environment's broker) → a consumer in this process
//
//   flock /tmp/qs-heavy.lock npx tsx test/bench/split-path.bench.ts [runs] [rabbitmq,kafka]
//
// Prints a table and one JSON line (also bench-results/split-path.json). Bounded: no new run
// starts after BUDGET_MS; everything it creates is removed even on failure; exit 1 on any failure.
import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';
import { AppsV1Api, CoreV1Api } from '@kubernetes/client-node';
import { installController, testInstall } from '../../deploy/install';
import { QUEUE_CONFIG_ANNOTATION } from '../../core/queueConfig/schema';
import { podLogLines } from '../env/k8s/node/realNode';
import { adminConfig, createNamespace, fixtureDeployment, waitForReadyPods } from '../support/kube';
import { rabbitDeclaration } from '../support/rabbitSplit';
import { createSecret } from '../support/secrets';
import { loadServices, uniqueName } from '../support/services';
import { median } from './stats';
import { benchRun } from './support/benchRun';
import { BenchSidecar } from './support/benchSidecar';
import { kafkaBroker, rabbitBroker, type BenchBroker, type BenchMessage } from './support/benchBrokers';
import { ClusterTimeline, type PodSeen } from './support/clusterTimeline';
import { appCount, appLatencies, messageId, startHandler, type Handler } from './support/latencySinks';

const RUNS = Number(process.argv[2] ?? 3);
/** Which providers, comma-separated (default both): `rabbitmq` alone halves a before/after pair. */
const PROVIDERS = (process.argv[3] ?? 'rabbitmq,kafka').split(',');
/** No run starts after this; a run takes about a minute and a half. */
const BUDGET_MS = 7 * 60_000;
const WORKLOAD = 'app';
const WINDOW_SECONDS = 4;
const BACKLOG = 2000;
const RESIDUE = 200;
const ARRIVAL_TIMEOUT_MS = 60_000;
const benchStarted = Date.now();
/** The Kafka fixture app's declaration (as the e2e suite's, test/e2e/support/kafka.ts). */
const kafkaDeclaration = [
  'queues:',
  '  - name: orders',
  '    kafka:',
  '      brokersEnv: KAFKA_BROKERS',
  '      sourceEnv: SOURCE_TOPIC',
  '      groupEnv: KAFKA_GROUP',
  '      offsetReset: earliest',
].join('\n');
const services = loadServices();
const kc = adminConfig(services.kubeconfig);
const stateDir = fs.mkdtempSync(path.join(os.tmpdir(), 'qs-split-path-'));
const failures: string[] = [];
const cleanups: (() => Promise<unknown>)[] = [];

interface PhaseMs {
  phase: string;
  ms: number;
}
interface LatencyRow {
  provider: string;
  path: string;
  rate: number;
  count: number;
  p50: number;
  p99: number;
  max: number;
}

const pct = (xs: readonly number[], p: number) => {
  const s = [...xs].sort((a, b) => a - b);
  return s.length ? s[Math.min(s.length - 1, Math.ceil((p / 100) * s.length) - 1)]! : NaN;
};
const log = (text: string) => console.log(`[${((Date.now() - benchStarted) / 1000).toFixed(0)}s] ${text}`);

// ---------------------------------------------------------------------------------------------
// The workload

async function deployApp(broker: BenchBroker, namespace: string, source: string): Promise<void> {
  const kafka = broker.provider === 'kafka';
  if (!kafka) await createSecret(kc, namespace, 'amqp', { url: services.inCluster.amqpUrl });
  await kc.makeApiClient(AppsV1Api).createNamespacedDeployment({
    namespace,
    body: fixtureDeployment({
      name: WORKLOAD,
      image: kafka ? 'queuesplit/fixture-kafka-consumer' : 'queuesplit/fixture-rabbitmq-consumer',
      replicas: 1,
      annotations: { [QUEUE_CONFIG_ANNOTATION]: kafka ? kafkaDeclaration : rabbitDeclaration },
      env: kafka
        ? [
            { name: 'KAFKA_BROKERS', value: services.inCluster.kafkaBrokers.join(',') },
            { name: 'SOURCE_TOPIC', value: source },
            { name: 'KAFKA_GROUP', value: `${source}-app` },
          ]
        : [
            { name: 'AMQP_URL', valueFrom: { secretKeyRef: { name: 'amqp', key: 'url' } } },
            { name: 'RABBITMQ_MANAGEMENT_URL', value: services.inCluster.rabbitManagementUrl },
            { name: 'SOURCE_QUEUE', value: source },
          ],
    }),
  });
  await waitForReadyPods(kc, namespace, WORKLOAD, 1);
}

function sidecar(
  namespace: string,
  owner: string,
  mode: { http: string } | { envOut: string } | { relayTo: string; provider: string },
): BenchSidecar {
  const s = new BenchSidecar([
    `--kubeconfig=${services.kubeconfig}`,
    `--namespace=${namespace}`,
    `--workload=deployment/${WORKLOAD}`,
    `--owner=${owner}`,
    `--filter=x-queue-split-user=${owner}`,
    ...('http' in mode
      ? ['--mode=http', `--target=${mode.http}`]
      : 'relayTo' in mode
        ? [
            '--mode=relay',
            // The developer's local broker: here the test environment's, another queue/topic.
            mode.provider === 'kafka'
              ? `--relay-kafka-brokers=${services.kafkaBrokers.join(',')}`
              : `--relay-amqp-url=${services.amqpUrl}`,
            `--relay-to=orders=${mode.relayTo}`,
          ]
        : ['--mode=env', `--env-out=${mode.envOut}`]),
    `--state-file=${path.join(stateDir, `${namespace}-${owner}.json`)}`,
  ]);
  cleanups.push(() => s.end());
  return s;
}

// ---------------------------------------------------------------------------------------------
// Latency windows

/** Sends `rate` msg/s for `seconds` in 10 ms ticks; even messages carry `user` (if any). */
async function drive(
  broker: BenchBroker,
  target: string,
  window: string,
  rate: number,
  seconds: number,
  user: string | undefined,
): Promise<{ dev: number; app: number }> {
  const total = Math.round(rate * seconds);
  const started = Date.now();
  let n = 0;
  const counts = { dev: 0, app: 0 };
  while (n < total) {
    const due = Math.min(total, Math.floor(((Date.now() - started) * rate) / 1000) + 1);
    const batch: BenchMessage[] = [];
    for (; n < due; n++) {
      const mine = user !== undefined && n % 2 === 0;
      if (mine) counts.dev++;
      else counts.app++;
      const sentAt = Date.now();
      batch.push({ id: messageId(window, sentAt, n), user: mine ? user : undefined, sentAt, window });
    }
    if (batch.length) broker.send(target, batch);
    await sleep(10);
  }
  await broker.flush();
  return counts;
}

/** Waits until `done`, running `refresh` (if any) before each check. */
async function until(
  what: string,
  done: () => boolean,
  timeoutMs = ARRIVAL_TIMEOUT_MS,
  refresh?: () => Promise<void>,
): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    await refresh?.();
    if (done()) return;
    if (Date.now() > deadline) throw new Error(`${what}: not within ${timeoutMs / 1000}s`);
    await sleep(refresh ? 250 : 50);
  }
}

function row(provider: string, pathName: string, rate: number, xs: number[]): LatencyRow {
  return {
    provider,
    path: pathName,
    rate,
    count: xs.length,
    p50: pct(xs, 50),
    p99: pct(xs, 99),
    max: pct(xs, 100),
  };
}

let windows = 0;
const nextWindow = () => `w${(windows++).toString(36)}${Date.now().toString(36)}`;

/** The raw pipe: produce → a consumer of a plain source in this process, at `rate`. */
async function rawPipe(broker: BenchBroker, raw: string, rate: number): Promise<LatencyRow> {
  const window = nextWindow();
  const got: number[] = [];
  const stop = await broker.consume(raw, uniqueName('qs-bench-raw'), (w, ms) => {
    if (w === window) got.push(ms);
  });
  try {
    const sent = await drive(broker, raw, window, rate, WINDOW_SECONDS, undefined);
    await until(`raw pipe ${rate}/s: all ${sent.app} arrived`, () => got.length >= sent.app);
  } finally {
    await stop();
  }
  return row(broker.provider, 'raw pipe', rate, got);
}

/** Half to `user`'s sink (read by `devLatencies`), half to the app, at `rate`. */
async function splitWindow(
  broker: BenchBroker,
  source: string,
  rate: number,
  user: string,
  devPath: string,
  devLatencies: (window: string) => number[],
): Promise<LatencyRow[]> {
  const window = nextWindow();
  const sent = await drive(broker, source, window, rate, WINDOW_SECONDS, user);
  await until(
    `${devPath} ${rate}/s: ${sent.dev} at the developer, ${sent.app} at the app`,
    () => devLatencies(window).length >= sent.dev && appCount(window) >= sent.app,
  );
  return [
    row(broker.provider, devPath, rate, devLatencies(window)),
    row(broker.provider, 'app (shadow → pod)', rate, appLatencies(window).latencies),
  ];
}

/** The http path's maximum: a backlog of alice's messages sent at once, drained through it. */
async function httpMaximum(broker: BenchBroker, source: string, handler: Handler): Promise<number> {
  const window = nextWindow();
  const first = Date.now();
  for (let i = 0; i < BACKLOG; i += 100) {
    const sentAt = Date.now();
    broker.send(
      source,
      Array.from({ length: 100 }, (_, j) => ({
        id: messageId(window, sentAt, i + j),
        user: 'alice',
        sentAt,
        window,
      })),
    );
  }
  await broker.flush();
  await until(
    `http maximum: ${BACKLOG} at the handler`,
    () => (handler.arrivals.get(window)?.length ?? 0) >= BACKLOG,
    120_000,
  );
  return Math.round((BACKLOG * 1000) / (handler.lastAt.get(window)! - first));
}

// ---------------------------------------------------------------------------------------------
// Lifecycle phases

const span = (from: number | undefined, to: number | undefined) =>
  from !== undefined && to !== undefined ? to - from : undefined;
const latest = (pods: PodSeen[], m: keyof PodSeen['at']) =>
  pods.length && pods.every((p) => p.at[m] !== undefined)
    ? Math.max(...pods.map((p) => p.at[m]!))
    : undefined;
const earliest = (pods: PodSeen[], m: keyof PodSeen['at']) =>
  pods.length && pods.some((p) => p.at[m] !== undefined)
    ? Math.min(...pods.flatMap((p) => (p.at[m] === undefined ? [] : [p.at[m]])))
    : undefined;

/** Each workload phase the state document showed from `after`, up to `last`, and its duration. */
function statePhases(
  t: ClusterTimeline,
  after: number,
  prefix: string,
  last: string,
): [string, number | undefined][] {
  const seen = t.states.filter((s) => s.at >= after);
  const out: [string, number | undefined][] = [];
  for (let i = 0; i < seen.length - 1 && seen[i]!.phase !== last; i++)
    out.push([`${prefix}state ${seen[i]!.phase}`, seen[i + 1]!.at - seen[i]!.at]);
  return out;
}

/** Names a section's sub-phases after it (`  attach: …`), so each phase's name is unique. */
const section = (name: string, entries: [string, number | undefined][]): [string, number | undefined][] =>
  entries.map(([label, ms]) => {
    const indent = /^ */.exec(label)![0];
    return [indent ? `${indent}${name}: ${label.trimStart()}` : label, ms];
  });

interface RunPhases {
  phases: [string, number | undefined][];
}

async function oneRun(broker: BenchBroker, run: number, latency: LatencyRow[]): Promise<RunPhases> {
  const phases: [string, number | undefined][] = [];
  const namespace = await createNamespace(kc, `qs-bench-path-${broker.provider.slice(0, 6)}`);
  cleanups.push(() => kc.makeApiClient(CoreV1Api).deleteNamespace({ name: namespace }));
  const source = uniqueName(`qs-bench-path-${broker.provider}`);
  await broker.createSource(source);
  cleanups.push(() => broker.deleteSource(source));
  await deployApp(broker, namespace, source);
  const timeline = new ClusterTimeline(kc, namespace, WORKLOAD);
  cleanups.push(async () => timeline.stop());
  await timeline.start();
  const handler = await startHandler();
  cleanups.push(() => handler.close());
  log(`${broker.provider} run ${run + 1}: app Ready in ${namespace}; starting alice's split (http)`);

  // Activation -------------------------------------------------------------------------------
  const alice = sidecar(namespace, 'alice', { http: handler.url });
  const t0 = alice.startedAt;
  const ready = (await alice.until('ready', 180_000)).at;
  await sleep(300); // the last watch events of the activation
  const created = timeline.splitAt('alice', 'created') ?? timeline.splits.find((s) => s.who === 'alice')?.at;
  const agent = timeline.podsCreatedAfter('agent', t0)[0];
  const oldApp = timeline.podsCreatedBefore('app', t0);
  const newApp = timeline.podsCreatedAfter('app', t0);
  const appRestart =
    (span(earliest(oldApp, 'terminating'), latest(oldApp, 'gone')) ?? 0) +
    (span(earliest(newApp, 'created'), latest(newApp, 'ready')) ?? 0);
  const redirecting = timeline.stateAt('REDIRECTING_APP', t0);
  // The agent's own log (JSON lines with their time, agent/log.ts), as the real node keeps it.
  const agentStarted = agent
    ? podLogLines(namespace, agent.name, 'agent')
        .filter((l) => l.startsWith('{'))
        .map((l) => JSON.parse(l) as { time?: string; event?: string })
        .filter((l) => l.event === 'agent.started')
        .map((l) => Date.parse(l.time ?? ''))[0]
    : undefined;
  phases.push(
    ...section('activation', [
      ['activation: sidecar start → ready', ready - t0],
      ['activation minus the app restart', ready - t0 - appRestart],
      ['  sidecar start → QueueSplit created', span(t0, created)],
      ['  QueueSplit created → PREPARING', span(created, timeline.stateAt('PREPARING', t0))],
      ...statePhases(timeline, t0, '  ', 'ACTIVE'),
      ['    agent pod: PREPARING → created', span(timeline.stateAt('PREPARING', t0), agent?.at.created)],
      ['    agent pod: created → scheduled', span(agent?.at.created, agent?.at.scheduled)],
      ['    agent pod: scheduled → started', span(agent?.at.scheduled, agent?.at.started)],
      ['    agent: container started → agent.started (log)', span(agent?.at.started, agentStarted)],
      ['    agent: agent.started → QUIESCING_APP', span(agentStarted, timeline.stateAt('QUIESCING_APP', t0))],
      [
        '    agent pod: started → Ready (probe; off the path if after QUIESCING_APP)',
        span(agent?.at.started, agent?.at.ready),
      ],
      ['    app pod: terminating → gone', span(earliest(oldApp, 'terminating'), latest(oldApp, 'gone'))],
      ['    REDIRECTING_APP → new app pod created', span(redirecting, earliest(newApp, 'created'))],
      ['    new app pod: created → Ready', span(earliest(newApp, 'created'), latest(newApp, 'ready'))],
      ['    new app pod Ready → ACTIVE', span(latest(newApp, 'ready'), timeline.stateAt('ACTIVE', t0))],
      // The rollout proof counts a pod once its containers ran MIN_STABLE_SECONDS (podHealth.ts).
      ['    new app pod: started → ACTIVE', span(latest(newApp, 'started'), timeline.stateAt('ACTIVE', t0))],
      [
        '  state ACTIVE → QueueSplit Active',
        span(timeline.stateAt('ACTIVE', t0), timeline.splitAt('alice', 'Active')),
      ],
      ['  QueueSplit Active → sidecar ready', span(timeline.splitAt('alice', 'Active'), ready)],
    ]),
  );
  log(`alice ready after ${ready - t0} ms (${timeline.states.map((s) => s.phase).join(' → ')})`);

  const raw = uniqueName(`qs-bench-raw-${broker.provider}`);
  if (run === 0) {
    await broker.createSource(raw);
    cleanups.push(() => broker.deleteSource(raw));
    const httpLatencies = (w: string) => handler.arrivals.get(w) ?? [];
    latency.push(await rawPipe(broker, raw, 1000));
    // The first traffic after the activation meets cold code in the agent and the sidecar (it
    // queued for seconds where the same rate a window later did not): reported apart, then one
    // more window before the steady figure.
    latency.push(
      ...(await splitWindow(broker, source, 1000, 'alice', 'http, first traffic (cold)', httpLatencies)),
    );
    latency.push(...(await splitWindow(broker, source, 1000, 'alice', 'http, second window', httpLatencies)));
    latency.push(...(await splitWindow(broker, source, 1000, 'alice', 'http (port-forward)', httpLatencies)));
    const max = await httpMaximum(broker, source, handler);
    log(`http path maximum: ${max} msg/s (a backlog of ${BACKLOG})`);
    // Half the maximum for the developer's path: half of each window goes to the developer, so
    // the window's total rate is the maximum itself.
    const half = Math.max(100, max);
    latency.push({
      provider: broker.provider,
      path: 'http maximum (msg/s)',
      rate: max,
      count: BACKLOG,
      p50: NaN,
      p99: NaN,
      max: NaN,
    });
    latency.push(await rawPipe(broker, raw, half));
    latency.push(...(await splitWindow(broker, source, half, 'alice', 'http (port-forward)', httpLatencies)));

    // env mode: carol's consumer reads her session shadow directly.
    const envOut = path.join(stateDir, `${namespace}-carol.env`);
    const carol = sidecar(namespace, 'carol', { envOut });
    const carolReady = await carol.until('ready', 60_000);
    if (carolReady.line.type !== 'ready') throw new Error('unreachable');
    const env = carolReady.line.env;
    const shadow = env.SOURCE_QUEUE ?? env.SOURCE_TOPIC;
    const group = env.KAFKA_GROUP ?? 'unused';
    if (!shadow) throw new Error(`carol's env names no shadow: ${Object.keys(env).join(', ')}`);
    const envGot = new Map<string, number[]>();
    const stopEnv = await broker.consume(shadow, group, (w, ms) => {
      let list = envGot.get(w);
      if (!list) envGot.set(w, (list = []));
      list.push(ms);
    });
    const envLatencies = (w: string) => envGot.get(w) ?? [];
    latency.push(...(await splitWindow(broker, source, 1000, 'carol', 'env (shadow direct)', envLatencies)));
    latency.push(...(await splitWindow(broker, source, half, 'carol', 'env (shadow direct)', envLatencies)));
    await stopEnv();
    phases.push(['env-mode attach (carol): sidecar start → ready', carolReady.at - carol.startedAt]);
    await carol.stop(120_000);

    // relay mode: dave's sidecar republishes into a local queue/topic that this process reads.
    const local = uniqueName(`qs-bench-relay-${broker.provider}`);
    await broker.createSource(local);
    cleanups.push(() => broker.deleteSource(local));
    const relayGot = new Map<string, number[]>();
    const stopRelay = await broker.consume(local, uniqueName('qs-bench-relay-read'), (w, ms) => {
      let list = relayGot.get(w);
      if (!list) relayGot.set(w, (list = []));
      list.push(ms);
    });
    const dave = sidecar(namespace, 'dave', { relayTo: local, provider: broker.provider });
    const daveReady = await dave.until('ready', 60_000);
    const relayLatencies = (w: string) => relayGot.get(w) ?? [];
    latency.push(
      ...(await splitWindow(broker, source, 1000, 'dave', 'relay (port-forward)', relayLatencies)),
    );
    latency.push(
      ...(await splitWindow(broker, source, half, 'dave', 'relay (port-forward)', relayLatencies)),
    );
    await stopRelay();
    phases.push(['relay-mode attach (dave): sidecar start → ready', daveReady.at - dave.startedAt]);
    await dave.stop(120_000);
  }

  // Attach: bob on the active workload -----------------------------------------------------------
  const bobHandler = await startHandler();
  cleanups.push(() => bobHandler.close());
  const bob = sidecar(namespace, 'bob', { http: bobHandler.url });
  const b0 = bob.startedAt;
  const bobReady = (await bob.until('ready', 60_000)).at;
  await sleep(200);
  const bobCreated =
    timeline.splitAt('bob', 'created', b0) ?? timeline.splits.find((s) => s.who === 'bob')?.at;
  phases.push(
    ...section('attach', [
      ['attach: sidecar start → ready', bobReady - b0],
      ['  sidecar start → QueueSplit created', span(b0, bobCreated)],
      ['  QueueSplit created → Active', span(bobCreated, timeline.splitAt('bob', 'Active', b0))],
      ['  QueueSplit Active → sidecar ready', span(timeline.splitAt('bob', 'Active', b0), bobReady)],
    ]),
  );
  log(`bob attached in ${bobReady - b0} ms`);

  // Detach with residue: bob's handler refuses, so his messages wait in his shadow -------------
  bobHandler.refuse = true;
  const residueWindow = nextWindow();
  const sentAt = Date.now();
  broker.send(
    source,
    Array.from({ length: RESIDUE }, (_, n) => ({
      id: messageId(residueWindow, sentAt, n),
      user: 'bob',
      sentAt,
      window: residueWindow,
    })),
  );
  await broker.flush();
  // Routed to bob's shadow by the agent's pump; his handler refuses each one, so they wait there
  // (RabbitMQ: ready, but for the stream's window held unacked; Kafka: uncommitted).
  const bobLine = (await bob.until('ready', 0)).line;
  const bobQueue = bobLine.type === 'ready' ? bobLine.queues[0] : undefined;
  if (!bobQueue) throw new Error("bob's ready line names no session shadow");
  let inShadow = 0;
  await until(
    `half of bob's ${RESIDUE} residue messages waiting in his shadow`,
    () => inShadow >= RESIDUE / 2,
    20_000,
    async () => void (inShadow = await broker.waiting(bobQueue.shadow, bobQueue.group ?? '')),
  );
  log(`${inShadow} of bob's ${RESIDUE} messages wait in his shadow ${bobQueue.shadow}; stopping his sidecar`);
  const d0 = Date.now();
  const bobExit = await bob.stop(120_000);
  await until(
    `bob's ${RESIDUE} residue messages at the app`,
    () => appCount(residueWindow) >= RESIDUE,
    120_000,
  );
  const residueAt = appLatencies(residueWindow).lastAt;
  await until("bob's QueueSplit deleted", () => timeline.splitAt('bob', 'deleted', d0) !== undefined, 60_000);
  phases.push(
    ...section('detach', [
      ['detach (residue): SIGTERM → QueueSplit gone', span(d0, timeline.splitAt('bob', 'deleted', d0))],
      ['  SIGTERM → sidecar exit', bobExit.at - d0],
      [`  SIGTERM → last of ${RESIDUE} residue at the app`, residueAt - d0],
    ]),
  );
  if (bobExit.code !== 0)
    failures.push(`${broker.provider} run ${run + 1}: bob's sidecar exited ${bobExit.code}`);
  log(`bob detached; residue at the app ${residueAt - d0} ms after SIGTERM`);

  // Handback: alice's split, the last, stops -----------------------------------------------------
  const h0 = Date.now();
  const aliceExit = await alice.stop(180_000);
  await until(
    'the state document removed (handback done)',
    () => timeline.stateAt('removed', h0) !== undefined,
    180_000,
  );
  const backApp = timeline.podsCreatedAfter('app', h0);
  await until(
    'the app Ready again',
    () => latest(timeline.podsCreatedAfter('app', h0), 'ready') !== undefined,
    60_000,
  );
  await sleep(300);
  const handedBack = Math.max(timeline.stateAt('removed', h0)!, latest(backApp, 'ready')!);
  const redirected = timeline.podsCreatedBefore('app', h0).filter((p) => (p.at.created ?? 0) >= t0);
  const handbackRestart =
    (span(earliest(redirected, 'terminating'), latest(redirected, 'gone')) ?? 0) +
    (span(earliest(backApp, 'created'), latest(backApp, 'ready')) ?? 0);
  await until(
    'the queue-agent pod gone',
    () => latest(timeline.podsCreatedAfter('agent', t0), 'gone') !== undefined,
    60_000,
  );
  const agentGone = latest(timeline.podsCreatedAfter('agent', t0), 'gone');
  phases.push(
    ...section('handback', [
      ['handback: SIGTERM → the app Ready on its source', latest(backApp, 'ready')! - h0],
      ['handback to app Ready minus the app restart', latest(backApp, 'ready')! - h0 - handbackRestart],
      ['handback: SIGTERM → all done (state removed)', handedBack - h0],
      ['  SIGTERM → QueueSplit gone', span(h0, timeline.splitAt('alice', 'deleted', h0))],
      ['  SIGTERM → sidecar exit', aliceExit.at - h0],
      ['  SIGTERM → first handback phase', span(h0, timeline.states.find((s) => s.at >= h0)?.at)],
      ...statePhases(timeline, h0, '  ', 'removed'),
      [
        '    app pod: terminating → gone',
        span(earliest(redirected, 'terminating'), latest(redirected, 'gone')),
      ],
      ['    app pod: created → Ready', span(earliest(backApp, 'created'), latest(backApp, 'ready'))],
      ['    agent pod: gone after SIGTERM', span(h0, agentGone)],
    ]),
  );
  if (aliceExit.code !== 0)
    failures.push(`${broker.provider} run ${run + 1}: alice's sidecar exited ${aliceExit.code}`);
  log(
    `handed back ${handedBack - h0} ms after SIGTERM (${timeline.states
      .filter((s) => s.at >= h0)
      .map((s) => s.phase)
      .join(' → ')})`,
  );
  return { phases };
}

// ---------------------------------------------------------------------------------------------
// Report

const GOALS: Record<string, string> = {
  'activation minus the app restart': '≤ 5000',
  'attach: sidecar start → ready': '≤ 1000',
  'handback to app Ready minus the app restart': '≤ 15000',
};

function summarize(runs: RunPhases[]): PhaseMs[] {
  const order: string[] = [];
  const values = new Map<string, number[]>();
  for (const r of runs)
    for (const [phase, ms] of r.phases) {
      if (!values.has(phase)) {
        order.push(phase);
        values.set(phase, []);
      }
      if (ms !== undefined) values.get(phase)!.push(ms);
    }
  return order.map((phase) => ({
    phase,
    ms: values.get(phase)!.length ? Math.round(median(values.get(phase)!)) : NaN,
  }));
}

function printLifecycle(provider: string, rows: PhaseMs[], runs: number): void {
  console.log(`\nLifecycle, ${provider} (median of ${runs} run${runs === 1 ? '' : 's'}, ms; ! = over 1 s)`);
  console.log(`${'phase'.padEnd(58)} ${'ms'.padStart(7)}  goal`);
  for (const r of rows) {
    const flag = r.ms > 1000 ? '!' : ' ';
    console.log(`${r.phase.padEnd(58)} ${String(r.ms).padStart(7)}${flag} ${GOALS[r.phase.trim()] ?? ''}`);
  }
}

function printLatency(rows: LatencyRow[]): void {
  console.log(
    '\nAdded latency (ms, send → arrival; msg/s is the total, half of it for the developer; +p50/+p99 over the raw pipe at the same rate, goal p50 ≤ 5, p99 ≤ 25)',
  );
  console.log(
    `${'provider'.padEnd(9)} ${'path'.padEnd(22)} ${'msg/s'.padStart(6)} ${'n'.padStart(5)} ${'p50'.padStart(6)} ${'p99'.padStart(6)} ${'max'.padStart(6)}  ${'+p50'.padStart(6)} ${'+p99'.padStart(6)}`,
  );
  for (const r of rows) {
    if (Number.isNaN(r.p50)) {
      console.log(`${r.provider.padEnd(9)} ${r.path.padEnd(22)} ${String(r.rate).padStart(6)}`);
      continue;
    }
    const raw = rows.find((x) => x.provider === r.provider && x.rate === r.rate && x.path === 'raw pipe');
    const added = raw && r.path !== 'raw pipe' ? [r.p50 - raw.p50, r.p99 - raw.p99] : undefined;
    const mark = added && (added[0]! > 5 || added[1]! > 25) ? ' over goal' : '';
    console.log(
      `${r.provider.padEnd(9)} ${r.path.padEnd(22)} ${String(r.rate).padStart(6)} ${String(r.count).padStart(5)} ${String(r.p50).padStart(6)} ${String(r.p99).padStart(6)} ${String(r.max).padStart(6)}  ${added ? String(added[0]).padStart(6) : ''.padStart(6)} ${added ? String(added[1]).padStart(6) : ''.padStart(6)}${mark}`,
    );
  }
}

async function cleanUp(): Promise<void> {
  for (const fn of cleanups.reverse())
    await fn().catch((err: unknown) => failures.push(`clean-up: ${String(err)}`));
  cleanups.length = 0;
}

async function main(): Promise<void> {
  const bench = benchRun('split-path');
  await installController(kc, testInstall);
  const lifecycle: Record<string, PhaseMs[]> = {};
  const latency: LatencyRow[] = [];
  const makers = [rabbitBroker, kafkaBroker].filter((_, i) => PROVIDERS.includes(['rabbitmq', 'kafka'][i]!));
  for (const make of makers) {
    const broker = await make(services);
    const runs: RunPhases[] = [];
    try {
      for (let run = 0; run < RUNS; run++) {
        if (run > 0 && Date.now() - benchStarted > BUDGET_MS * (make === rabbitBroker ? 0.5 : 1)) {
          log(`budget: no more ${broker.provider} runs after ${run}`);
          break;
        }
        try {
          runs.push(await oneRun(broker, run, latency));
        } catch (err) {
          failures.push(
            `${broker.provider} run ${run + 1}: ${err instanceof Error ? err.message : String(err)}`,
          );
          log(`FAILED: ${failures[failures.length - 1]}`);
        } finally {
          await cleanUp();
        }
      }
    } finally {
      await broker.close();
    }
    lifecycle[broker.provider] = summarize(runs);
    printLifecycle(broker.provider, lifecycle[broker.provider]!, runs.length);
  }
  printLatency(latency);
  // NaN (a path with no sample) is written as null, as JSON has no NaN.
  const orNull = (x: number) => (Number.isNaN(x) ? null : x);
  console.log(`\n${((Date.now() - benchStarted) / 1000).toFixed(0)} s in all`);
  bench.finish({
    bench: 'split-path',
    lifecycle,
    latency: latency.map((r) => ({ ...r, p50: orNull(r.p50), p99: orNull(r.p99), max: orNull(r.max) })),
    failures,
  });
  if (failures.length) throw new Error(`\n  ${failures.join('\n  ')}`);
}

main()
  .then(() => fs.rmSync(stateDir, { recursive: true, force: true }))
  .catch(async (err: unknown) => {
    console.error(
      `split-path bench FAILED: ${err instanceof Error ? (err.stack ?? err.message) : String(err)}`,
    );
    await cleanUp();
    fs.rmSync(stateDir, { recursive: true, force: true });
    process.exit(1);
  });
