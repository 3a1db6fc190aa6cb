// The host processes behind Queue Split's pods on the real test node (containerd tasks), for tests
// that kill -9 them: the controller replica that holds the leader Lease, and a workload's queue-agent.
import { CoordinationV1Api, CoreV1Api, type KubeConfig, type V1Pod } from '@kubernetes/client-node';
import { testInstall } from '../../deploy/install';
import { agentLog, agentPods, agentUrl, httpStatus } from './agentMetrics';
import { hostPidOf } from './kube';
import { pollUntil } from './poll';

export const CONTROLLER_LEASE = 'queuesplit-controller';
const controllerSelector = 'app.kubernetes.io/name=queue-split,app.kubernetes.io/component=controller';

export async function listControllerPods(kc: KubeConfig): Promise<V1Pod[]> {
  const list = await kc
    .makeApiClient(CoreV1Api)
    .listNamespacedPod({ namespace: testInstall.namespace, labelSelector: controllerSelector });
  return list.items.filter((p) => !p.metadata?.deletionTimestamp);
}

export interface Leader {
  identity: string;
  pod: string;
  pid: number;
  transitions: number;
}

/** The replica acting as controller: the Lease holder, if its process is alive. */
export async function controllerLeader(kc: KubeConfig): Promise<Leader | undefined> {
  const lease = await kc
    .makeApiClient(CoordinationV1Api)
    .readNamespacedLease({ name: CONTROLLER_LEASE, namespace: testInstall.namespace });
  const identity = lease.spec?.holderIdentity ?? '';
  // Identity is `<hostname>_<random>` (agent/controller/run.ts); a pod's hostname is its name.
  const podName = identity.replace(/_[0-9a-f]+$/, '');
  const pod = (await listControllerPods(kc)).find((p) => p.metadata?.name === podName);
  const pid = pod ? await hostPidOf(pod) : undefined;
  if (!pod || pid === undefined || !alive(pid)) return undefined;
  return { identity, pod: podName, pid, transitions: lease.spec?.leaseTransitions ?? 0 };
}

/** The running queue-agent process of a workload, if any. */
export async function queueAgentPid(
  kc: KubeConfig,
  namespace: string,
  workload: string,
): Promise<number | undefined> {
  const list = await kc.makeApiClient(CoreV1Api).listNamespacedPod({
    namespace,
    labelSelector: `queuesplit.dev/component=queue-agent,queuesplit.dev/workload=${workload}`,
  });
  const pids = await Promise.all(list.items.filter((p) => !p.metadata?.deletionTimestamp).map(hostPidOf));
  return pids.find((pid): pid is number => pid !== undefined && alive(pid));
}

function alive(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch {
    return false;
  }
}

/**
 * SIGKILLs the workload's running queue-agent and waits until the kubelet has restarted it and
 * the new process has reconciled once (its /readyz answers 200); returns the new pid.
 */
export async function killQueueAgent(
  kc: KubeConfig,
  namespace: string,
  workload: string,
  timeoutMs = 60_000,
): Promise<number> {
  const pid = await pollUntil(
    `a live queue-agent of ${workload}`,
    () => queueAgentPid(kc, namespace, workload),
    Boolean,
    timeoutMs,
  );
  const [pod] = await agentPods(kc, namespace, workload);
  const starts = agentLog(pod!).filter((l) => l.event === 'agent.started').length;
  process.kill(pid!, 'SIGKILL');
  const next = await pollUntil(
    `the queue-agent of ${workload} restarted after kill -9 of pid ${pid}`,
    () => queueAgentPid(kc, namespace, workload),
    (p) => p !== undefined && p !== pid,
    timeoutMs,
  );
  await pollUntil(
    `the restarted queue-agent of ${workload} logged agent.started`,
    async () => agentLog(pod!).filter((l) => l.event === 'agent.started').length,
    (n) => n > starts,
    timeoutMs,
  );
  const [restarted] = await agentPods(kc, namespace, workload);
  const url = await agentUrl(restarted!);
  await pollUntil(
    `the restarted queue-agent of ${workload} reconciled once (/readyz)`,
    () => httpStatus(url, '/readyz').catch(() => 0),
    (status) => status === 200,
    timeoutMs,
  );
  return next!;
}
