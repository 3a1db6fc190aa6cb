// The controller at scale, on the test environment (`npm run env:up`): W annotated workloads
// (0 replicas: no app pods) and S splits on each (W × S splits, 200 × 5 = 1,000 by default). The
// installed controller is scaled to 0 and each bundle under test runs as a local process with
// the controller's ServiceAccount token through a counting proxy (test/bench/support/
// controllerUnderTest.ts).
//
// The queue-agents: the real node runs at most ~25 queue-agent pods, so the controller is started
// with `--agent-node-selector` naming a label no node has: it creates every queue-agent's objects
// as always, their pods stay Pending, and a stand-in in this process plays all W agents by the
// agent protocol (test/bench/support/agentStandIn.ts: every step done, every route acked at its
// generation, every draining route drained; no broker). The real agent's own latency (its 500 ms
// poll, its engines' route barrier) is not in these numbers; test/cluster/split-routes.test.ts and
// the engine benches cover it.
//
// Phases, per bundle: (1) activation: one split per workload, all at once, until all are Active
// (each workload's cutover: quiesce, pump, redirect); (2) attach burst: the other W × (S-1) splits
// created at once on the active workloads, the time from each one's creation to its route acked by
// the stand-in and to its status Active (goal: ack ≤ 2 s at 1,000 splits); (3) steady: requests
// over a window with nothing changing but the splits' lease renewals (every 20 s each, as their
// sidecars would; the bench's own requests are not counted); (4) ten more splits, one at a time, created→ack on the
// loaded controller; then every split deleted and every workload handed back.
// Measured: the controller's CPU time and RSS (/proc), API requests per second by phase.
//
//   npx tsx test/bench/controller-scale.bench.ts [workloads] [splitsPerWorkload] [steadySeconds] [agent.js ...]
//
// Several bundles (a baseline build's dist/agent.js, then this one) run one after the other in
// this process against the same workloads. Prints a table and one JSON line.
import * as fs from 'node:fs';
import * as path from 'node:path';
import {
  AppsV1Api,
  CoreV1Api,
  CustomObjectsApi,
  makeInformer,
  type KubeConfig,
  type KubernetesListObject,
  type KubernetesObject,
} from '@kubernetes/client-node';
import { installController, testInstall } from '../../deploy/install';
import { repoRoot } from '../env/paths';
import { adminConfig, createNamespace, deleteNamespace, fixtureDeployment } from '../support/kube';
import { pollUntil } from '../support/poll';
import { rabbitDeclaration } from '../support/rabbitSplit';
import { createSecret } from '../support/secrets';
import { loadServices, uniqueName } from '../support/services';
import { createSplit, queueSplitApi } from '../support/splits';
import { mergePatch } from '../../agent/kube/client';
import { QUEUE_CONFIG_ANNOTATION } from '../../core/queueConfig/schema';
import type { QueueSplit } from '../../core/crd/queueSplitSchema';
import { median } from './stats';
import { benchRun } from './support/benchRun';
import { AgentStandIn } from './support/agentStandIn';
import {
  countingProxy,
  processUsage,
  proxiedControllerKubeconfig,
  scaleInstalledController,
  startController,
  type CountingProxy,
} from './support/controllerUnderTest';

const W = Number(process.argv[2] ?? 200);
const S = Number(process.argv[3] ?? 5);
const STEADY_SECONDS = Number(process.argv[4] ?? 60);
/** The splits' lease, renewed every third of it (the sidecar's default lease). */
const LEASE_SECONDS = 60;
/** Splits added one at a time after the steady window (each on another workload). */
const SINGLES = 10;
const bundles =
  process.argv.slice(5).length > 0 ? process.argv.slice(5) : [path.join(repoRoot, 'dist', 'agent.js')];
const services = loadServices();
/** A node label no node has: the controller's queue-agent pods stay Pending (see the header). */
const NO_NODE = '--agent-node-selector=queuesplit.dev/bench-stand-in=true';
/** The controller's own default leader Lease (agent/main.ts), not the test install's 6 s (made for
 * fail-over tests): at 200 workloads on the 2-core test machine a 6 s Lease was lost while the
 * activations ran, and the controller exited. */
const LEADER_LEASE = '--lease-seconds=15';

