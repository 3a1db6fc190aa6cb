// How far a workload's current phase has come: when it was entered and under which generation
// (a step times out from then, and only reports made since count), and what blocks it now (the
// statuses show it). The event sources and the action runner both record what blocks.
import type { SplitState } from '../../core/state/stateDocument';

export class PhaseProgress {
  entered = { phase: '' as string, generation: 0, at: Date.now() };
  /** Why the phase has not finished yet, for the statuses; cleared when the phase changes. */
  blocking: string | undefined;
  /**
   * A window that holds the workload at zero (a rollback, the handback) scaled it down again
   * after someone else scaled it up: how often, and to what they scaled it last.
   */
  rescaled: { times: number; replicas: number } | undefined;
  /**
   * When a wait that only the clock ends is over (the redirected pods' stable window): the
   * controller passes the workload then rather than at its next interval pass.
   */
  recheckAt: number | undefined;

  /** Starts the clock (and forgets what blocked) when the phase changed. */
  track(state: SplitState): void {
    if (this.entered.phase !== state.phase) {
      this.entered = { phase: state.phase, generation: state.generation, at: Date.now() };
      this.blocking = undefined;
      this.rescaled = undefined;
      this.recheckAt = undefined;
    }
  }

  /** Whether the current phase has lasted longer than `ms`. */
  longerThan(ms: number): boolean {
    return Date.now() - this.entered.at > ms;
  }
}
