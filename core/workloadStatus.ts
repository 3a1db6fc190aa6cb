// The workload-level split status: what the controller says about a workload as a whole, on the
// workload itself (annotation queuesplit.dev/split-status, plus Kubernetes Events), so it
// outlives the last QueueSplit. A split's own status ends with its route; the workload's
// handback (draining the app shadow, restoring the app's env) goes on after that, and this is
// where a developer, `kubectl describe`, the sidecar's last words and the extension's tree read
// whether it finished — or what blocks it and the safe next action (README, "When a split is
// Degraded").
// No zod here: the extension's activation bundle imports this (parsing: workloadStatusParse.ts).

export const WORKLOAD_STATUS_ANNOTATION = 'queuesplit.dev/split-status';

export const WORKLOAD_SPLIT_PHASES = [
  /** Routes are being set up (the cutover, or a route attaching). */
  'Splitting',
  /** At least one route is active. */
  'Split',
  /** Activation failed; the proved rollback runs. */
  'RollingBack',
  /** The last route left; the app is getting its sources back. */
  'HandingBack',
  /** A step could not be proven: the workload waits for an operator retry, messages kept. */
  'Degraded',
  /** Nothing is split any more: the app consumes its own sources. */
  'HandedBack',
] as const;
export type WorkloadSplitPhase = (typeof WORKLOAD_SPLIT_PHASES)[number];

export interface WorkloadSplitStatus {
  phase: WorkloadSplitPhase;
  /** One sentence for people: what happens now, or what blocks it (never a header value). */
  message: string;
  /** The safe next action, when someone has to act (or wait). */
  nextAction?: string;
  /** The controller's workload phase (e.g. DRAINING_APP), for the curious. */
  step?: string;
  /** Routes still in the workload's state. */
  routes: number;
  /** The cleanup record listing kept broker resources, when there is one. */
  cleanupConfigMap?: string;
  /** When this status was written (RFC 3339). */
  updated: string;
}

export function serializeWorkloadStatus(status: WorkloadSplitStatus): string {
  return JSON.stringify(status);
}

/** Whether two statuses say the same thing (the write time aside). */
export function sameWorkloadStatus(a: WorkloadSplitStatus | undefined, b: WorkloadSplitStatus): boolean {
  if (a === undefined) return false;
  // Field by field: a parsed annotation and a freshly built status order their keys differently.
  const keys = new Set([...Object.keys(a), ...Object.keys(b)]);
  keys.delete('updated');
  return [...keys].every((k) => a[k as keyof WorkloadSplitStatus] === b[k as keyof WorkloadSplitStatus]);
}

/** A handback still under way or stuck: a developer must not be told it is done. */
export function handbackUnfinished(status: { readonly phase: string } | undefined): boolean {
  return status?.phase === 'HandingBack' || status?.phase === 'Degraded' || status?.phase === 'RollingBack';
}
