// The test kubelet: registers one Node, keeps it healthy (status heartbeat + node Lease), and
// runs every pod the scheduler binds to it as local processes (see podRunner.ts). It is a
// level-triggered loop: a pod watch only wakes it early; each pass lists this node's pods and
// makes the processes match. Started and stopped by `npm run env:up` / `env:down`.
import { createHash } from 'node:crypto';
import * as fs from 'node:fs';
import * as path from 'node:path';
import {
  CoordinationV1Api,
  CoreV1Api,
  KubeConfig,
  PatchStrategy,
  setHeaderOptions,
  Watch,
  type V1Pod,
} from '@kubernetes/client-node';
import { runDir } from '../../paths';
import { writeTokenKubeconfig } from '../kubeconfig';
import { resolveEnv } from './containerEnv';
import { PodRunner } from './podRunner';

export const nodeName = process.env.QS_NODE_NAME ?? 'qs-node';
const home = path.join(runDir, 'kubelet');
const logsDir = path.join(home, 'logs');
// One pid file per node: a second kubelet (QS_NODE_NAME) never ends the first one's pods.
const pidsFile = path.join(home, nodeName === 'qs-node' ? 'pids.json' : `pids-${nodeName}.json`);
const caFile = path.join(runDir, 'k8s', 'pki', 'ca.crt');
const recordDir = path.join(runDir, 'records');

const kc = new KubeConfig();
kc.loadFromFile(process.env.KUBECONFIG ?? path.join(runDir, 'kubeconfig'));
const core = kc.makeApiClient(CoreV1Api);
const coordination = kc.makeApiClient(CoordinationV1Api);
const mergePatch = setHeaderOptions('Content-Type', PatchStrategy.MergePatch);
const runners = new Map<string, PodRunner>();
const lastStatus = new Map<string, string>();
const terminating = new Set<string>();

const log = (msg: string) => console.log(`${new Date().toISOString()} ${msg}`);
const isConflict = (err: unknown) => (err as { code?: number }).code === 409;
const isNotFound = (err: unknown) => (err as { code?: number }).code === 404;

async function registerNode(): Promise<void> {
  try {
    await core.createNode({
      body: {
        metadata: {
          name: nodeName,
          labels: {
            'kubernetes.io/hostname': nodeName,
            'kubernetes.io/os': 'linux',
            'kubernetes.io/arch': 'amd64',
            'queuesplit.dev/test-node': 'true',
          },
        },
      },
    });
  } catch (err) {
    if (!isConflict(err)) throw err;
  }
  await heartbeat();
}

async function heartbeat(): Promise<void> {
  const t = new Date();
  const resources = { cpu: '32', memory: '64Gi', pods: '250', 'ephemeral-storage': '100Gi' };
  await core.patchNodeStatus(
    {
      name: nodeName,
      body: {
        status: {
          capacity: resources,
          allocatable: resources,
          addresses: [
            { type: 'InternalIP', address: '127.0.0.1' },
            { type: 'Hostname', address: nodeName },
          ],
          daemonEndpoints: { kubeletEndpoint: { Port: 10250 } },
          nodeInfo: {
            kubeletVersion: 'v0.0.0-queuesplit-test-kubelet',
            kubeProxyVersion: '',
            containerRuntimeVersion: 'process://local',
            operatingSystem: 'linux',
            architecture: 'amd64',
            osImage: 'local processes',
            kernelVersion: '',
            machineID: '',
            systemUUID: '',
            bootID: '',
          },
          conditions: [
            {
              type: 'Ready',
              status: 'True',
              reason: 'KubeletReady',
              message: 'test kubelet is posting ready status',
              lastHeartbeatTime: t,
              lastTransitionTime: t,
            },
            {
              type: 'MemoryPressure',
              status: 'False',
              reason: 'KubeletHasSufficientMemory',
              lastHeartbeatTime: t,
              lastTransitionTime: t,
            },
            {
              type: 'DiskPressure',
              status: 'False',
              reason: 'KubeletHasNoDiskPressure',
              lastHeartbeatTime: t,
              lastTransitionTime: t,
            },
            {
              type: 'PIDPressure',
              status: 'False',
              reason: 'KubeletHasSufficientPID',
              lastHeartbeatTime: t,
              lastTransitionTime: t,
            },
          ],
        },
      },
    },
    mergePatch,
  );
  // Lease times are MicroTime (six fractional digits); client-node would send milliseconds,
  // which the API server rejects, so the patch body carries the formatted string.
  const renewTime = t.toISOString().replace(/\.(\d{3})Z$/, '.$1000Z');
  const spec = { holderIdentity: nodeName, leaseDurationSeconds: 40 };
  try {
    await coordination.patchNamespacedLease(
      { name: nodeName, namespace: 'kube-node-lease', body: { spec: { ...spec, renewTime } } },
      mergePatch,
    );
  } catch (err) {
    if (!isNotFound(err)) throw err;
    await coordination.createNamespacedLease({
      namespace: 'kube-node-lease',
      body: { metadata: { name: nodeName }, spec },
    });
  }
}

