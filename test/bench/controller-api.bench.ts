// API requests the controller makes with many split workloads, measured on
// the test environment (`npm run env:up`): the installed controller is scaled to 0 and the
// controller under test runs as a local process with the controller's ServiceAccount token,
// through a counting proxy to the API server. N workloads (0 replicas: no app pods) each get one
// QueueSplit; once every split is Active (N real queue-agents on the real node), requests are
// counted for a steady window. Each watch or list-and-watch counts once when opened.
//
//   npx tsx test/bench/controller-api.bench.ts [workloads] [seconds] [agent.js ...]
//
// Several agent bundles (e.g. a baseline build's dist/agent.js, then this one) run one after the
// other in this process against the same workloads; the table gives each one's requests per
// second, the leader Lease's share (one controller's, whatever N), the rest per workload, and
// the rate extrapolated to 200 workloads (per-workload costs are
// linear in N; the real node runs at most ~25 agents). Prints a table and one JSON line.
import * as path from 'node:path';
import { AppsV1Api, type KubeConfig } from '@kubernetes/client-node';
import * as amqp from 'amqplib';
import { installController, testInstall } from '../../deploy/install';
import { repoRoot } from '../env/paths';
import { adminConfig, createNamespace, deleteNamespace, fixtureDeployment } from '../support/kube';
import { pollUntil } from '../support/poll';
import { rabbitDeclaration } from '../support/rabbitSplit';
import { createSecret } from '../support/secrets';
import { loadServices, uniqueName } from '../support/services';
import { benchRun } from './support/benchRun';
import { createSplit, deleteSplit, getSplit, waitForSplitGone } from '../support/splits';
import { QUEUE_CONFIG_ANNOTATION } from '../../core/queueConfig/schema';
import {
  countingProxy,
  proxiedControllerKubeconfig,
  scaleInstalledController,
  startController,
  type CountingProxy,
} from './support/controllerUnderTest';

const N = Number(process.argv[2] ?? 20);
const SECONDS = Number(process.argv[3] ?? 60);
const bundles =
  process.argv.slice(4).length > 0 ? process.argv.slice(4) : [path.join(repoRoot, 'dist', 'agent.js')];
const services = loadServices();

interface Row {
  bundle: string;
  requestsPerSecond: number;
  /** Lease requests: the leader's renewals, one controller's cost whatever the workloads. */
  leasesPerSecond: number;
  /** Everything but the Leases, per workload. */
  perWorkload: number;
  at200: number;
  byKind: Record<string, number>;
}

async function measure(
  kc: KubeConfig,
  bundle: string,
  namespace: string,
  kubeconfig: string,
  proxy: CountingProxy,
): Promise<Row> {
  const controller = startController(bundle, kubeconfig);
  try {
    const splits: string[] = [];
    for (let i = 0; i < N; i++) {
      const split = await createSplit(kc, namespace, {
        workload: `bench-app-${i}`,
        queues: ['orders'],
        filter: { 'x-queue-split-user': `bench-${i}` },
        owner: `bench-${i}`,
        leaseSeconds: 3600,
      });
      splits.push(split.metadata.name);
    }
    await pollUntil(
      `all ${N} splits Active`,
      async () =>
        (await Promise.all(splits.map((s) => getSplit(kc, namespace, s)))).filter(
          (s) => s?.status?.phase === 'Active',
        ).length,
      (n) => n === N,
      600_000,
    );
    await new Promise((r) => setTimeout(r, 5_000)); // statuses settle
    proxy.counts.clear();
    await new Promise((r) => setTimeout(r, SECONDS * 1000));
    const byKind = Object.fromEntries([...proxy.counts].map(([k, v]) => [k, +(v / SECONDS).toFixed(2)]));
    const total = [...proxy.counts.values()].reduce((a, b) => a + b, 0) / SECONDS;
    const leases =
      [...proxy.counts].filter(([k]) => k.endsWith(' leases')).reduce((a, [, v]) => a + v, 0) / SECONDS;
    for (const s of splits) await deleteSplit(kc, namespace, s);
    for (const s of splits) await waitForSplitGone(kc, namespace, s, 600_000);
    return {
      bundle,
      requestsPerSecond: +total.toFixed(2),
      leasesPerSecond: +leases.toFixed(2),
      perWorkload: +((total - leases) / N).toFixed(3),
      at200: +(leases + ((total - leases) / N) * 200).toFixed(1),
      byKind,
    };
  } finally {
    await controller.stop();
  }
}

async function main(): Promise<void> {
  const bench = benchRun('controller-api');
  const kc = adminConfig(services.kubeconfig);
  await installController(kc);
  const namespace = await createNamespace(kc, 'qs-bench-api');
  const conn = await amqp.connect(services.amqpUrl);
  const ch = await conn.createChannel();
  await createSecret(kc, namespace, 'amqp', { url: services.inCluster.amqpUrl });
  for (let i = 0; i < N; i++) {
    const source = uniqueName(`bench-api-${i}`);
    await ch.assertQueue(source, { durable: true });
    await kc.makeApiClient(AppsV1Api).createNamespacedDeployment({
      namespace,
      body: fixtureDeployment({
        name: `bench-app-${i}`,
        image: 'queuesplit/fixture-rabbitmq-consumer',
        replicas: 0,
        annotations: { [QUEUE_CONFIG_ANNOTATION]: rabbitDeclaration },
        env: [
          { name: 'AMQP_URL', valueFrom: { secretKeyRef: { name: 'amqp', key: 'url' } } },
          { name: 'RABBITMQ_MANAGEMENT_URL', value: services.inCluster.rabbitManagementUrl },
          { name: 'SOURCE_QUEUE', value: source },
        ],
      }),
    });
  }
  const proxy = await countingProxy(kc.getCurrentCluster()!.server);
  const kubeconfig = await proxiedControllerKubeconfig(kc, proxy, 'controller-api');
  const rows: Row[] = [];
  await scaleInstalledController(kc, 0);
  try {
    for (const bundle of bundles) rows.push(await measure(kc, bundle, namespace, kubeconfig.path, proxy));
  } finally {
    await scaleInstalledController(kc, testInstall.replicas);
    proxy.close();
    await conn.close().catch(() => undefined);
    await deleteNamespace(kc, namespace);
    kubeconfig.remove();
  }
  console.log(`controller API requests, ${N} split workloads steady (Active), ${SECONDS} s window`);
  console.log(
    'bundle                                          req/s   leases/s   per workload (no leases)   at 200 workloads',
  );
  for (const r of rows)
    console.log(
      `${r.bundle.slice(-46).padEnd(46)} ${String(r.requestsPerSecond).padStart(7)}   ${String(r.leasesPerSecond).padStart(8)}   ${String(r.perWorkload).padStart(24)}   ${String(r.at200).padStart(16)}`,
    );
  for (const r of rows) console.log(`  ${r.bundle}: ${JSON.stringify(r.byKind)}`);
  bench.finish({ bench: 'controller-api', workloads: N, seconds: SECONDS, rows });
  process.exit(0);
}

void main();