const quantile = (xs: number[], q: number) => {
  const s = [...xs].sort((a, b) => a - b);
  return s.length === 0 ? NaN : s[Math.min(s.length - 1, Math.ceil(q * s.length) - 1)]!;
};
const ms = (xs: number[]) => ({
  median: Math.round(median(xs)),
  p99: Math.round(quantile(xs, 0.99)),
  max: Math.round(Math.max(...xs)),
});

interface Phase {
  seconds: number;
  requests: number;
  requestsPerSecond: number;
  cpuSeconds: number;
  /** CPU time over wall time (1 = one core busy). */
  cpuShare: number;
  maxRssMiB: number;
  byKind?: Record<string, number>;
}

interface Row {
  bundle: string;
  activation: Phase & { toActiveMs: ReturnType<typeof ms> };
  attach: Phase & {
    splits: number;
    toAckMs: ReturnType<typeof ms>;
    /** The ack's two parts: created → the route in a desired document the stand-in's watch
     * delivered (controller and API server), then → acked (the stand-in itself). */
    toDesiredMs: ReturnType<typeof ms>;
    desiredToAckMs: ReturnType<typeof ms>;
    toActiveMs: ReturnType<typeof ms>;
  };
  steady: Phase & { leasesPerSecond: number; perWorkload: number };
  /** Created → acked of splits added one at a time after the steady window. */
  singleToAckMs: ReturnType<typeof ms>;
  handbackSeconds: number;
}

/** Runs `body` as one phase: requests, CPU time and peak RSS of the controller process. */
async function phase<T>(
  pid: number,
  proxy: CountingProxy,
  body: () => Promise<T>,
): Promise<{ result: T; phase: Phase; counts: Map<string, number> }> {
  proxy.counts.clear();
  const cpu0 = processUsage(pid).cpuSeconds;
  const t0 = performance.now();
  let maxRss = processUsage(pid).rssMiB;
  const sampler = setInterval(() => {
    // An exited controller has no /proc entry: the phase's wait says so (controllerExited).
    if (fs.existsSync(`/proc/${pid}/stat`)) maxRss = Math.max(maxRss, processUsage(pid).rssMiB);
  }, 500);
  try {
    const result = await body();
    const seconds = (performance.now() - t0) / 1000;
    const cpuSeconds = processUsage(pid).cpuSeconds - cpu0;
    const counts = new Map(proxy.counts);
    const requests = [...counts.values()].reduce((a, b) => a + b, 0);
    return {
      result,
      counts,
      phase: {
        seconds: +seconds.toFixed(1),
        requests,
        requestsPerSecond: +(requests / seconds).toFixed(2),
        cpuSeconds: +cpuSeconds.toFixed(2),
        cpuShare: +(cpuSeconds / seconds).toFixed(3),
        maxRssMiB: +Math.max(maxRss, processUsage(pid).rssMiB).toFixed(1),
      },
    };
  } finally {
    clearInterval(sampler);
  }
}

/** When each QueueSplit (by name) was first seen Active, from a watch. */
function watchActive(kc: KubeConfig, namespace: string) {
  const custom = kc.makeApiClient(CustomObjectsApi);
  // As the custom-objects API returns them (JSON), read back as QueueSplits below.
  const informer = makeInformer<KubernetesObject>(
    kc,
    `/apis/${queueSplitApi.group}/${queueSplitApi.version}/namespaces/${namespace}/${queueSplitApi.plural}`,
    async () =>
      (await custom.listNamespacedCustomObject({
        ...queueSplitApi,
        namespace,
      })) as KubernetesListObject<KubernetesObject>,
  );
  const activeAt = new Map<string, number>();
  /** Splits that ended without becoming Active (refused, failed): the bench stops on them. */
  const ended = new Map<string, string>();
  const seen = (object: KubernetesObject) => {
    const s = object as unknown as QueueSplit;
    if (s.status?.phase === 'Active' && !activeAt.has(s.metadata.name))
      activeAt.set(s.metadata.name, Date.now());
    // Stopped and Degraded can be passing states (a status written before the route is in the state).
    if (['Rejected', 'Failed'].includes(s.status?.phase ?? ''))
      ended.set(s.metadata.name, `${s.status?.phase}: ${s.status?.conditions?.[0]?.message ?? ''}`);
  };
  informer.on('add', seen);
  informer.on('update', seen);
  informer.on('error', () => setTimeout(() => void informer.start(), 500));
  return { informer, activeAt, ended, count: () => informer.list().length };
}

