// An operator's retry of a DEGRADED split (docs/design.md §6: degraded waits for an operator). The
// operator annotates the workload; the controller turns the annotation into phase-machine
// events once and removes it, so a retry is one deliberate act, never a loop.
import type { SplitEvent } from './events';
import type { SplitState } from './stateDocument';

export const RETRY_ANNOTATION = 'queuesplit.dev/retry';

/** How the safe next action tells an operator to retry. */
export function retryHint(workload: { kind: string; name: string; namespace: string }): string {
  return `kubectl -n ${workload.namespace} annotate ${workload.kind.toLowerCase()}/${workload.name} ${RETRY_ANNOTATION}=now`;
}

/** The retries an annotation asks for: the degraded workflow, and each degraded route. */
export function retryEvents(state: SplitState): SplitEvent[] {
  return [
    ...(state.phase === 'DEGRADED' ? [{ type: 'retryRequested' } as const] : []),
    ...state.routes
      .filter((r) => r.phase === 'DEGRADED')
      .map((r) => ({ type: 'retryRequested', routeId: r.routeId }) as const),
  ];
}
