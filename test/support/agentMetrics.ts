// Reaching a queue-agent from a test: its pod, its log lines, its HTTP endpoint, and its
// Prometheus text parsed into samples. Queue-agents run on the real node, each pod with its
// own address, which the host reaches through the node's bridge.
import { CoreV1Api, type KubeConfig, type V1Pod } from '@kubernetes/client-node';
import { DEFAULT_METRICS_PORT } from '../../agent/controller/agentDeployment';
import { podLogLines } from '../env/k8s/node/realNode';
import { pollUntil } from './poll';

export async function agentPods(kc: KubeConfig, namespace: string, workload: string): Promise<V1Pod[]> {
  const list = await kc.makeApiClient(CoreV1Api).listNamespacedPod({
    namespace,
    labelSelector: `queuesplit.dev/component=queue-agent,queuesplit.dev/workload=${workload}`,
  });
  return list.items.filter((p) => !p.metadata?.deletionTimestamp);
}

/** Waits (up to a minute) until `workload` has no queue-agent pod: `what` says why there should be none. */
export async function waitForNoAgent(
  kc: KubeConfig,
  namespace: string,
  workload: string,
  what: string,
): Promise<void> {
  await pollUntil(
    what,
    () => agentPods(kc, namespace, workload),
    (p) => p.length === 0,
    60_000,
  );
}

/** The agent container's log lines (JSON), every restart, as the node kept them. */
export function agentLog(pod: V1Pod): Record<string, unknown>[] {
  const { namespace = '', name = '' } = pod.metadata ?? {};
  return podLogLines(namespace, name, 'agent')
    .filter((line) => line.startsWith('{'))
    .map((line) => JSON.parse(line) as Record<string, unknown>);
}

/** Where the agent in `pod` serves /metrics, /healthz and /readyz (`http://host:port`). */
export function agentUrl(pod: V1Pod): Promise<string> {
  const port = pod.spec?.containers[0]?.ports?.[0]?.containerPort ?? DEFAULT_METRICS_PORT;
  const ip = pod.status?.podIP;
  if (!ip) return Promise.reject(new Error(`queue-agent pod ${pod.metadata?.name} has no IP yet`));
  return Promise.resolve(`http://${ip}:${port}`);
}

export interface Sample {
  name: string;
  labels: Record<string, string>;
  value: number;
}

export function parsePrometheus(text: string): Sample[] {
  const samples: Sample[] = [];
  for (const line of text.split('\n')) {
    const m = /^([a-zA-Z_:][a-zA-Z0-9_:]*)(?:\{(.*)\})?\s+(\S+)/.exec(line);
    if (!m || line.startsWith('#')) continue;
    const labels: Record<string, string> = {};
    for (const l of (m[2] ?? '').matchAll(/([a-zA-Z_][a-zA-Z0-9_]*)="((?:[^"\\]|\\.)*)"/g)) {
      labels[l[1]!] = l[2]!;
    }
    samples.push({ name: m[1]!, labels, value: Number(m[3]) });
  }
  return samples;
}

export async function scrape(url: string): Promise<{ text: string; samples: Sample[] }> {
  const res = await fetch(`${url}/metrics`, { signal: AbortSignal.timeout(5000) });
  if (!res.ok) throw new Error(`GET /metrics: HTTP ${res.status}`);
  const text = await res.text();
  return { text, samples: parsePrometheus(text) };
}

/** The value of the sample `name` whose labels include `labels` (undefined when absent). */
export function sampleValue(
  samples: readonly Sample[],
  name: string,
  labels: Record<string, string> = {},
): number | undefined {
  return samples.find((s) => s.name === name && Object.entries(labels).every(([k, v]) => s.labels[k] === v))
    ?.value;
}

export async function httpStatus(url: string, route: string): Promise<number> {
  const res = await fetch(`${url}${route}`, { signal: AbortSignal.timeout(5000) });
  await res.body?.cancel();
  return res.status;
}
