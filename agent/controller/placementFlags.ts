// The controller's queue-agent placement flags, parsed: where the per-workload agents may run
// (a dedicated node pool, a tainted node). Pure, so the flag errors are unit-tested.
import type { V1Toleration } from '@kubernetes/client-node';

/** A label key as Kubernetes accepts it: optional DNS prefix, then a name of ≤ 63 characters. */
const LABEL_KEY = /^([a-z0-9]([-a-z0-9.]{0,251}[a-z0-9])?\/)?[A-Za-z0-9]([-A-Za-z0-9_.]{0,61}[A-Za-z0-9])?$/;
const LABEL_VALUE = /^([A-Za-z0-9]([-A-Za-z0-9_.]{0,61}[A-Za-z0-9])?)?$/;
const EFFECTS = ['NoSchedule', 'PreferNoSchedule', 'NoExecute'] as const;

export type FlagResult<T> = { ok: true; value: T } | { ok: false; error: string };

/** `--agent-node-selector key=value[,key=value]` */
/** `key=value[,…]` labels for the flag `name` (e.g. `pool=queue-agents`). */
export const parseLabels =
  (name: string, example: string) =>
  (text: string): FlagResult<Record<string, string>> => {
    const out: Record<string, string> = {};
    for (const item of text.split(',').map((s) => s.trim())) {
      const eq = item.indexOf('=');
      const key = eq < 0 ? item : item.slice(0, eq);
      const value = eq < 0 ? undefined : item.slice(eq + 1);
      if (value === undefined || !LABEL_KEY.test(key) || !LABEL_VALUE.test(value))
        return {
          ok: false,
          error: `${name}: "${item}" is not a label key=value; give comma-separated pairs, e.g. ${example}`,
        };
      if (key in out) return { ok: false, error: `${name}: the key "${key}" is given twice; give it once` };
      out[key] = value;
    }
    return { ok: true, value: out };
  };

export const parseNodeSelector = parseLabels('--agent-node-selector', 'pool=queue-agents');

/** Namespaces whose pods may reach the queue-agents' metrics port (agentNetworkPolicy.ts). */
export const parseMetricsFrom = parseLabels('--agent-metrics-from', 'kubernetes.io/metadata.name=monitoring');

/** `--agent-tolerations key[=value]:Effect[,…]` (no value: tolerate the key with any value). */
export function parseTolerations(text: string): FlagResult<V1Toleration[]> {
  const out: V1Toleration[] = [];
  for (const item of text.split(',').map((s) => s.trim())) {
    const colon = item.lastIndexOf(':');
    const effect = colon < 0 ? '' : item.slice(colon + 1);
    const taint = colon < 0 ? item : item.slice(0, colon);
    const eq = taint.indexOf('=');
    const key = eq < 0 ? taint : taint.slice(0, eq);
    const value = eq < 0 ? undefined : taint.slice(eq + 1);
    if (
      !(EFFECTS as readonly string[]).includes(effect) ||
      !LABEL_KEY.test(key) ||
      (value !== undefined && !LABEL_VALUE.test(value))
    )
      return {
        ok: false,
        error: `--agent-tolerations: "${item}" is not key[=value]:Effect with Effect one of ${EFFECTS.join(', ')}; e.g. dedicated=queue-agents:NoSchedule`,
      };
    out.push(
      value === undefined ? { key, operator: 'Exists', effect } : { key, operator: 'Equal', value, effect },
    );
  }
  return { ok: true, value: out };
}