async function readData(kind: 'configmap' | 'secret', namespace: string, name: string) {
  try {
    if (kind === 'configmap') return (await core.readNamespacedConfigMap({ name, namespace })).data ?? {};
    const data = (await core.readNamespacedSecret({ name, namespace })).data ?? {};
    return Object.fromEntries(
      Object.entries(data).map(([k, v]) => [k, Buffer.from(v, 'base64').toString('utf8')]),
    );
  } catch (err) {
    if (isNotFound(err)) return undefined;
    throw err;
  }
}

/** A kubeconfig carrying a token bound to the pod, for the pod's service account: RBAC applies as in a cluster. */
async function podCredentials(pod: V1Pod): Promise<Record<string, string>> {
  if (pod.spec?.automountServiceAccountToken === false) return {};
  const namespace = pod.metadata?.namespace ?? 'default';
  const sa = pod.spec?.serviceAccountName ?? 'default';
  const token = await core.createNamespacedServiceAccountToken({
    namespace,
    name: sa,
    body: {
      spec: {
        audiences: [],
        expirationSeconds: 86_400,
        boundObjectRef: { apiVersion: 'v1', kind: 'Pod', name: pod.metadata?.name, uid: pod.metadata?.uid },
      },
    },
  });
  const file = path.join(home, 'pods', pod.metadata?.uid ?? 'unknown', 'kubeconfig');
  fs.mkdirSync(path.dirname(file), { recursive: true });
  writeTokenKubeconfig(file, caFile, token.status?.token ?? '', `${namespace}-${sa}`, namespace);
  return { KUBECONFIG: file };
}

async function containerEnvironment(pod: V1Pod, containerName: string): Promise<Record<string, string>> {
  const container = pod.spec?.containers.find((c) => c.name === containerName);
  if (!container) throw new Error(`container ${containerName} vanished from the pod spec`);
  const resolved = await resolveEnv(pod, container, {
    configMap: (ns, name) => readData('configmap', ns, name),
    secret: (ns, name) => readData('secret', ns, name),
  });
  return {
    // What an image would provide: a PATH and a HOME. Plus the test-only record directory
    // the fixture consumers write to (a stand-in for a hostPath volume).
    PATH: process.env.PATH ?? '/usr/bin:/bin',
    HOME: process.env.HOME ?? '/root',
    HOSTNAME: pod.metadata?.name ?? '',
    QS_RECORD_DIR: recordDir,
    ...(await podCredentials(pod)),
    ...resolved,
  };
}

/** Events already recorded: a repeat bumps the count (at most every 10 s), as the kubelet aggregates. */
const recorded = new Map<string, { name: string; count: number; patchedAt: number }>();

function recordEvent(pod: V1Pod, type: 'Normal' | 'Warning', reason: string, message: string): void {
  const namespace = pod.metadata?.namespace ?? 'default';
  const key = `${pod.metadata?.uid}|${reason}|${message}`;
  const now = new Date();
  const seen = recorded.get(key);
  if (seen) {
    seen.count++;
    if (Date.now() - seen.patchedAt < 10_000) return;
    seen.patchedAt = Date.now();
    void core
      .patchNamespacedEvent(
        { name: seen.name, namespace, body: { count: seen.count, lastTimestamp: now } },
        mergePatch,
      )
      .catch((err: unknown) => log(`event ${seen.name}: ${String(err)}`));
    return;
  }
  const name = `${pod.metadata?.name}.${createHash('sha256').update(key).digest('hex').slice(0, 16)}`;
  recorded.set(key, { name, count: 1, patchedAt: Date.now() });
  void core
    .createNamespacedEvent({
      namespace,
      body: {
        metadata: { name, namespace },
        involvedObject: {
          apiVersion: 'v1',
          kind: 'Pod',
          name: pod.metadata?.name,
          namespace,
          uid: pod.metadata?.uid,
        },
        type,
        reason,
        message,
        count: 1,
        firstTimestamp: now,
        lastTimestamp: now,
        source: { component: 'kubelet', host: nodeName },
        reportingComponent: 'kubelet',
        reportingInstance: nodeName,
      },
    })
    .catch((err: unknown) => {
      if (!isConflict(err)) log(`event ${name}: ${String(err)}`);
    });
}

function savePids(): void {
  const pids = [...runners.values()].flatMap((r) => r.pids);
  fs.writeFileSync(pidsFile, JSON.stringify(pids));
}

/** Processes left by a kubelet that died without cleaning up would double-consume: end them. */
function killLeftovers(): void {
  try {
    for (const pid of JSON.parse(fs.readFileSync(pidsFile, 'utf8')) as number[]) {
      try {
        process.kill(-pid, 'SIGKILL');
      } catch {
        /* gone */
      }
    }
  } catch {
    /* no file */
  }
}

