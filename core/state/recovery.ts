// What a restarted controller does in each phase (docs/design.md §6: every step is restartable). The
// state was persisted before each step started, so recovery re-runs the current phase's
// idempotent actions for the queues that have not finished it, plus unfinished route work.
// DEGRADED is the exception: it holds until an operator retries, because something could not
// be proven and guessing is how messages get lost.
import type { SplitAction } from './actions';
import { degradedReport, phaseActions, routeActions } from './phaseActions';
import type { WorkloadPhase } from './phases';
import type { SplitState } from './stateDocument';
import type { TransitionResult } from './workflow';

export type RecoveryDecision = 'nothing' | 'resume' | 'hold';

export interface RecoveryRule {
  decision: RecoveryDecision;
  why: string;
}

export const RECOVERY: Readonly<Record<WorkloadPhase, RecoveryRule>> = {
  IDLE: { decision: 'nothing', why: 'Nothing is split; leftover cleanup-pending resources stay reported.' },
  PREPARING: {
    decision: 'resume',
    why: 'Creating shadows is idempotent (names are deterministic); no message moved yet.',
  },
  QUIESCING_APP: {
    decision: 'resume',
    why: 'If replicas were recorded, scale to 0 again and re-check; otherwise observe them first.',
  },
  STARTING_PUMP: {
    decision: 'resume',
    why: 'Start the pumps again; fencing (transactional id, lock queue) stops a stale one.',
  },
  REDIRECTING_APP: {
    decision: 'resume',
    why: 'Re-apply the overrides and replica count and wait for the rollout again.',
  },
  ACTIVE: {
    decision: 'resume',
    why: 'Make sure the agent runs and republish the routes; finish attaches and drains.',
  },
  ABORTING_ACTIVATION: {
    decision: 'resume',
    why: 'Stop pumps and roll back again; rollback is idempotent per activation.',
  },
  STOPPING_SOURCE: {
    decision: 'resume',
    why: 'Stop at the recorded frontier again; a stopped pump stays stopped.',
  },
  DRAINING_APP: { decision: 'resume', why: 'Keep waiting for the app to drain its shadow.' },
  QUIESCING_FOR_HANDBACK: {
    decision: 'resume',
    why: 'Scale to 0 again and re-verify the shadows are drained.',
  },
  COMMITTING_HANDOFF: {
    decision: 'resume',
    why: 'Setting the group offsets to the frontier is idempotent while the group is empty.',
  },
  RESTORING_APP: {
    decision: 'resume',
    why: 'Remove overrides and restore replicas again, then wait for the rollout.',
  },
  CLEANING_UP: {
    decision: 'resume',
    why: 'Re-verify and delete loss-proof; what cannot be verified is kept and reported.',
  },
  DEGRADED: {
    decision: 'hold',
    why: 'Something was not proven; report and wait for an operator to retry or abort.',
  },
};

export function recover(state: SplitState): TransitionResult {
  const rule = RECOVERY[state.phase];
  const actions: SplitAction[] = [];
  if (rule.decision === 'hold') actions.push(degradedReport(state));
  if (rule.decision === 'resume') {
    if (state.phase === 'ACTIVE') {
      actions.push(
        { type: 'ensureQueueAgent', generation: state.generation },
        { type: 'startPump', queues: [...state.activeQueues], generation: state.generation },
        { type: 'publishRoutes', generation: state.generation },
      );
    } else {
      actions.push(...phaseActions(state));
    }
  }
  if (state.phase !== 'IDLE') actions.push(...routeActions(state).filter((a) => !isDuplicate(actions, a)));
  return { state, actions, outcome: 'applied', note: `recovery in ${state.phase}: ${rule.why}` };
}

function isDuplicate(actions: readonly SplitAction[], action: SplitAction): boolean {
  return action.type === 'publishRoutes' && actions.some((a) => a.type === 'publishRoutes');
}