/** Runs `fn` over `items`, `n` at a time. */
async function eachLimit<T>(items: readonly T[], n: number, fn: (item: T) => Promise<void>): Promise<void> {
  let next = 0;
  await Promise.all(
    Array.from({ length: Math.min(n, items.length) }, async () => {
      while (next < items.length) await fn(items[next++]!);
    }),
  );
}

async function measure(
  kc: KubeConfig,
  bundle: string,
  namespace: string,
  proxy: CountingProxy,
  kubeconfig: string,
) {
  const standIn = new AgentStandIn(kc, namespace);
  await standIn.start();
  const watch = watchActive(kc, namespace);
  await watch.informer.start();
  const controller = startController(bundle, kubeconfig, [NO_NODE, LEADER_LEASE]);
  /** Stops a wait at once when the controller under test has exited (its log says why). */
  const controllerExited = () => {
    if (controller.child.exitCode !== null || controller.child.signalCode !== null)
      throw new Error(
        `the controller under test exited (${controller.child.exitCode ?? controller.child.signalCode}); log: ${controller.log}`,
      );
  };
  running = controller;
  const pid = controller.child.pid!;
  const custom = kc.makeApiClient(CustomObjectsApi);
  let renewer: NodeJS.Timeout | undefined;
  try {
    // One split: route id and creation time.
    const created = new Map<string, { routeId: string; at: number }>();
    const create = async (w: number, s: number | string) => {
      const split = await createSplit(kc, namespace, {
        workload: `scale-app-${w}`,
        queues: ['orders'],
        filter: { 'x-queue-split-user': `dev-${w}-${s}` },
        owner: `dev-${s}`,
        leaseSeconds: LEASE_SECONDS,
      });
      created.set(split.metadata.name, { routeId: split.spec.routeId, at: Date.now() });
      renewedAt.set(split.metadata.name, Date.now());
    };
    // Each split's lease renewed every third of it, as its sidecar does (sidecar/split.ts
    // LeaseKeeper): a spec change the controller sees on every split, steady or not.
    const renewedAt = new Map<string, number>();
    let renewing = false;
    renewer = setInterval(() => {
      if (renewing) return;
      renewing = true;
      const due = [...renewedAt].filter(([, at]) => Date.now() - at >= (LEASE_SECONDS * 1000) / 3);
      void eachLimit(due, 8, async ([name]) => {
        renewedAt.set(name, Date.now());
        await custom
          .patchNamespacedCustomObject(
            {
              ...queueSplitApi,
              namespace,
              name,
              body: {
                spec: { lease: { renewTime: new Date().toISOString(), durationSeconds: LEASE_SECONDS } },
              },
            },
            mergePatch,
          )
          .catch(() => undefined);
      }).finally(() => (renewing = false));
    }, 1000);
    const allActive = async (names: string[]) => {
      const deadline = Date.now() + 1_800_000;
      for (;;) {
        const bad = names.find((n) => watch.ended.has(n) && !watch.activeAt.has(n));
        if (bad) throw new Error(`split ${bad} ended: ${watch.ended.get(bad)}`);
        if (names.every((n) => watch.activeAt.has(n))) return;
        controllerExited();
        if (Date.now() > deadline) throw new Error(`${names.length} splits not Active within 30 min`);
        await new Promise((r) => setTimeout(r, 100));
      }
    };
    // (1) activation: one split per workload.
    const activation = await phase(pid, proxy, async () => {
      await eachLimit(
        Array.from({ length: W }, (_, w) => w),
        16,
        (w) => create(w, 0),
      );
      await allActive([...created.keys()]);
    });
    const firstSplits = [...created.keys()];
    await new Promise((r) => setTimeout(r, 5_000)); // the activations' last status writes settle
    // (2) the attach burst: every other split at once.
    const pairs = Array.from({ length: W }, (_, w) =>
      Array.from({ length: S - 1 }, (_, s) => [w, s + 1] as const),
    ).flat();
    const attach = await phase(pid, proxy, async () => {
      await eachLimit(pairs, 16, ([w, s]) => create(w, s));
      await allActive([...created.keys()]);
    });
    const attached = [...created.keys()].filter((n) => !firstSplits.includes(n));
    const toAck = attached.map((n) => standIn.ackedAt.get(created.get(n)!.routeId)! - created.get(n)!.at);
    const toDesired = attached.map(
      (n) => standIn.desiredAt.get(created.get(n)!.routeId)! - created.get(n)!.at,
    );
    const desiredToAck = attached.map((n) => {
      const routeId = created.get(n)!.routeId;
      return standIn.ackedAt.get(routeId)! - standIn.desiredAt.get(routeId)!;
    });
    const toActive = attached.map((n) => watch.activeAt.get(n)! - created.get(n)!.at);
    await new Promise((r) => setTimeout(r, 5_000));
    // (3) steady.
    const steady = await phase(pid, proxy, () => new Promise((r) => setTimeout(r, STEADY_SECONDS * 1000)));
    // (4) single attaches at scale: one more split at a time on a loaded controller, as a developer
    // starting a split while the other 1,000 run.
    const singles: number[] = [];
    for (let i = 0; i < SINGLES; i++) {
      const before = new Set(created.keys());
      await create((i * 7) % W, `single-${i}`);
      const name = [...created.keys()].find((n) => !before.has(n))!;
      await allActive([name]);
      singles.push(standIn.ackedAt.get(created.get(name)!.routeId)! - created.get(name)!.at);
    }
    const leases =
      [...steady.counts].filter(([k]) => k.endsWith(' leases')).reduce((a, [, v]) => a + v, 0) /
      steady.phase.seconds;
    // Handback: every split deleted; done once no state ConfigMap is left.
    renewedAt.clear();
    const t0 = performance.now();
    await eachLimit([...created.keys()], 16, async (name) => {
      await custom.deleteNamespacedCustomObject({ ...queueSplitApi, namespace, name });
    });
    await pollUntil(
      'every split gone and every workload handed back',
      async () => {
        const splits = watch.count();
        const states = (
          await kc
            .makeApiClient(CoreV1Api)
            .listNamespacedConfigMap({ namespace, labelSelector: 'queuesplit.dev/state=true' })
        ).items.length;
        return splits + states;
      },
      (n) => n === 0,
      1_800_000,
    );
    const handbackSeconds = +((performance.now() - t0) / 1000).toFixed(1);
    clearInterval(renewer);
    const byKind = (counts: Map<string, number>, seconds: number) =>
      Object.fromEntries(
        [...counts].sort(([, a], [, b]) => b - a).map(([k, v]) => [k, +(v / seconds).toFixed(2)]),
      );
    const row: Row = {
      bundle,
      activation: {
        ...activation.phase,
        byKind: byKind(activation.counts, activation.phase.seconds),
        toActiveMs: ms(firstSplits.map((n) => watch.activeAt.get(n)! - created.get(n)!.at)),
      },
      attach: {
        ...attach.phase,
        byKind: byKind(attach.counts, attach.phase.seconds),
        splits: attached.length,
        toAckMs: ms(toAck),
        toDesiredMs: ms(toDesired),
        desiredToAckMs: ms(desiredToAck),
        toActiveMs: ms(toActive),
      },
      steady: {
        ...steady.phase,
        byKind: byKind(steady.counts, steady.phase.seconds),
        leasesPerSecond: +leases.toFixed(2),
        perWorkload: +((steady.phase.requestsPerSecond - leases) / W).toFixed(4),
      },
      singleToAckMs: ms(singles),
      handbackSeconds,
    };
    return row;
  } finally {
    clearInterval(renewer);
    await controller.stop();
    await watch.informer.stop();
    await standIn.stop();
    console.log(`  controller log: ${controller.log}`);
  }
}

