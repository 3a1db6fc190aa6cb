// The local Kubernetes control plane: etcd, kube-apiserver (RBAC on, loopback, local PKI),
// kube-controller-manager and kube-scheduler, all built from the Go module proxy by build.sh
// and cached by version. Pods run on the real node that env:up joins to it (node/node.sh).
import { execFileSync, spawn } from 'node:child_process';
import * as fs from 'node:fs';
import * as https from 'node:https';
import * as path from 'node:path';
import { runDir } from '../paths';
import { logFileOf, portOpen, runningPid, startDetached, stop, waitFor } from '../processes';
import { apiServerUrl, writeAdminKubeconfig } from './kubeconfig';
import { ensurePki, type Pki } from './pki';

const home = path.join(runDir, 'k8s');
export const adminKubeconfig = path.join(runDir, 'kubeconfig');
const ports = { etcd: 2379, etcdPeer: 2380, apiserver: 6443, controllerManager: 10257, scheduler: 10259 };

/**
 * Where one etcd + kube-apiserver pair lives: the shared environment's (below), or a private
 * pair a test may pause or kill without touching anybody else's (test/support/privateApiServer.ts).
 */
export interface ApiServerLayout {
  /** Prefix of the process names (pid and log files): '' for the shared pair. */
  prefix: string;
  /** Working directory; etcd keeps its data in `<home>/etcd`. */
  home: string;
  ports: { etcd: number; etcdPeer: number; apiserver: number };
  pki: Pki;
}

export const etcdName = (layout: ApiServerLayout) => `${layout.prefix}etcd`;
export const apiServerName = (layout: ApiServerLayout) => `${layout.prefix}kube-apiserver`;

/**
 * Runs build.sh (a no-op when cached) and returns the directory holding the binaries. Async on
 * purpose: the brokers start concurrently and their readiness checks need the event loop.
 */
export async function binaries(): Promise<string> {
  const child = spawn('bash', [path.join(__dirname, 'build.sh')], { stdio: ['ignore', 'pipe', 'inherit'] });
  let out = '';
  child.stdout.on('data', (chunk: Buffer) => (out += chunk.toString()));
  const code = await new Promise<number | null>((resolve) => child.once('close', resolve));
  if (code !== 0)
    throw new Error(`k8s: test/env/k8s/build.sh failed with exit ${code}; its output is above.`);
  const dir = out.trim().split('\n').pop() ?? '';
  if (!fs.existsSync(path.join(dir, 'kube-apiserver'))) {
    throw new Error(`k8s: build.sh did not produce binaries (last line: ${dir})`);
  }
  return dir;
}

function get(url: string, pki: Pki): Promise<{ status: number; body: string }> {
  return new Promise((resolve, reject) => {
    const req = https.get(
      url,
      {
        ca: fs.readFileSync(pki.caCert),
        cert: fs.readFileSync(pki.adminCert),
        key: fs.readFileSync(pki.adminKey),
        timeout: 3000,
      },
      (res) => {
        let body = '';
        res.on('data', (c: Buffer) => (body += c.toString()));
        res.on('end', () => resolve({ status: res.statusCode ?? 0, body }));
      },
    );
    req.on('error', reject);
    req.on('timeout', () => req.destroy(new Error('timeout')));
  });
}

async function startOne(
  name: string,
  binary: string,
  args: string[],
  ready: () => Promise<boolean>,
  timeoutMs: number,
  cwd = home,
): Promise<void> {
  if (runningPid(name) !== undefined && (await ready().catch(() => false))) return;
  await stop(name); // a recorded but unhealthy process: replace it
  const proc = startDetached(name, binary, args, { cwd });
  await waitFor(name, ready, {
    timeoutMs,
    logFile: logFileOf(name),
    pid: proc.pid,
    hint: `See ${logFileOf(name)}; \`npm run env:down\` then \`npm run env:up\` starts it afresh.`,
  });
}

