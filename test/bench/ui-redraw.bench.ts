// The extension host's CPU while a split delivers 1,000 messages a second (issue 32): what the
// views cost when every `delivered` line redraws them (before) against redraws coalesced to
// SESSION_CHANGE_INTERVAL_MS, the tree redrawing only the split's route rows (after). One
// process stands in for the extension host, and runs in it:
//   - the extension's real SessionManager (extension/sidecar/splitSessions.ts) starting a split
//     through its real SidecarLauncher and SidecarProcess: the child it spawns is
//     test/bench/support/deliveringSidecar.mjs instead of dist/sidecar.js, which writes the real
//     line protocol (core/sidecarProtocol.ts), one `delivered` line per message, 1,000 a second
//     (the child's own CPU is not counted: it is the sidecar's, another process);
//   - the real Queue Splits tree provider (extension/tree/provider.ts, model/tree.ts), status
//     bar (extension/statusBar.ts) and blocked-message context key (commands/blockedMessage.ts),
//     on a namespace of 6 workloads, 12 queues and 13 splits (12 teammates' and mine), the tree
//     open and fully expanded;
//   - VS Code's extension-host side of a tree view and a status bar item, done as VS Code
//     1.100.3 does it (test/bench/support/vscodeStandIn.ts: the tree's 200 ms debounce, the
//     refetch of a whole tree or of single elements, items serialized for the renderer).
// Not included: the details document (extension/details.ts is being replaced by a webview, which
// subscribes to the same coalesced SessionManager.onDidChange), the IPC to the renderer and
// everything the renderer does, the Kubernetes API (a stand-in ClusterService answers with the
// namespace above), notifications (none are raised by `delivered` lines).
// Configurations, interleaved in each round, each a fresh manager + views + sidecar:
//   floor      the sessions alone, no view subscribed: reading and folding the lines
//   before     coalesceMs 0 (a change per line, as before) and the tree redrawn whole
//   coalesced  the coalesced changes, the tree still redrawn whole
//   after      the coalesced changes, only the split's route row redrawn (the shipped default)
// After one unmeasured run of each, per run: 1 s to settle, then CPU (process.cpuUsage, user + system) over the measured seconds.
//
//   npx tsx test/bench/ui-redraw.bench.ts [seconds-per-run] [rounds] [lines-per-second]
//
// Prints a table and one JSON line. Bounded: stops starting rounds after 150 s.
import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';
import { median } from './stats';
import * as vscodeStandIn from './support/vscodeStandIn';
import { split, workload } from '../unit/extension/fixtures';
import { benchRun } from './support/benchRun';

vscodeStandIn.install();

const seconds = Number(process.argv[2] ?? 4);
const rounds = Number(process.argv[3] ?? 3);
const rate = Number(process.argv[4] ?? 1000);
const budgetMs = 150_000;
const SETTLE_MS = 1000;
const OWNER = 'me';
const TARGET = { context: 'bench', namespace: 'team-a' };
const NAME = 'qs-split-me-orders';

type Config = 'floor' | 'before' | 'coalesced' | 'after';
const CONFIGS: Config[] = ['floor', 'before', 'coalesced', 'after'];

/** 6 workloads of 2 queues; a teammate's split of each queue, and mine of orders-app/orders. */
function namespace() {
  const names = ['orders-app', 'billing', 'shipping', 'catalog', 'search', 'notify'];
  const workloads = names.map((n) => workload(n, [`${n}-in`, `${n}-retry`]));
  workloads[0] = workload('orders-app', ['orders', 'orders-retry']);
  const splits = workloads.flatMap((w, i) =>
    w.queues.map((q, j) =>
      split({
        name: `qs-split-mate${i}${j}`,
        owner: `mate-${i}-${j}`,
        workload: w.name,
        queues: [q.name],
        phase: 'Active',
        queueStatus: [{ name: q.name, delivered: 10 * i + j, lag: 0 }],
      }),
    ),
  );
  splits.push(split({ name: NAME, owner: OWNER, queues: ['orders'], phase: 'Active' }));
  return { workloads, splits, loading: false };
}

