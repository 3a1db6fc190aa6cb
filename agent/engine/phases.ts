// The phases each engine step may run in, in one table (as kafkajs declares its transaction
// state machine): `runs` are the phases where the step does its work; `repeats` those where it
// is already done and answers `done` again without touching the broker (steps are idempotent).
// In any other phase the call is a controller bug, refused without a change.
import type { Engine, EnginePhase } from './contract';

export type StepName = Exclude<keyof Engine, 'provider' | 'status' | 'shadowLag' | 'appConsumers' | 'close'>;

export interface StepPhases {
  readonly runs: readonly EnginePhase[];
  readonly repeats: readonly EnginePhase[];
}

export const STEP_PHASES = {
  prepare: {
    runs: ['new'],
    repeats: ['prepared', 'running', 'stopped', 'app-drained', 'handed-off', 'aborted', 'cleaned'],
  },
  start: { runs: ['prepared', 'stopped', 'app-drained'], repeats: ['running'] },
  reconcileRoutes: { runs: ['prepared', 'running', 'stopped', 'app-drained'], repeats: [] },
  // After the handback too: a route's drain may finish after the split's.
  drainRoute: {
    runs: ['prepared', 'running', 'stopped', 'app-drained', 'handed-off', 'cleaned'],
    repeats: [],
  },
  // Runs again in every later phase, answering the same handoff.
  stop: {
    runs: ['prepared', 'running', 'stopped', 'app-drained', 'handed-off', 'aborted', 'cleaned'],
    repeats: [],
  },
  abort: { runs: ['prepared', 'running', 'stopped', 'app-drained'], repeats: ['aborted', 'cleaned'] },
  drainApplication: { runs: ['stopped', 'app-drained'], repeats: ['handed-off', 'cleaned'] },
  commitHandoff: { runs: ['stopped', 'app-drained'], repeats: ['handed-off', 'cleaned'] },
  verifyCleanupReady: { runs: ['handed-off', 'aborted'], repeats: ['cleaned'] },
  cleanup: { runs: ['handed-off', 'aborted'], repeats: ['cleaned'] },
  // A repeat is done only with the checkpoint the engine would write itself (kernel.ts).
  recover: {
    runs: ['new'],
    repeats: ['prepared', 'running', 'stopped', 'app-drained', 'handed-off', 'aborted', 'cleaned'],
  },
} as const satisfies Record<StepName, StepPhases>;

/** Whether `step` runs, repeats, or is refused in `phase`. */
export function phaseRule(step: StepName, phase: EnginePhase): 'runs' | 'repeats' | 'refused' {
  const rule: StepPhases = STEP_PHASES[step];
  if (rule.runs.includes(phase)) return 'runs';
  if (rule.repeats.includes(phase)) return 'repeats';
  return 'refused';
}
