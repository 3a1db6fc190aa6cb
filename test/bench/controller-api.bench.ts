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
// second, per workload, and the rate extrapolated to 200 workloads (per-workload costs are
// linear in N; the real node runs at most ~25 agents). Prints a table and one JSON line.
import { spawn } from 'node:child_process';
import * as fs from 'node:fs';
import * as http from 'node:http';
import * as https from 'node:https';
import type { AddressInfo } from 'node:net';
import * as os from 'node:os';
import * as path from 'node:path';
import { AppsV1Api, KubeConfig } from '@kubernetes/client-node';
import { stringify } from 'yaml';
import * as amqp from 'amqplib';
import { installController, testInstall } from '../../deploy/install';
import { restrictedKubeconfig } from '../env/k8s/kubeconfig';
import { repoRoot, runDir } from '../env/paths';
import { adminConfig, createNamespace, deleteNamespace, fixtureDeployment } from '../support/kube';
import { pollUntil } from '../support/poll';
import { rabbitDeclaration } from '../support/rabbitSplit';
import { createSecret } from '../support/secrets';
import { loadServices, uniqueName } from '../support/services';
import { createSplit, deleteSplit, getSplit, waitForSplitGone } from '../support/splits';
import { QUEUE_CONFIG_ANNOTATION } from '../../core/queueConfig/schema';

const N = Number(process.argv[2] ?? 20);
const SECONDS = Number(process.argv[3] ?? 60);
const bundles =
  process.argv.slice(4).length > 0 ? process.argv.slice(4) : [path.join(repoRoot, 'dist', 'agent.js')];
const services = loadServices();
const caFile = path.join(runDir, 'k8s', 'pki', 'ca.crt');

/** An http proxy to the API server that counts requests by verb and resource. */
async function countingProxy(apiServer: string): Promise<{
  url: string;
  counts: Map<string, number>;
  close: () => void;
}> {
  const upstream = new URL(apiServer);
  const ca = fs.readFileSync(caFile);
  const counts = new Map<string, number>();
  const server = http.createServer((req, res) => {
    const url = new URL(req.url ?? '/', 'http://x');
    // /api/v1[/namespaces/x]/plural[/name[/sub]] or /apis/group/version[/namespaces/x]/plural[...]
    const segments = url.pathname
      .replace(/\/namespaces\/[^/]+/, '')
      .split('/')
      .filter(Boolean);
    const rest = segments.slice(segments[0] === 'api' ? 2 : 3);
    const resource = [rest[0], rest[2]].filter(Boolean).join('/');
    const verb = url.searchParams.get('watch') === 'true' ? 'WATCH' : (req.method ?? 'GET');
    const key = `${verb} ${resource}`;
    counts.set(key, (counts.get(key) ?? 0) + 1);
    const out = https.request(
      {
        host: upstream.hostname,
        port: upstream.port,
        method: req.method,
        path: req.url,
        headers: { ...req.headers, host: upstream.host },
        ca,
      },
      (reply) => {
        res.writeHead(reply.statusCode ?? 502, reply.headers);
        res.flushHeaders(); // a watch may send nothing for a while: its client waits for the headers
        reply.pipe(res);
      },
    );
    out.on('error', () => res.destroy());
    req.pipe(out);
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  return {
    url: `http://127.0.0.1:${(server.address() as AddressInfo).port}`,
    counts,
    close: () => server.close(),
  };
}

async function scaleController(kc: KubeConfig, replicas: number): Promise<void> {
  await kc.makeApiClient(AppsV1Api).replaceNamespacedDeploymentScale({
    name: 'queuesplit-controller',
    namespace: testInstall.namespace,
    body: {
      metadata: { name: 'queuesplit-controller', namespace: testInstall.namespace },
      spec: { replicas },
    },
  });
}

interface Row {
  bundle: string;
  requestsPerSecond: number;
  perWorkload: number;
  at200: number;
  byKind: Record<string, number>;
}

async function measure(
  kc: KubeConfig,
  bundle: string,
  namespace: string,
  kubeconfig: string,
  proxy: Awaited<ReturnType<typeof countingProxy>>,
): Promise<Row> {
  const log = fs.openSync(path.join(os.tmpdir(), `qs-bench-controller-${Date.now()}.log`), 'w');
  const child = spawn(
    process.execPath,
    [
      bundle,
      'controller',
      `--namespace=${testInstall.namespace}`,
      `--agent-image=${testInstall.image}`,
      ...testInstall.extraArgs.filter((a) => !a.startsWith('--health-port')),
      '--health-port=0',
    ],
    {
      env: { ...process.env, KUBECONFIG: kubeconfig, POD_NAMESPACE: testInstall.namespace },
      stdio: ['ignore', log, log],
    },
  );
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
    for (const s of splits) await deleteSplit(kc, namespace, s);
    for (const s of splits) await waitForSplitGone(kc, namespace, s, 600_000);
    return {
      bundle,
      requestsPerSecond: +total.toFixed(2),
      perWorkload: +(total / N).toFixed(3),
      at200: +((total / N) * 200).toFixed(1),
      byKind,
    };
  } finally {
    child.kill('SIGTERM');
    await new Promise((r) => child.once('exit', r));
    fs.closeSync(log);
  }
}

async function main(): Promise<void> {
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
  const tokenFile = path.join(runDir, `kubeconfig-bench-controller`);
  await restrictedKubeconfig(kc, testInstall.namespace, 'queuesplit-controller', caFile, tokenFile);
  const kubeconfig = path.join(runDir, `kubeconfig-bench-controller-proxied`);
  // The controller's own token, through the proxy (plain http on loopback).
  const sa = new KubeConfig();
  sa.loadFromFile(tokenFile);
  const token = sa.getCurrentUser()?.token;
  if (!token) throw new Error(`${tokenFile} has no token`);
  fs.writeFileSync(
    kubeconfig,
    stringify({
      apiVersion: 'v1',
      kind: 'Config',
      // client-node takes an http server only with this set; the proxy itself verifies the API server.
      clusters: [{ name: 'proxy', cluster: { server: proxy.url, 'insecure-skip-tls-verify': true } }],
      users: [{ name: 'controller', user: { token } }],
      contexts: [
        {
          name: 'proxy',
          context: { cluster: 'proxy', user: 'controller', namespace: testInstall.namespace },
        },
      ],
      'current-context': 'proxy',
    }),
    { mode: 0o600 },
  );
  const rows: Row[] = [];
  await scaleController(kc, 0);
  try {
    for (const bundle of bundles) rows.push(await measure(kc, bundle, namespace, kubeconfig, proxy));
  } finally {
    await scaleController(kc, testInstall.replicas);
    proxy.close();
    await conn.close().catch(() => undefined);
    await deleteNamespace(kc, namespace);
    for (const f of [tokenFile, kubeconfig]) fs.rmSync(f, { force: true });
  }
  console.log(`controller API requests, ${N} split workloads steady (Active), ${SECONDS} s window`);
  console.log('bundle                                          req/s   per workload   at 200 workloads');
  for (const r of rows)
    console.log(
      `${r.bundle.slice(-46).padEnd(46)} ${String(r.requestsPerSecond).padStart(7)}   ${String(r.perWorkload).padStart(12)}   ${String(r.at200).padStart(16)}`,
    );
  for (const r of rows) console.log(`  ${r.bundle}: ${JSON.stringify(r.byKind)}`);
  console.log(JSON.stringify({ bench: 'controller-api', workloads: N, seconds: SECONDS, rows }));
  process.exit(0);
}

void main();