/** The ClusterService as the views and the session manager use it, on the namespace above. */
function clusterStandIn(state: ReturnType<typeof namespace>) {
  const none = () => ({ dispose: () => undefined });
  const watch = { current: state, onChange: none };
  const api = {
    target: TARGET,
    connection: { kubeconfigPath: undefined },
    probe: async () => ({ state: 'ready' as const }),
    listSplits: async () => [],
    createSplit: async () => state.splits.at(-1)!,
    getSplit: async () => undefined,
    deleteSplit: async () => undefined,
  };
  return {
    api: async () => api,
    kube: async () => ({ sessionPreflight: async () => undefined }),
    owner: async () => OWNER,
    knownOwner: OWNER,
    currentWatch: watch,
    holdWatch: async () => ({ watch, release: () => undefined }),
    onDidChangeTarget: none,
    onDidChangeOwner: none,
    onDidChangeWatch: none,
  };
}

interface Run {
  config: Config;
  cpuMsPerSecond: number;
  linesPerSecond: number;
  changesPerSecond: number;
  treeFullRefreshesPerSecond: number;
  treeElementRefreshesPerSecond: number;
  treeItemsPerSecond: number;
  statusBarEntriesPerSecond: number;
}

async function run(config: Config, storage: string, measureSeconds = seconds): Promise<Run> {
  const { SessionManager } = await import('../../extension/sidecar/splitSessions');
  const { SplitsTreeProvider } = await import('../../extension/tree/provider');
  const { registerStatusBar } = await import('../../extension/statusBar');
  const { registerBlockedContext } = await import('../../extension/commands/blockedMessage');
  const { Notifier } = await import('../../extension/notifications');
  const { BrokerSecrets } = await import('../../extension/brokerSecrets');
  type Context = ConstructorParameters<typeof SessionManager>[0];
  type Cluster = ConstructorParameters<typeof SessionManager>[1];
  type Log = ConstructorParameters<typeof SessionManager>[2];
  type Services = Parameters<typeof registerBlockedContext>[0];

  const secrets = new Map<string, string>();
  const context = {
    globalStorageUri: { fsPath: storage },
    secrets: {
      store: async (k: string, v: string) => void secrets.set(k, v),
      get: async (k: string) => secrets.get(k),
      delete: async (k: string) => void secrets.delete(k),
    },
    globalState: { get: <V>(_key: string, fallback: V) => fallback, update: async () => undefined },
    asAbsolutePath: (p: string) =>
      p === path.join('dist', 'sidecar.js') ? path.join(__dirname, 'support', 'deliveringSidecar.mjs') : p,
  } as unknown as Context; // the members SessionManager and SidecarLauncher use
  const quiet = () => undefined;
  const log = { info: quiet, warn: quiet, error: quiet, debug: quiet, trace: quiet } as unknown as Log;
  const cluster = clusterStandIn(namespace()) as unknown as Cluster; // the members the views use
  const notifier = new Notifier(log);
  const sessions = new SessionManager(context, cluster, log, notifier, new BrokerSecrets(context, notifier), {
    coalesceMs: config === 'before' ? 0 : undefined,
  });
  const disposables: { dispose(): unknown }[] = [sessions];
  let views: vscodeStandIn.TreeViewStandIn<unknown> | undefined;
  if (config !== 'floor') {
    const tree = new SplitsTreeProvider(cluster, sessions, log, notifier, {
      redraw: config === 'after' ? 'route' : 'tree',
    });
    disposables.push(tree, tree.createView('queueSplit.splits'));
    disposables.push(...registerStatusBar(cluster, sessions));
    disposables.push(registerBlockedContext({ sessions, log, notifier, cluster, context } as Services));
    views = vscodeStandIn.treeViews.at(-1);
    await views!.open();
  }
  let changes = 0;
  disposables.push(sessions.onDidChange(() => changes++));

  process.env.QS_BENCH_LINES_PER_SECOND = String(rate);
  process.env.QS_BENCH_SPLIT = NAME;
  const session = await sessions.ensure({
    target: TARGET,
    workload: { kind: 'Deployment', name: 'orders-app' },
    queues: ['orders'],
    filter: { 'x-queue-split-user': OWNER },
    owner: OWNER,
    mode: 'http',
    httpTarget: 'http://127.0.0.1:8080/',
  });
  await session.ready;
  await sleep(SETTLE_MS);

  const delivered = () => Object.values(session.view.delivered).reduce((a, b) => a + b, 0);
  vscodeStandIn.counters.reset();
  changes = 0;
  const lines0 = delivered();
  const cpu0 = process.cpuUsage();
  const t0 = performance.now();
  await sleep(measureSeconds * 1000);
  const cpu = process.cpuUsage(cpu0);
  const wall = (performance.now() - t0) / 1000;
  const c = vscodeStandIn.counters;
  const result: Run = {
    config,
    cpuMsPerSecond: (cpu.user + cpu.system) / 1000 / wall,
    linesPerSecond: (delivered() - lines0) / wall,
    changesPerSecond: changes / wall,
    treeFullRefreshesPerSecond: c.treeFullRefreshes / wall,
    treeElementRefreshesPerSecond: c.treeElementRefreshes / wall,
    treeItemsPerSecond: c.treeItemsSent / wall,
    statusBarEntriesPerSecond: c.statusBarEntriesSent / wall,
  };

  await session.process.stop(5_000);
  await views?.idle();
  for (const d of disposables.reverse()) d.dispose();
  views?.dispose();
  return result;
}

