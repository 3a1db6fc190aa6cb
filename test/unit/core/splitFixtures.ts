// Builders for phase-machine tests: a two-queue workload and the event sequences that walk it
// through every phase of docs/design.md §6. Not a test file itself (no .test.ts suffix).
import assert from 'node:assert/strict';
import type { SplitEvent } from '../../../core/state/events';
import type { WorkloadPhase } from '../../../core/state/phases';
import { initialState, type SplitState } from '../../../core/state/stateDocument';
import { transition, type TransitionResult } from '../../../core/state/transition';

export const LEASE = '2030-01-01T00:00:00Z';

export function idle(): SplitState {
  return initialState({
    workload: { kind: 'Deployment', namespace: 'team-a', name: 'shop', uid: 'uid-1' },
    installId: 'install-1',
    queues: { orders: 'kafka', invoices: 'rabbitmq' },
  });
}

export function request(routeId: string, filter: Record<string, string>, queues = ['orders']): SplitEvent {
  return {
    type: 'routeRequested',
    route: { routeId, owner: routeId, queues, filter, leaseExpiresAt: LEASE },
  };
}

/** Applies events in order, failing the test on an invalid or rejected outcome unless allowed. */
export function drive(
  state: SplitState,
  events: readonly SplitEvent[],
): { state: SplitState; last: TransitionResult } {
  let current = state;
  let last: TransitionResult = { state, actions: [], outcome: 'ignored', note: 'no events' };
  for (const event of events) {
    last = transition(current, event);
    assert.ok(
      last.outcome === 'applied',
      `${event.type} in ${current.phase} was ${last.outcome}: ${last.note}`,
    );
    current = last.state;
  }
  return { state: current, last };
}

const proof = (phase: WorkloadPhase, queue?: string): SplitEvent => ({
  type: 'proofReported',
  phase,
  ...(queue ? { queue } : {}),
  proven: true,
  evidence: 'checked',
});
const done = (phase: WorkloadPhase, queue: string): SplitEvent => ({ type: 'stepSucceeded', phase, queue });

/** Events from IDLE to the named state, for a split of `orders` by route r1. */
export const PATHS: Record<string, SplitEvent[]> = {};
PATHS.IDLE = [];
PATHS.PREPARING = [request('r1', { user: 'alice' })];
PATHS.QUIESCING_APP = [...PATHS.PREPARING, done('PREPARING', 'orders')];
PATHS.QUIESCING_APP_OBSERVED = [
  ...PATHS.QUIESCING_APP,
  { type: 'workloadObserved', replicas: 3, resourceVersion: 'rv1' },
];
PATHS.STARTING_PUMP = [...PATHS.QUIESCING_APP_OBSERVED, proof('QUIESCING_APP')];
PATHS.REDIRECTING_APP = [...PATHS.STARTING_PUMP, done('STARTING_PUMP', 'orders')];
PATHS.ACTIVE_ROUTE_PREPARING = [...PATHS.REDIRECTING_APP, proof('REDIRECTING_APP')];
PATHS.ACTIVE_ROUTE_ATTACHING = [
  ...PATHS.ACTIVE_ROUTE_PREPARING,
  { type: 'routeShadowsReady', routeId: 'r1' },
];
PATHS.ACTIVE = [...PATHS.ACTIVE_ROUTE_ATTACHING, { type: 'routeAcked', routeId: 'r1', generation: 3 }];
PATHS.ACTIVE_ROUTE_DRAINING = [...PATHS.ACTIVE, { type: 'routeDeleted', routeId: 'r1' }];
PATHS.STOPPING_SOURCE = [
  ...PATHS.ACTIVE_ROUTE_DRAINING,
  { type: 'routeDrained', routeId: 'r1', proven: true, evidence: 'moved 4' },
];
PATHS.DRAINING_APP = [...PATHS.STOPPING_SOURCE, done('STOPPING_SOURCE', 'orders')];
PATHS.QUIESCING_FOR_HANDBACK = [...PATHS.DRAINING_APP, proof('DRAINING_APP', 'orders')];
PATHS.QUIESCING_FOR_HANDBACK_OBSERVED = [
  ...PATHS.QUIESCING_FOR_HANDBACK,
  { type: 'workloadObserved', replicas: 5, resourceVersion: 'rv9' },
];
PATHS.COMMITTING_HANDOFF = [
  ...PATHS.QUIESCING_FOR_HANDBACK_OBSERVED,
  proof('QUIESCING_FOR_HANDBACK', 'orders'),
];
PATHS.RESTORING_APP = [...PATHS.COMMITTING_HANDOFF, done('COMMITTING_HANDOFF', 'orders')];
PATHS.CLEANING_UP = [...PATHS.RESTORING_APP, proof('RESTORING_APP')];
PATHS.IDLE_AFTER_HANDBACK = [...PATHS.CLEANING_UP, proof('CLEANING_UP', 'orders')];
PATHS.ABORTING_ACTIVATION = [
  ...PATHS.STARTING_PUMP,
  { type: 'stepFailed', phase: 'STARTING_PUMP', queue: 'orders', reason: 'broker down' },
];
PATHS.DEGRADED = [
  ...PATHS.ABORTING_ACTIVATION,
  { type: 'stepTimedOut', phase: 'ABORTING_ACTIVATION', queue: 'orders' },
];

export function at(name: keyof typeof PATHS): SplitState {
  const events = PATHS[name];
  assert.ok(events, `no path ${name}`);
  return drive(idle(), events).state;
}
