// Reaching a queue-agent from a test: its pod, the port it picked (the test install passes
// --agent-metrics-port=0, so each agent logs the free port it bound in `agent.started`), and
// its Prometheus text parsed into samples.
import * as fs from 'node:fs';
import * as path from 'node:path';
import { CoreV1Api, type KubeConfig, type V1Pod } from '@kubernetes/client-node';
import { runDir } from '../env/paths';
import { pollUntil } from './poll';

export async function agentPods(kc: KubeConfig, namespace: string, workload: string): Promise<V1Pod[]> {
  const list = await kc.makeApiClient(CoreV1Api).listNamespacedPod({
    namespace,
    labelSelector: `queuesplit.dev/component=queue-agent,queuesplit.dev/workload=${workload}`,
  });
  return list.items.filter((p) => !p.metadata?.deletionTimestamp);
}

/** The agent container's log lines (JSON), as the test kubelet writes them. */
export function agentLog(pod: V1Pod): Record<string, unknown>[] {
  const file = path.join(
    runDir,
    'kubelet',
    'logs',
    `${pod.metadata?.namespace}_${pod.metadata?.name}_agent.log`,
  );
  if (!fs.existsSync(file)) return [];
  return fs
    .readFileSync(file, 'utf8')
    .split('\n')
    .filter((line) => line.startsWith('{'))
    .map((line) => JSON.parse(line) as Record<string, unknown>);
}

/** The port the agent in `pod` serves /metrics, /healthz and /readyz on. */
export function agentPort(pod: V1Pod): Promise<number> {
  return pollUntil(
    `agent.started logged by ${pod.metadata?.name}`,
    async () => agentLog(pod).findLast((l) => l.event === 'agent.started')?.metricsPort,
    (port) => typeof port === 'number' && port > 0,
  ) as Promise<number>;
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

export async function scrape(port: number): Promise<{ text: string; samples: Sample[] }> {
  const res = await fetch(`http://127.0.0.1:${port}/metrics`, { signal: AbortSignal.timeout(5000) });
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

export async function httpStatus(port: number, route: string): Promise<number> {
  const res = await fetch(`http://127.0.0.1:${port}${route}`, { signal: AbortSignal.timeout(5000) });
  await res.body?.cancel();
  return res.status;
}
