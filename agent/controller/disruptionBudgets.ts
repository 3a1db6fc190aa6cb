// PodDisruptionBudgets of a split workload (docs/design.md, "Disruption budgets"). A split stops
// every pod of the workload for a few seconds at activation and at handback (a scale to zero,
// which Kubernetes does not check against PDBs: they govern evictions). A budget that forbids
// disrupting any pod at all is its owner saying the workload must never go down by choice: the
// split is refused naming it, never done around it.
import type { V1LabelSelector, V1PodDisruptionBudget } from '@kubernetes/client-node';
import type { Refusal } from './autoscalers';

/** Whether `labels` match a PDB's selector (an empty selector matches every pod, as in policy/v1). */
export function selects(selector: V1LabelSelector | undefined, labels: Record<string, string>): boolean {
  if (!selector) return false; // policy/v1: a null selector matches no pod
  const byLabels = Object.entries(selector.matchLabels ?? {}).every(([k, v]) => labels[k] === v);
  const byExpressions = (selector.matchExpressions ?? []).every((e) => {
    const value = labels[e.key];
    switch (e.operator) {
      case 'In':
        return value !== undefined && (e.values ?? []).includes(value);
      case 'NotIn':
        return value === undefined || !(e.values ?? []).includes(value);
      case 'Exists':
        return value !== undefined;
      case 'DoesNotExist':
        return value === undefined;
      default:
        return false;
    }
  });
  return byLabels && byExpressions;
}

/** "0", 0, "0%" — or a minAvailable that keeps every one of `replicas` pods. */
function forbidsEveryEviction(pdb: V1PodDisruptionBudget, replicas: number): string | undefined {
  const { maxUnavailable, minAvailable } = pdb.spec ?? {};
  if (
    maxUnavailable !== undefined &&
    (maxUnavailable === 0 || maxUnavailable === '0' || maxUnavailable === '0%')
  )
    return `maxUnavailable ${String(maxUnavailable)}`;
  if (minAvailable === undefined) return undefined;
  if (minAvailable === '100%') return 'minAvailable 100%';
  const n =
    typeof minAvailable === 'number' ? minAvailable : /^\d+$/.test(minAvailable) ? Number(minAvailable) : NaN;
  return Number.isFinite(n) && n >= Math.max(replicas, 1)
    ? `minAvailable ${n} of ${replicas} replicas`
    : undefined;
}

/** The refusal for a workload whose pods (`podLabels`, `replicas` of them) a PDB keeps from any disruption. */
export function disruptionRefusal(
  pdbs: readonly V1PodDisruptionBudget[],
  podLabels: Record<string, string>,
  replicas: number,
): Refusal | undefined {
  const forbidding = pdbs
    .filter((p) => selects(p.spec?.selector, podLabels))
    .map((p) => ({ name: p.metadata?.name ?? '?', why: forbidsEveryEviction(p, replicas) }))
    .filter((p): p is { name: string; why: string } => p.why !== undefined);
  if (forbidding.length === 0) return undefined;
  return {
    reason: 'DisruptionForbidden',
    message:
      `PodDisruptionBudget ${forbidding.map((p) => `${p.name} (${p.why})`).join(', ')} allows no pod of this workload to be disrupted, ` +
      'and a split stops every pod of it for a few seconds when it starts and when it ends. Queue Split does not override a budget: ' +
      'relax it for the length of the split (or ask its owner to), then start the split again.',
  };
}
