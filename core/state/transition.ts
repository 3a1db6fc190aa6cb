// The phase machine of docs/design.md §6 as one pure function: (state, event) → (state, actions).
// Every phase × event combination has a defined outcome: applied, ignored (stale or redundant),
// invalid (not allowed in this phase) or rejected (a route refused) — it never throws.
//
// Rules encoded here:
// - A step completes only with its expected report: steps marked `proof` in STEPS accept only
//   a proofReported with proven=true; a bare success report is invalid.
// - Failures, timeouts and missing proofs never lead forward: activation steps abort
//   (ABORTING_ACTIVATION), everything else holds in DEGRADED; a route attach that fails or
//   times out drains, a drain that fails degrades the route (docs/design.md §5.6).
// - QUIESCING_FOR_HANDBACK without proof sends the app back to drain (a requeued delivery was
//   found), at most MAX_REDRAINS times, then DEGRADED.
import type { SplitEvent } from './events';
import { isActivationPhase } from './phases';
import { recover } from './recovery';
import {
  leaseRenewed,
  retryRoute,
  routeAcked,
  routeDrained,
  routeFailed,
  routeReleased,
  routeRequested,
  routeShadowsReady,
} from './routeTransitions';
import type { SplitState } from './stateDocument';
import { scaleRaced, stepFailure, stepReport, workloadObserved } from './stepReports';
import {
  failWorkflow,
  ignored,
  invalid,
  result,
  retryDegraded,
  settleActive,
  type TransitionResult,
} from './workflow';

export type { TransitionResult, Outcome } from './workflow';

export function transition(state: SplitState, event: SplitEvent): TransitionResult {
  switch (event.type) {
    case 'routeRequested':
      return routeRequested(state, event.route);
    case 'routeDeleted':
      return routeReleased(state, event.routeId, 'deleted');
    case 'leaseExpired':
      return routeReleased(state, event.routeId, 'lease expired');
    case 'leaseRenewed':
      return leaseRenewed(state, event.routeId, event.expiresAt);
    case 'routeShadowsReady':
      return routeShadowsReady(state, event.routeId);
    case 'routeAcked':
      return routeAcked(state, event.routeId, event.generation);
    case 'routeDrained':
      return routeDrained(state, event.routeId, event.proven, event.evidence, event.kept);
    case 'routeStepFailed':
      return routeFailed(state, event.routeId, event.reason);
    case 'routeTimedOut':
      return routeFailed(state, event.routeId, 'timed out (longer than a step may take)');
    case 'workloadObserved':
      return workloadObserved(state, event.replicas, event.resourceVersion);
    case 'scaleRaced':
      return scaleRaced(state);
    case 'stepSucceeded':
      return stepReport(state, event.phase, event.queue, { kind: 'success', checkpoint: event.checkpoint });
    case 'proofReported':
      return stepReport(state, event.phase, event.queue, {
        kind: 'proof',
        proven: event.proven,
        evidence: event.evidence,
        kept: event.kept ?? [],
        checkpoint: event.checkpoint,
      });
    case 'stepFailed':
      return stepFailure(state, event.phase, event.queue, event.reason, event.nothingChanged === true);
    case 'stepTimedOut':
      return stepFailure(state, event.phase, event.queue, 'timed out');
    case 'faultReported':
      return faultReported(state, event.reason, event.queue);
    case 'abortRequested':
      return abortRequested(state, event.reason);
    case 'retryRequested':
      return event.routeId !== undefined ? retryRoute(state, event.routeId) : retry(state);
    case 'restarted':
      return recover(state);
  }
}

function faultReported(state: SplitState, reason: string, queue: string | undefined): TransitionResult {
  if (state.phase === 'IDLE') return ignored(state, 'nothing is split');
  if (state.phase === 'DEGRADED') return ignored(state, 'already degraded');
  const target = isActivationPhase(state.phase) ? 'ABORTING_ACTIVATION' : 'DEGRADED';
  return result(
    state,
    failWorkflow(state, target, `fault: ${reason}`, queue),
    `fault in ${state.phase}; ${target}`,
  );
}

function abortRequested(state: SplitState, reason: string): TransitionResult {
  if (isActivationPhase(state.phase)) {
    return result(
      state,
      failWorkflow(state, 'ABORTING_ACTIVATION', `aborted: ${reason}`),
      'aborting activation',
    );
  }
  if (state.phase === 'DEGRADED' && state.degraded) {
    const from = state.degraded.from;
    if (isActivationPhase(from) || from === 'ABORTING_ACTIVATION') {
      const back: SplitState = { ...state, degraded: null, phase: from };
      return result(
        state,
        failWorkflow(back, 'ABORTING_ACTIVATION', `aborted: ${reason}`),
        'aborting activation',
      );
    }
    return invalid(state, `a split degraded in ${from} cannot be aborted; retry it instead`);
  }
  if (state.phase === 'ACTIVE') {
    // Stop everything gracefully: every route drains; the last drain starts the handback.
    let current = state;
    const actions: TransitionResult['actions'] = [];
    for (const route of state.routes) {
      const released = routeReleased(current, route.routeId, `aborted: ${reason}`);
      current = released.state;
      actions.push(...released.actions.filter((a) => a.type !== 'persistState'));
    }
    const settled = settleActive(current);
    return result(
      state,
      { state: settled.state, actions: [...actions, ...settled.actions] },
      'draining every route',
    );
  }
  if (state.phase === 'IDLE') return ignored(state, 'nothing to abort');
  return invalid(state, `${state.phase} is already returning the workload; it finishes or degrades`);
}

function retry(state: SplitState): TransitionResult {
  if (state.phase !== 'DEGRADED') return ignored(state, `nothing to retry in ${state.phase}`);
  return result(state, retryDegraded(state), `retrying ${state.degraded?.from ?? ''}`);
}
