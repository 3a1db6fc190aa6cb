// Reports on the workload's current step: success, proof (or its absence), failure, timeout,
// and the replica count recorded before a scale-down. A report for another phase is stale; a
// step completes when every workflow queue (or the workload, for workload-scoped steps) has
// reported what the step requires — a proof where STEPS says so, never just "success".
import type { KeptResource } from './events';
import { MAX_REDRAINS, STEPS, type StepSpec } from './phases';
import type { SplitState } from './stateDocument';
import {
  advance,
  enterPhase,
  failWorkflow,
  ignored,
  invalid,
  refuseQueue,
  result,
  type Step,
  type TransitionResult,
} from './workflow';

export type Report =
  | { kind: 'success'; checkpoint: unknown }
  | { kind: 'proof'; proven: boolean; evidence: string; kept: readonly KeptResource[]; checkpoint: unknown };

/** Checks that a step report belongs to the current phase and names a queue when it must. */
function currentStep(
  state: SplitState,
  phase: string,
  queue: string | undefined,
): { spec: StepSpec } | { rejection: TransitionResult } {
  if (phase !== state.phase)
    return { rejection: ignored(state, `stale report for ${phase}; now ${state.phase}`) };
  const spec = STEPS[state.phase];
  if (!spec) return { rejection: ignored(state, `${state.phase} has no step to report on`) };
  if (spec.scope === 'queue') {
    if (queue === undefined)
      return { rejection: invalid(state, `${state.phase} reports per queue; the report names none`) };
    if (!state.workflow?.queues.includes(queue)) {
      return { rejection: invalid(state, `queue ${queue} is not part of the ${state.phase} step`) };
    }
    if (state.queues[queue]?.done)
      return { rejection: ignored(state, `queue ${queue} already finished ${state.phase}`) };
  } else if (queue !== undefined) {
    return {
      rejection: invalid(state, `${state.phase} is reported for the whole workload, not queue ${queue}`),
    };
  }
  return { spec };
}

export function stepReport(
  state: SplitState,
  phase: string,
  queue: string | undefined,
  report: Report,
): TransitionResult {
  const step = currentStep(state, phase, queue);
  if ('rejection' in step) return step.rejection;
  const { spec } = step;
  if (report.kind === 'success' && spec.completion === 'proof') {
    return invalid(
      state,
      `${state.phase} completes only with a proof; a success report without one is not enough`,
    );
  }
  if (report.kind === 'proof' && spec.completion === 'success') {
    return invalid(state, `${state.phase} completes with a success report, not a proof`);
  }
  if (state.phase === 'QUIESCING_APP' && state.preActivationReplicas === null) {
    return invalid(
      state,
      'the replica count is not recorded yet; nothing was scaled, so nothing can be proven',
    );
  }
  if (state.phase === 'QUIESCING_FOR_HANDBACK' && state.handbackReplicas === null) {
    return invalid(
      state,
      'the replica count is not recorded yet; nothing was scaled, so nothing can be proven',
    );
  }
  if (report.kind === 'proof' && !report.proven)
    return missingProof(state, spec, queue, report.evidence, report.kept);
  const kept = report.kind === 'proof' ? report.kept : [];
  return result(
    state,
    completeStep(state, queue, report.checkpoint, kept),
    `${state.phase} done${queue ? ` for ${queue}` : ''}`,
  );
}

function completeStep(
  state: SplitState,
  queue: string | undefined,
  checkpoint: unknown,
  kept: readonly KeptResource[],
): Step {
  const keptNames = new Map(kept.map((k) => [k.name, k.reason]));
  const pending = state.inventory
    .filter(
      (r) => keptNames.has(r.name) && r.routeId === undefined && (queue === undefined || r.queue === queue),
    )
    .map((resource) => ({ resource, reason: keptNames.get(resource.name) ?? 'kept' }));
  const finished = queue === undefined ? (state.workflow?.queues ?? []) : [queue];
  const queues = Object.fromEntries(
    Object.entries(state.queues).map(([name, q]) => [
      name,
      finished.includes(name) ? { ...q, done: true } : q,
    ]),
  );
  const next: SplitState = {
    ...state,
    queues,
    inventory: pending.length > 0 ? state.inventory.filter((r) => !keptNames.has(r.name)) : state.inventory,
    cleanupPending: [...state.cleanupPending, ...pending],
    checkpoints:
      checkpoint !== undefined && queue !== undefined
        ? { ...state.checkpoints, [queue]: checkpoint }
        : state.checkpoints,
  };
  const allDone = (next.workflow?.queues ?? []).every((name) => next.queues[name]?.done === true);
  return allDone ? advance(next) : { state: next, actions: [] };
}