export async function startControlPlane(): Promise<Record<string, string>> {
  fs.mkdirSync(home, { recursive: true });
  const bin = await binaries();
  const pki = ensurePki(path.join(home, 'pki'));
  writeAdminKubeconfig(adminKubeconfig, pki);
  const version = execFileSync(path.join(bin, 'kube-apiserver'), ['--version'], { encoding: 'utf8' }).trim();

  await startEtcdAndApiServer(bin, {
    prefix: '',
    home,
    ports: { etcd: ports.etcd, etcdPeer: ports.etcdPeer, apiserver: ports.apiserver },
    pki,
  });

  const adminArgs = [
    `--kubeconfig=${adminKubeconfig}`,
    '--leader-elect=false',
    '--bind-address=127.0.0.1',
    '--profiling=false',
  ];
  await Promise.all([
    startOne(
      'kube-controller-manager',
      path.join(bin, 'kube-controller-manager'),
      [
        ...adminArgs,
        `--secure-port=${ports.controllerManager}`,
        `--service-account-private-key-file=${pki.saKey}`,
        `--root-ca-file=${pki.caCert}`,
        `--cluster-signing-cert-file=${pki.caCert}`,
        `--cluster-signing-key-file=${pki.caKey}`,
        '--use-service-account-credentials=true',
        // No cloud, no node IPAM: pods run on loopback.
        '--controllers=*,-nodeipam,-cloud-node-lifecycle,-service-lb-controller,-node-route-controller',
        // The HPA controller reconciles every second instead of every 15 so the autoscaled-workload
        // suite sees it act inside each handover window; HPAScaleToZero lets a test create the
        // minReplicas-0 HPA the controller refuses (test/cluster/autoscaled.test.ts).
        '--horizontal-pod-autoscaler-sync-period=1s',
        '--feature-gates=HPAScaleToZero=true',
      ],
      () => portOpen(ports.controllerManager),
      60_000,
    ),
    startOne(
      'kube-scheduler',
      path.join(bin, 'kube-scheduler'),
      [...adminArgs, `--secure-port=${ports.scheduler}`],
      () => portOpen(ports.scheduler),
      60_000,
    ),
  ]);
  console.log(
    `k8s: control plane ready (${version}) at ${apiServerUrl}; admin kubeconfig ${adminKubeconfig}`,
  );
  return { KUBECONFIG: adminKubeconfig, KUBERNETES_VERSION: version.replace(/^Kubernetes /, '') };
}

/** Starts (or keeps, when healthy) one etcd and the kube-apiserver on it, as `layout` places them. */
export async function startEtcdAndApiServer(bin: string, layout: ApiServerLayout): Promise<void> {
  const { ports, pki } = layout;
  fs.mkdirSync(layout.home, { recursive: true });
  for (const [name, port] of [
    [etcdName(layout), ports.etcd],
    [apiServerName(layout), ports.apiserver],
  ] as const) {
    if (runningPid(name) === undefined && (await portOpen(port))) {
      throw new Error(
        `k8s: port ${port} (${name}) is taken by a process this environment did not start; stop it first.`,
      );
    }
  }

  await startOne(
    etcdName(layout),
    path.join(bin, 'etcd'),
    [
      '--name=default',
      `--data-dir=${path.join(layout.home, 'etcd')}`,
      `--listen-client-urls=http://127.0.0.1:${ports.etcd}`,
      `--advertise-client-urls=http://127.0.0.1:${ports.etcd}`,
      `--listen-peer-urls=http://127.0.0.1:${ports.etcdPeer}`,
      `--initial-advertise-peer-urls=http://127.0.0.1:${ports.etcdPeer}`,
      `--initial-cluster=default=http://127.0.0.1:${ports.etcdPeer}`,
      '--listen-metrics-urls=',
      // Test data only: skipping fsync makes the API server several times faster here.
      '--unsafe-no-fsync',
      '--log-level=warn',
    ],
    async () => (await fetch(`http://127.0.0.1:${ports.etcd}/health`)).ok,
    30_000,
    layout.home,
  );

  await startOne(
    apiServerName(layout),
    path.join(bin, 'kube-apiserver'),
    [
      `--etcd-servers=http://127.0.0.1:${ports.etcd}`,
      '--bind-address=127.0.0.1',
      '--advertise-address=127.0.0.1',
      `--secure-port=${ports.apiserver}`,
      `--tls-cert-file=${pki.serverCert}`,
      `--tls-private-key-file=${pki.serverKey}`,
      `--client-ca-file=${pki.caCert}`,
      `--service-account-key-file=${pki.saPub}`,
      `--service-account-signing-key-file=${pki.saKey}`,
      '--service-account-issuer=https://kubernetes.default.svc.cluster.local',
      '--authorization-mode=RBAC',
      '--service-cluster-ip-range=10.96.0.0/16',
      '--allow-privileged=true',
      '--profiling=false',
      // An aggregated API (the test's external-metrics server) is reached at its endpoint's
      // address: this cluster runs no kube-proxy to route a Service's ClusterIP.
      '--enable-aggregator-routing=true',
      '--feature-gates=HPAScaleToZero=true',
      '--v=1',
    ],
    async () => (await get(`https://127.0.0.1:${ports.apiserver}/readyz`, pki)).status === 200,
    120_000,
    layout.home,
  );
}

export async function stopControlPlane(): Promise<void> {
  await Promise.all([stop('kube-scheduler'), stop('kube-controller-manager')]);
  await stopEtcdAndApiServer({ prefix: '' });
}

export async function stopEtcdAndApiServer(layout: Pick<ApiServerLayout, 'prefix'>): Promise<void> {
  await stop(`${layout.prefix}kube-apiserver`, 30_000);
  await stop(`${layout.prefix}etcd`);
}
