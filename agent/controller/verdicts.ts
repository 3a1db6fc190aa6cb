// What the controller decided about a QueueSplit it will not (or no longer) serve: Rejected,
// Failed or Stopped, with the reason and the message its status shows. Kept per route id for
// the life of the workload's coordinator.
export interface Verdict {
  phase: 'Rejected' | 'Failed' | 'Stopped';
  reason: string;
  message: string;
}

/** QueueSplit phases after which the object starts nothing again: the developer starts a new split. */
export const ENDED_PHASES: readonly string[] = ['Stopped', 'Failed', 'Rejected'];

/** The workload a coordinator serves. */
import type { WorkloadKind } from './workloads';

export interface WorkloadId {
  readonly namespace: string;
  readonly kind: WorkloadKind;
  readonly name: string;
}
