// The idempotent work of each phase, derived from the state alone. Entering a phase and
// recovering in it after a restart run the same list, so a crash at any point is resumed by
// doing the phase again; queues that already finished the step are skipped.
import { retryHint } from './operatorRetry';
import type { SplitAction } from './actions';
import type { SplitState } from './stateDocument';

/** Workflow queues that have not finished the current step. */
export function pendingQueues(state: SplitState): string[] {
  return (state.workflow?.queues ?? []).filter((queue) => state.queues[queue]?.done !== true);
}

function overridden(state: SplitState, extra: readonly string[]): string[] {
  return [...new Set([...state.activeQueues, ...extra])].sort();
}

export function phaseActions(state: SplitState): SplitAction[] {
  const queues = pendingQueues(state);
  const all = state.workflow?.queues ?? [];
  const generation = state.generation;
  switch (state.phase) {
    case 'IDLE':
      return [];
    case 'PREPARING':
      return [
        { type: 'acquireLease' },
        { type: 'ensureFinalizer' },
        { type: 'ensureQueueAgent', generation },
        { type: 'prepareQueues', queues },
      ];
    case 'QUIESCING_APP':
      if (state.preActivationReplicas === null) return [{ type: 'observeWorkload' }];
      return [scaleToZero(state.preActivationResourceVersion), { type: 'awaitQuiesce', queues: all }];
    case 'STARTING_PUMP':
      return [{ type: 'startPump', queues, generation }];
    case 'REDIRECTING_APP':
      return [
        { type: 'applyOverrides', queues: overridden(state, all), generation },
        // From the quiesce's 0 only: a person's scale meanwhile is named, not overwritten.
        { type: 'scaleWorkload', replicas: state.preActivationReplicas ?? 0, from: 0 },
        { type: 'awaitRollout', generation, overriddenQueues: overridden(state, all) },
      ];
    case 'ACTIVE':
      return [];
    case 'ABORTING_ACTIVATION':
      // The app must be gone before a rollback republishes (RabbitMQ) or the group is reused.
      return [
        ...(state.preActivationReplicas !== null ? [scaleToZero(null)] : []),
        { type: 'stopPump', queues },
        { type: 'rollbackQueues', queues },
      ];
    case 'RESTORING_APP': {
      const replicas =
        state.workflow?.kind === 'handback'
          ? (state.handbackReplicas ?? state.preActivationReplicas ?? 0)
          : (state.preActivationReplicas ?? 0);
      const remaining = state.activeQueues.filter((queue) => !all.includes(queue));
      return [
        { type: 'removeOverrides', queues: all, generation },
        { type: 'scaleWorkload', replicas },
        { type: 'awaitRollout', generation, overriddenQueues: remaining },
      ];
    }
    case 'STOPPING_SOURCE':
      return [{ type: 'stopSourceAtFrontier', queues }];
    case 'DRAINING_APP':
      return [
        ...(state.handbackReplicas !== null
          ? [{ type: 'scaleWorkload', replicas: state.handbackReplicas } as const]
          : []),
        { type: 'awaitAppDrain', queues },
      ];
    case 'QUIESCING_FOR_HANDBACK':
      if (state.handbackReplicas === null) return [{ type: 'observeWorkload' }];
      return [scaleToZero(state.handbackResourceVersion), { type: 'verifyHandbackQuiesce', queues }];
    case 'COMMITTING_HANDOFF':
      return [{ type: 'commitHandoff', queues }];
    case 'CLEANING_UP': {
      const names = state.inventory
        .filter((r) => queues.includes(r.queue) && r.routeId === undefined)
        .map((r) => r.name);
      return [{ type: 'cleanupQueues', queues, resources: names }];
    }
    case 'DEGRADED':
      return [degradedReport(state)];
  }
}

function scaleToZero(resourceVersion: string | null): SplitAction {
  return resourceVersion === null
    ? { type: 'scaleWorkload', replicas: 0 }
    : { type: 'scaleWorkload', replicas: 0, resourceVersion };
}

/** The route work a restart must redo: unfinished attaches and drains. */
export function routeActions(state: SplitState): SplitAction[] {
  const actions: SplitAction[] = [];
  let publish = false;
  for (const route of state.routes) {
    if (route.phase === 'PREPARING')
      actions.push({ type: 'prepareRoute', routeId: route.routeId, queues: route.queues });
    if (route.phase === 'ATTACHING') publish = true;
    if (route.phase === 'DRAINING') {
      publish = true;
      actions.push({
        type: 'drainRoute',
        routeId: route.routeId,
        queues: route.queues,
        generation: route.generation,
      });
    }
  }
  return publish ? [{ type: 'publishRoutes', generation: state.generation }, ...actions] : actions;
}

export function degradedReport(state: SplitState): SplitAction {
  const from = state.degraded?.from ?? state.phase;
  const reason = state.degraded?.reason ?? 'unknown';
  return {
    type: 'reportDegraded',
    reason: `${from}: ${reason}`,
    nextAction: `${nextActionFor(from)} To retry: ${retryHint(state.workload)}`,
  };
}

/** The safe next step an operator (or the extension) is told about. */
function nextActionFor(from: string): string {
  switch (from) {
    case 'ABORTING_ACTIVATION':
      return 'The workload stays at zero replicas until the rollback is proven. Check the broker and the queue-agent logs, then retry; do not scale the workload by hand.';
    case 'ACTIVE':
      return 'Splitting continues where it safely can. Remove the cause (e.g. a foreign consumer on the source), then retry.';
    case 'CLEANING_UP':
      return 'The workload is restored. Inspect the listed broker resources, then retry cleanup.';
    default:
      return 'Nothing was lost and nothing was reported as done. Check the broker and the queue-agent logs, fix the cause, then retry.';
  }
}