async function main(): Promise<void> {
  const recorder = benchRun('ui-redraw');
  const storage = fs.mkdtempSync(path.join(os.tmpdir(), 'qs-bench-redraw-'));
  const started = Date.now();
  const runs: Run[] = [];
  try {
    // Unmeasured: the first run pays for loading and compiling the modules.
    for (const config of CONFIGS) await run(config, storage, 0.5);
    for (let round = 0; round < rounds && Date.now() - started < budgetMs; round++) {
      // Each round in another order: no configuration always follows the same one.
      const order = CONFIGS.map((_, i) => CONFIGS[(i + round) % CONFIGS.length]!);
      for (const config of order) runs.push(await run(config, storage));
    }
  } finally {
    fs.rmSync(storage, { recursive: true, force: true });
  }

  const of = (config: Config, key: Exclude<keyof Run, 'config'>) =>
    median(runs.filter((r) => r.config === config).map((r) => r[key]));
  const before = of('before', 'cpuMsPerSecond');
  const floor = of('floor', 'cpuMsPerSecond');
  const n = (x: number, w = 8, d = 1) => x.toFixed(d).padStart(w);
  console.log(
    `${rate} delivered lines/s for ${seconds} s per run, ${runs.length / CONFIGS.length} rounds; node ${process.version}; ${os.cpus().length} CPUs`,
  );
  console.log(
    'extension host (stand-in), medians   CPU ms/s  vs before  above floor  lines/s  changes/s  tree: whole/s  rows/s  items/s  status bar/s',
  );
  const rows = CONFIGS.map((config) => {
    const cpu = of(config, 'cpuMsPerSecond');
    console.log(
      `${config.padEnd(36)} ${n(cpu)}  ${n(cpu / before, 9, 2)}  ${n(cpu - floor, 11)}  ${n(of(config, 'linesPerSecond'), 7, 0)}  ${n(of(config, 'changesPerSecond'), 9)}  ${n(of(config, 'treeFullRefreshesPerSecond'), 13)}  ${n(of(config, 'treeElementRefreshesPerSecond'), 6)}  ${n(of(config, 'treeItemsPerSecond'), 7, 0)}  ${n(of(config, 'statusBarEntriesPerSecond'), 12)}`,
    );
    return {
      config,
      cpuMsPerSecond: Number(cpu.toFixed(1)),
      vsBefore: Number((cpu / before).toFixed(2)),
      aboveFloorMsPerSecond: Number((cpu - floor).toFixed(1)),
      linesPerSecond: Math.round(of(config, 'linesPerSecond')),
      changesPerSecond: Number(of(config, 'changesPerSecond').toFixed(1)),
      treeFullRefreshesPerSecond: Number(of(config, 'treeFullRefreshesPerSecond').toFixed(1)),
      treeRowRefreshesPerSecond: Number(of(config, 'treeElementRefreshesPerSecond').toFixed(1)),
      treeItemsPerSecond: Math.round(of(config, 'treeItemsPerSecond')),
      statusBarEntriesPerSecond: Number(of(config, 'statusBarEntriesPerSecond').toFixed(1)),
    };
  });
  const after = of('after', 'cpuMsPerSecond');
  console.log(
    `after vs before: ${(after / before).toFixed(2)} of the CPU; the views' share (above the floor) ${((after - floor) / (before - floor)).toFixed(2)}`,
  );
  recorder.finish({
    bench: 'ui-redraw',
    node: process.version,
    linesPerSecond: rate,
    secondsPerRun: seconds,
    rounds: runs.length / CONFIGS.length,
    afterVsBefore: Number((after / before).toFixed(2)),
    viewsShareAfterVsBefore: Number(((after - floor) / (before - floor)).toFixed(2)),
    configs: rows,
  });
}

main().then(
  () => process.exit(0),
  (err: unknown) => {
    console.error(err);
    process.exit(1);
  },
);