/** The controller under test now, stopped if the bench is stopped (a timeout's SIGTERM). */
let running: ReturnType<typeof startController> | undefined;

async function main(): Promise<void> {
  const bench = benchRun('controller-scale');
  const kc = adminConfig(services.kubeconfig);
  // Stopped from outside: the installed controller back as it was, before anything else.
  process.once('SIGTERM', () => {
    console.log('stopped: restoring the installed controller');
    void (running?.stop() ?? Promise.resolve())
      .then(() => scaleInstalledController(kc, testInstall.replicas))
      .finally(() => process.exit(1));
  });
  await installController(kc);
  const namespace = await createNamespace(kc, 'qs-bench-scale');
  const apps = kc.makeApiClient(AppsV1Api);
  // Never read by anyone: the stand-in plays the agents (no broker is touched).
  await createSecret(kc, namespace, 'amqp', { url: services.inCluster.amqpUrl });
  await eachLimit(
    Array.from({ length: W }, (_, i) => i),
    16,
    async (i) => {
      await apps.createNamespacedDeployment({
        namespace,
        body: fixtureDeployment({
          name: `scale-app-${i}`,
          image: 'queuesplit/fixture-rabbitmq-consumer',
          replicas: 0,
          annotations: { [QUEUE_CONFIG_ANNOTATION]: rabbitDeclaration },
          env: [
            { name: 'AMQP_URL', valueFrom: { secretKeyRef: { name: 'amqp', key: 'url' } } },
            { name: 'RABBITMQ_MANAGEMENT_URL', value: services.inCluster.rabbitManagementUrl },
            { name: 'SOURCE_QUEUE', value: uniqueName(`scale-${i}`) },
          ],
        }),
      });
    },
  );
  const proxy = await countingProxy(kc.getCurrentCluster()!.server);
  const kubeconfig = await proxiedControllerKubeconfig(kc, proxy, 'controller-scale');
  const rows: Row[] = [];
  await scaleInstalledController(kc, 0);
  try {
    for (const bundle of bundles) {
      rows.push(await measure(kc, bundle, namespace, proxy, kubeconfig.path));
      console.log(`  row: ${JSON.stringify(rows.at(-1))}`); // kept if a later bundle does not finish
    }
  } finally {
    await scaleInstalledController(kc, testInstall.replicas);
    proxy.close();
    await deleteNamespace(kc, namespace);
    kubeconfig.remove();
  }
  console.log(
    `controller at scale: ${W} workloads × ${S} splits = ${W * S} splits, agents played by a stand-in`,
  );
  console.log(
    'bundle                          phase        s   req/s  cpu s  cpu/wall  max RSS MiB   created→ack ms (med/p99/max)   created→Active ms (med/p99/max)',
  );
  const t = (xs: ReturnType<typeof ms>) => `${xs.median}/${xs.p99}/${xs.max}`;
  for (const r of rows) {
    const name = r.bundle.slice(-30).padEnd(30);
    const line = (label: string, p: Phase, ack: string, active: string) =>
      console.log(
        `${name}  ${label.padEnd(10)} ${String(p.seconds).padStart(5)} ${String(p.requestsPerSecond).padStart(7)} ${String(p.cpuSeconds).padStart(6)} ${String(p.cpuShare).padStart(9)} ${String(p.maxRssMiB).padStart(12)}   ${ack.padStart(28)}   ${active.padStart(31)}`,
      );
    line('activation', r.activation, '', t(r.activation.toActiveMs));
    line('attach', r.attach, t(r.attach.toAckMs), t(r.attach.toActiveMs));
    console.log(
      `${name}  attach ack, its parts: created→desired document ${t(r.attach.toDesiredMs)} ms (controller), desired→ack ${t(r.attach.desiredToAckMs)} ms (stand-in)`,
    );
    line('steady', r.steady, '', '');
    console.log(`${name}  single attach (${SINGLES}, one at a time): created→ack ms ${t(r.singleToAckMs)}`);
    console.log(
      `${name}  steady: ${r.steady.leasesPerSecond} req/s leader Lease, ${r.steady.perWorkload} req/s per workload besides; handback of all ${W}: ${r.handbackSeconds} s`,
    );
  }
  for (const r of rows)
    console.log(
      `  ${r.bundle}: attach ${JSON.stringify(r.attach.byKind)}; steady ${JSON.stringify(r.steady.byKind)}`,
    );
  bench.finish({
    bench: 'controller-scale',
    workloads: W,
    splitsPerWorkload: S,
    steadySeconds: STEADY_SECONDS,
    rows,
  });
  process.exit(0);
}

void main();
