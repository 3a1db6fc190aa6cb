// Whether starting a split restarts the workload's pods: only the first live split of a workload
// activates it (its pods stop, then roll out reading the split's shadows); a split added to a
// workload already split attaches a route without touching its pods (docs/design.md §6).
import type { QueueSplit, QueueSplitPhase } from '../../core/crd/queueSplitSchema';
import type { WorkloadKind } from './types';

/** Phases of a split that no longer holds its workload split. */
const ENDED: readonly QueueSplitPhase[] = ['Stopped', 'Failed', 'Rejected'];

export function restartsWorkload(
  splits: readonly QueueSplit[],
  workload: { kind: WorkloadKind; name: string },
): boolean {
  return !splits.some(
    (s) =>
      s.spec.workload.kind === workload.kind &&
      s.spec.workload.name === workload.name &&
      !s.metadata.deletionTimestamp &&
      !ENDED.includes(s.status?.phase as QueueSplitPhase),
  );
}
