// Derives the queue-agent's desired document from the controller's state: which step each
// queue runs now, the route table with every shadow name, and the connection env names. It is
// a pure function of the state (plus gates the controller checked), so writing it is idempotent.
import { planNames, routeShadowNames } from '../../core/agentDocuments';
import {
  DESIRED_API_VERSION,
  type AgentQueuePlan,
  type AgentRoute,
  type DesiredState,
  type RouteShadow,
} from '../../core/agentProtocol';
import type { PlanProgress } from '../../core/providers/contract';
import type { Provider } from '../../core/providers';
import { coreProvider } from '../../core/providers/registry';
import type { ResolvedQueue } from '../../core/queueConfig/resolveQueues';
import { pendingQueues } from '../../core/state/phaseActions';
import type { WorkloadPhase } from '../../core/state/phases';
import type { SplitState } from '../../core/state/stateDocument';

/** Workload phases whose per-queue step the queue-agent runs (the others are the controller's). */
export const AGENT_STEPS: readonly WorkloadPhase[] = [
  'PREPARING',
  'STARTING_PUMP',
  'ABORTING_ACTIVATION',
  'STOPPING_SOURCE',
  'DRAINING_APP',
  'QUIESCING_FOR_HANDBACK',
  'COMMITTING_HANDOFF',
  'CLEANING_UP',
];

export const activationIdOf = (state: SplitState) => `${state.installId}/${state.workload.uid}`;

export type QueueNames = AgentQueuePlan['names'];

/** The names of a declared queue's resources in the current activation epoch. */
export function queueNames(state: SplitState, queue: { name: string; provider: Provider }): QueueNames {
  const id = {
    installId: state.installId,
    workloadUid: state.workload.uid,
    queue: queue.name,
    epoch: state.queues[queue.name]?.epoch ?? 0,
  };
  return planNames(queue.provider, id);
}

/** A route's session shadow on a queue; undefined for a queue the state does not know (its
 * provider, and so its names, are unknown). */
export function routeShadow(state: SplitState, queue: string, routeId: string): RouteShadow | undefined {
  const q = state.queues[queue];
  if (!q) return undefined;
  const id = { installId: state.installId, workloadUid: state.workload.uid, queue, epoch: q.epoch, routeId };
  return routeShadowNames(q.provider, id);
}

interface StoredCheckpoint {
  engine?: unknown;
  handoff?: unknown;
}

export function storedCheckpoint(state: SplitState, queue: string): StoredCheckpoint {
  const value = state.checkpoints[queue];
  return typeof value === 'object' && value !== null ? (value as StoredCheckpoint) : {};
}

/**
 * @param gated whether the controller-side precondition of the current step holds (e.g. the app
 *   is at zero pods before a rollback republishes); when false no step is handed to the agent.
 */
export function desiredState(
  state: SplitState,
  resolved: readonly ResolvedQueue[],
  gated: boolean,
): DesiredState {
  const stepQueues = AGENT_STEPS.includes(state.phase) && gated ? pendingQueues(state) : [];
  const involved = new Set([...state.activeQueues, ...(state.workflow?.queues ?? [])]);
  const queues: AgentQueuePlan[] = resolved
    .filter((r) => involved.has(r.name))
    .map((r) => {
      const stored = storedCheckpoint(state, r.name);
      const id = {
        installId: state.installId,
        workloadUid: state.workload.uid,
        queue: r.name,
        epoch: state.queues[r.name]?.epoch ?? 0,
      };
      const progress: PlanProgress = {
        ...(stepQueues.includes(r.name) ? { step: state.phase } : {}),
        ...(stored.handoff !== undefined ? { handoff: stored.handoff } : {}),
        ...(stored.engine !== undefined ? { checkpoint: stored.engine } : {}),
      };
      return coreProvider(r.provider).plan(r, id, progress);
    });
  const routes: AgentRoute[] = state.routes
    .filter((r) => r.phase === 'ATTACHING' || r.phase === 'ACTIVE' || r.phase === 'DRAINING')
    .map((r) => ({
      routeId: r.routeId,
      filter: r.filter,
      queues: r.queues,
      phase: r.phase as AgentRoute['phase'],
      generation: r.generation,
      shadows: Object.fromEntries(
        r.queues.flatMap((q) => {
          const shadow = routeShadow(state, q, r.routeId);
          return shadow ? [[q, shadow] as const] : [];
        }),
      ),
      ...(r.publicKey !== undefined ? { publicKey: r.publicKey } : {}),
    }));
  return {
    apiVersion: DESIRED_API_VERSION,
    activationId: activationIdOf(state),
    generation: state.generation,
    phase: state.phase,
    queues,
    routes,
  };
}
