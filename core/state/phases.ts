// The phases of docs/design.md §6 and, per phase, what completes its step and where a failure goes.
// Kept as data so the transition function, the recovery table and the tests share one truth.

export const WORKLOAD_PHASES = [
  'IDLE',
  // activation
  'PREPARING',
  'QUIESCING_APP',
  'STARTING_PUMP',
  'REDIRECTING_APP',
  'ACTIVE',
  'ABORTING_ACTIVATION',
  // final deactivation (handback)
  'STOPPING_SOURCE',
  'DRAINING_APP',
  'QUIESCING_FOR_HANDBACK',
  'COMMITTING_HANDOFF',
  // shared by abort and handback
  'RESTORING_APP',
  'CLEANING_UP',
  'DEGRADED',
] as const;
export type WorkloadPhase = (typeof WORKLOAD_PHASES)[number];

/** A queue's own phase: the workload phase it is in a step of, ACTIVE, or not split at all. */
export const QUEUE_PHASES = [...WORKLOAD_PHASES, 'INACTIVE'] as const;
export type QueuePhase = (typeof QUEUE_PHASES)[number];

export const ROUTE_PHASES = ['PENDING', 'PREPARING', 'ATTACHING', 'ACTIVE', 'DRAINING', 'DEGRADED'] as const;
export type RoutePhase = (typeof ROUTE_PHASES)[number];

export const ACTIVATION_PHASES: readonly WorkloadPhase[] = [
  'PREPARING',
  'QUIESCING_APP',
  'STARTING_PUMP',
  'REDIRECTING_APP',
];
export const HANDBACK_PHASES: readonly WorkloadPhase[] = [
  'STOPPING_SOURCE',
  'DRAINING_APP',
  'QUIESCING_FOR_HANDBACK',
  'COMMITTING_HANDOFF',
];

export interface StepSpec {
  /** `queue`: every workflow queue reports; `workload`: one report for the whole workload. */
  scope: 'queue' | 'workload';
  /** `proof`: only a broker/API proof completes the step; a plain success report is refused. */
  completion: 'success' | 'proof';
  /** Where a failure, a timeout or a missing proof leads (never to the next phase). */
  onFailure: 'ABORTING_ACTIVATION' | 'DEGRADED';
}

/** Phases with a step; IDLE, ACTIVE and DEGRADED wait for events instead. */
export const STEPS: Readonly<Partial<Record<WorkloadPhase, StepSpec>>> = {
  PREPARING: { scope: 'queue', completion: 'success', onFailure: 'ABORTING_ACTIVATION' },
  QUIESCING_APP: { scope: 'workload', completion: 'proof', onFailure: 'ABORTING_ACTIVATION' },
  STARTING_PUMP: { scope: 'queue', completion: 'success', onFailure: 'ABORTING_ACTIVATION' },
  REDIRECTING_APP: { scope: 'workload', completion: 'proof', onFailure: 'ABORTING_ACTIVATION' },
  ABORTING_ACTIVATION: { scope: 'queue', completion: 'proof', onFailure: 'DEGRADED' },
  STOPPING_SOURCE: { scope: 'queue', completion: 'success', onFailure: 'DEGRADED' },
  DRAINING_APP: { scope: 'queue', completion: 'proof', onFailure: 'DEGRADED' },
  QUIESCING_FOR_HANDBACK: { scope: 'queue', completion: 'proof', onFailure: 'DEGRADED' },
  COMMITTING_HANDOFF: { scope: 'queue', completion: 'success', onFailure: 'DEGRADED' },
  RESTORING_APP: { scope: 'workload', completion: 'proof', onFailure: 'DEGRADED' },
  CLEANING_UP: { scope: 'queue', completion: 'proof', onFailure: 'DEGRADED' },
};

/** How often QUIESCING_FOR_HANDBACK may send the app back to drain before giving up. */
export const MAX_REDRAINS = 3;

export function isActivationPhase(phase: WorkloadPhase): boolean {
  return ACTIVATION_PHASES.includes(phase);
}