async function writeStatus(pod: V1Pod, runner: PodRunner): Promise<void> {
  const status = runner.status();
  const key = JSON.stringify(status);
  if (lastStatus.get(runner.uid) === key) return;
  try {
    await core.patchNamespacedPodStatus(
      { name: pod.metadata!.name!, namespace: pod.metadata!.namespace!, body: { status } },
      mergePatch,
    );
    lastStatus.set(runner.uid, key);
  } catch (err) {
    if (!isNotFound(err)) log(`status of ${pod.metadata?.namespace}/${pod.metadata?.name}: ${String(err)}`);
  }
}

async function finishDeletion(pod: V1Pod, runner: PodRunner | undefined): Promise<void> {
  const uid = pod.metadata?.uid ?? '';
  if (terminating.has(uid)) return;
  terminating.add(uid);
  const grace = pod.metadata?.deletionGracePeriodSeconds ?? pod.spec?.terminationGracePeriodSeconds ?? 30;
  log(`terminating ${pod.metadata?.namespace}/${pod.metadata?.name} (grace ${grace}s)`);
  await runner?.terminate(grace);
  runners.delete(uid);
  lastStatus.delete(uid);
  for (const key of recorded.keys()) if (key.startsWith(`${uid}|`)) recorded.delete(key);
  savePids();
  fs.rmSync(path.join(home, 'pods', uid), { recursive: true, force: true });
  try {
    await core.deleteNamespacedPod({
      name: pod.metadata!.name!,
      namespace: pod.metadata!.namespace!,
      // In the body: client-node drops a 0 query parameter, and 0 is the whole point here.
      body: { gracePeriodSeconds: 0, preconditions: { uid } },
    });
  } catch (err) {
    if (!isNotFound(err) && !isConflict(err)) log(`delete ${pod.metadata?.name}: ${String(err)}`);
  }
  terminating.delete(uid);
}

async function reconcile(): Promise<void> {
  const pods = (await core.listPodForAllNamespaces({ fieldSelector: `spec.nodeName=${nodeName}` })).items;
  const seen = new Set<string>();
  for (const pod of pods) {
    const uid = pod.metadata?.uid ?? '';
    seen.add(uid);
    let runner = runners.get(uid);
    if (pod.metadata?.deletionTimestamp) {
      void finishDeletion(pod, runner);
      continue;
    }
    if (pod.status?.phase === 'Succeeded' || pod.status?.phase === 'Failed') {
      if (!runner) continue; // finished before this kubelet started: nothing to run
    }
    if (!runner) {
      if (shuttingDown) continue;
      runner = new PodRunner(pod, {
        environment: containerEnvironment,
        logsDir,
        onChange: () => wake(),
        onPids: savePids,
        event: recordEvent,
      });
      runners.set(uid, runner);
      log(`starting ${pod.metadata?.namespace}/${pod.metadata?.name}`);
      runner.startAll();
    }
    runner.update(pod);
    await writeStatus(pod, runner);
  }
  // Pods removed without a graceful deletion (force delete): stop their processes too.
  for (const [uid, runner] of runners) {
    if (!seen.has(uid) && !terminating.has(uid)) {
      terminating.add(uid);
      void runner.terminate(0).then(() => {
        runners.delete(uid);
        terminating.delete(uid);
        savePids();
      });
    }
  }
}

let running = false;
let again = false;
function wake(): void {
  if (running) {
    again = true;
    return;
  }
  running = true;
  reconcile()
    .catch((err: unknown) => log(`reconcile: ${String(err)}`))
    .finally(() => {
      running = false;
      if (again) {
        again = false;
        wake();
      }
    });
}

async function watchPods(): Promise<void> {
  const watch = new Watch(kc);
  const restart = () => setTimeout(() => void watchPods().catch(() => restart()), 1000);
  await watch.watch(
    '/api/v1/pods',
    { fieldSelector: `spec.nodeName=${nodeName}` },
    () => wake(),
    () => restart(),
  );
}

/** Set once stopping: no pod is started after the last ones were told to terminate. */
let shuttingDown = false;

async function shutdown(): Promise<void> {
  shuttingDown = true;
  log('stopping: terminating every pod process');
  await Promise.all([...runners.values()].map((r) => r.terminate(5)));
  fs.rmSync(pidsFile, { force: true });
  process.exit(0);
}

async function main(): Promise<void> {
  fs.mkdirSync(logsDir, { recursive: true });
  fs.mkdirSync(recordDir, { recursive: true });
  killLeftovers();
  await registerNode();
  log(`node ${nodeName} registered`);
  setInterval(() => void heartbeat().catch((err: unknown) => log(`heartbeat: ${String(err)}`)), 10_000);
  setInterval(wake, 2_000);
  await watchPods();
  wake();
  process.on('SIGTERM', () => void shutdown());
  process.on('SIGINT', () => void shutdown());
}

main().catch((err: unknown) => {
  log(`fatal: ${err instanceof Error ? (err.stack ?? err.message) : String(err)}`);
  process.exit(1);
});