function missingProof(
  state: SplitState,
  spec: StepSpec,
  queue: string | undefined,
  evidence: string,
  kept: readonly KeptResource[],
): TransitionResult {
  const where = queue ? ` for ${queue}` : '';
  if (state.phase === 'QUIESCING_FOR_HANDBACK' && state.workflow) {
    if (state.workflow.redrains >= MAX_REDRAINS) {
      return result(
        state,
        failWorkflow(
          state,
          'DEGRADED',
          `handback not proven after ${MAX_REDRAINS} drains: ${evidence}`,
          queue,
        ),
        'handback degraded',
      );
    }
    const again = enterPhase(
      { ...state, workflow: { ...state.workflow, redrains: state.workflow.redrains + 1 } },
      'DRAINING_APP',
    );
    return result(state, again, `messages still pending${where} (${evidence}); draining again`);
  }
  if (state.phase === 'CLEANING_UP' && queue !== undefined) {
    // Nothing is deleted without proof: whatever could not be verified is kept and reported.
    const unverified = state.inventory
      .filter((r) => r.queue === queue && r.routeId === undefined)
      .map((r) => ({
        name: r.name,
        reason: kept.find((k) => k.name === r.name)?.reason ?? `not verified: ${evidence}`,
      }));
    return result(
      state,
      completeStep(state, queue, undefined, unverified),
      `cleanup of ${queue} unverified; resources kept`,
    );
  }
  return result(
    state,
    failWorkflow(state, spec.onFailure, `no proof in ${state.phase}${where}: ${evidence}`, queue),
    `no proof in ${state.phase}; ${spec.onFailure}`,
  );
}

export function stepFailure(
  state: SplitState,
  phase: string,
  queue: string | undefined,
  reason: string,
  nothingChanged = false,
): TransitionResult {
  if (phase !== state.phase) return ignored(state, `stale failure for ${phase}; now ${state.phase}`);
  const spec = STEPS[state.phase];
  if (!spec) return ignored(state, `${state.phase} has no step that could fail`);
  const where = queue ? ` for ${queue}` : '';
  if (
    nothingChanged &&
    state.phase === 'PREPARING' &&
    queue !== undefined &&
    state.workflow?.kind === 'activation' &&
    state.workflow.queues.includes(queue) &&
    state.queues[queue]?.done !== true
  ) {
    return result(
      state,
      refuseQueue(state, queue, reason),
      `${queue} refused by its preflight; split rejected`,
    );
  }
  return result(
    state,
    failWorkflow(state, spec.onFailure, `${state.phase} failed${where}: ${reason}`, queue),
    `${state.phase} failed; ${spec.onFailure}`,
  );
}

export function workloadObserved(
  state: SplitState,
  replicas: number,
  resourceVersion: string,
): TransitionResult {
  if (!Number.isInteger(replicas) || replicas < 0)
    return invalid(state, `replica count ${replicas} is not a count`);
  if (state.phase === 'QUIESCING_APP' && state.preActivationReplicas === null) {
    const next = { ...state, preActivationReplicas: replicas, preActivationResourceVersion: resourceVersion };
    return result(
      state,
      enterPhase(next, 'QUIESCING_APP'),
      `recorded ${replicas} replicas before scaling to 0`,
    );
  }
  if (state.phase === 'QUIESCING_FOR_HANDBACK' && state.handbackReplicas === null) {
    const next = { ...state, handbackReplicas: replicas, handbackResourceVersion: resourceVersion };
    return result(
      state,
      enterPhase(next, 'QUIESCING_FOR_HANDBACK'),
      `recorded ${replicas} replicas before handback`,
    );
  }
  return ignored(state, `no replica count is awaited in ${state.phase}`);
}

/**
 * The quiesce's scale to zero was refused (resourceVersion conflict) because the workload's
 * autoscaler scaled it after we read it: nothing was scaled by us, so the recorded count is
 * dropped and read again, instead of rolling back an activation that changed nothing.
 */
export function scaleRaced(state: SplitState): TransitionResult {
  if (state.phase === 'QUIESCING_APP' && state.preActivationReplicas !== null) {
    const next = { ...state, preActivationReplicas: null, preActivationResourceVersion: null };
    return result(
      state,
      enterPhase(next, 'QUIESCING_APP'),
      'an autoscaler scaled first; reading the replicas again',
    );
  }
  if (state.phase === 'QUIESCING_FOR_HANDBACK' && state.handbackReplicas !== null) {
    const next = { ...state, handbackReplicas: null, handbackResourceVersion: null };
    return result(
      state,
      enterPhase(next, 'QUIESCING_FOR_HANDBACK'),
      'an autoscaler scaled first; reading the replicas again',
    );
  }
  return ignored(state, `no quiesce scale is pending in ${state.phase}`);
}
