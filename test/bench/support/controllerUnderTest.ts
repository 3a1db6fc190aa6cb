// A controller bundle run as a local process for a benchmark: the installed controller scaled to
// 0 meanwhile, the local one with the controller's own ServiceAccount token, talking to the API
// server through a proxy that counts its requests by verb and resource (a watch or a
// list-and-watch counts once, when opened). Used by the controller-*.bench.ts files.
import { spawn, type ChildProcess } from 'node:child_process';
import * as fs from 'node:fs';
import * as http from 'node:http';
import * as https from 'node:https';
import type { AddressInfo } from 'node:net';
import * as os from 'node:os';
import * as path from 'node:path';
import { AppsV1Api, CoreV1Api, KubeConfig } from '@kubernetes/client-node';
import { stringify } from 'yaml';
import { testInstall } from '../../../deploy/install';
import { restrictedKubeconfig } from '../../env/k8s/kubeconfig';
import { runDir } from '../../env/paths';
import { pollUntil } from '../../support/poll';

const caFile = path.join(runDir, 'k8s', 'pki', 'ca.crt');

export interface CountingProxy {
  url: string;
  /** `VERB resource[/subresource]` → requests since the last clear. */
  counts: Map<string, number>;
  close: () => void;
}

/** An http proxy to the API server that counts requests by verb and resource. */
export async function countingProxy(apiServer: string): Promise<CountingProxy> {
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

/** Scales the installed controller; to 0, returns once its pods are gone (a terminating leader
 * still acts until its loop stops, and would start splits with its own agents). */
export async function scaleInstalledController(kc: KubeConfig, replicas: number): Promise<void> {
  const apps = kc.makeApiClient(AppsV1Api);
  const name = 'queuesplit-controller';
  const namespace = testInstall.namespace;
  await apps.replaceNamespacedDeploymentScale({
    name,
    namespace,
    body: { metadata: { name, namespace }, spec: { replicas } },
  });
  if (replicas > 0) return;
  const labels = (await apps.readNamespacedDeployment({ name, namespace })).spec?.selector.matchLabels ?? {};
  const labelSelector = Object.entries(labels)
    .map(([k, v]) => `${k}=${v}`)
    .join(',');
  await pollUntil(
    'the installed controller has no pods',
    async () =>
      (await kc.makeApiClient(CoreV1Api).listNamespacedPod({ namespace, labelSelector })).items.length,
    (n) => n === 0,
    120_000,
  );
}

/** A kubeconfig with the controller's ServiceAccount token, through `proxy` (plain http on
 * loopback); `remove` deletes the files. */
export async function proxiedControllerKubeconfig(
  kc: KubeConfig,
  proxy: CountingProxy,
  tag: string,
): Promise<{ path: string; remove: () => void }> {
  const tokenFile = path.join(runDir, `kubeconfig-bench-${tag}`);
  await restrictedKubeconfig(kc, testInstall.namespace, 'queuesplit-controller', caFile, tokenFile);
  const kubeconfig = path.join(runDir, `kubeconfig-bench-${tag}-proxied`);
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
  return {
    path: kubeconfig,
    remove: () => {
      for (const f of [tokenFile, kubeconfig]) fs.rmSync(f, { force: true });
    },
  };
}

/** Starts `bundle` as the controller (the test install's flags, `args` replacing those of the same
 * name); its log goes to a file in the temp directory. */
export function startController(
  bundle: string,
  kubeconfig: string,
  args: string[] = [],
): { child: ChildProcess; log: string; stop: () => Promise<void> } {
  const log = path.join(os.tmpdir(), `qs-bench-controller-${Date.now()}.log`);
  const fd = fs.openSync(log, 'w');
  const flag = (a: string) => a.split('=')[0];
  const overridden = new Set(['--health-port', ...args.map(flag)]);
  const child = spawn(
    process.execPath,
    [
      bundle,
      'controller',
      `--namespace=${testInstall.namespace}`,
      `--agent-image=${testInstall.image}`,
      ...testInstall.extraArgs.filter((a) => !overridden.has(flag(a))),
      '--health-port=0',
      ...args,
    ],
    {
      env: { ...process.env, KUBECONFIG: kubeconfig, POD_NAMESPACE: testInstall.namespace },
      stdio: ['ignore', fd, fd],
    },
  );
  return {
    child,
    log,
    stop: async () => {
      if (child.exitCode === null) {
        child.kill('SIGTERM');
        await new Promise((r) => child.once('exit', r));
      }
      fs.closeSync(fd);
    },
  };
}

/** A process's CPU time (user + system, seconds) and resident memory (MiB), from /proc. */
export function processUsage(pid: number): { cpuSeconds: number; rssMiB: number } {
  const stat = fs.readFileSync(`/proc/${pid}/stat`, 'utf8');
  // Fields after the command name (which may hold spaces, hence the last ')'): utime is 14th, stime 15th.
  const fields = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
  const ticks = Number(fields[11]) + Number(fields[12]);
  const rssKb = Number(/VmRSS:\s+(\d+)/.exec(fs.readFileSync(`/proc/${pid}/status`, 'utf8'))?.[1] ?? 0);
  return { cpuSeconds: ticks / 100, rssMiB: rssKb / 1024 };
}
