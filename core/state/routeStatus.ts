// How a developer's QueueSplit reads, given the workload's state: the phase shown in VS Code and
// kubectl for one route. Rejected and Failed are set by the controller when it carries out the
// rejectRoute/failRoute actions, since such routes are not kept in the state.
import type { QueueSplitPhase } from '../crd/queueSplitSchema';
import { isActivationPhase } from './phases';
import type { SplitState } from './stateDocument';

export function routePhaseForStatus(state: SplitState, routeId: string): QueueSplitPhase {
  const route = state.routes.find((r) => r.routeId === routeId);
  if (!route) return 'Stopped';
  switch (route.phase) {
    case 'PENDING':
      if (state.phase === 'DEGRADED') return 'Degraded';
      return isActivationPhase(state.phase) && route.queues.some((q) => state.workflow?.queues.includes(q))
        ? 'Preparing'
        : 'Pending';
    case 'PREPARING':
    case 'ATTACHING':
      return 'Preparing';
    case 'ACTIVE':
      return state.phase === 'DEGRADED' ? 'Degraded' : 'Active';
    case 'DRAINING':
      return 'Draining';
    case 'DEGRADED':
      return 'Degraded';
  }
}
