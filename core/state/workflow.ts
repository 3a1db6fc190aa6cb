// Moves the workload between phases: starting an activation or a handback, advancing when a
// step is complete, failing to ABORTING_ACTIVATION or DEGRADED, and settling once a workflow
// ends. Every function is pure: (state) → (state, actions).
import type { SplitAction } from './actions';
import { queueResources, routeResources, withResources } from './inventory';
import { phaseActions } from './phaseActions';
import type { WorkloadPhase } from './phases';
import type { QueueState, SplitState } from './stateDocument';

export type Outcome = 'applied' | 'ignored' | 'invalid' | 'rejected';

export interface TransitionResult {
  state: SplitState;
  actions: SplitAction[];
  /** applied: state and/or actions follow; ignored: stale or redundant; invalid: not allowed now; rejected: a route was refused. */
  outcome: Outcome;
  note: string;
}

export interface Step {
  state: SplitState;
  actions: SplitAction[];
}

export function result(
  before: SplitState,
  step: Step,
  note: string,
  outcome: Outcome = 'applied',
): TransitionResult {
  const actions: SplitAction[] =
    step.state === before ? step.actions : [{ type: 'persistState' }, ...step.actions];
  return { state: step.state, actions, outcome, note };
}

/**
 * A change the state document need not carry at once: applied in memory, written with the next
 * change that is persisted. Only a lease renewal is one: its truth is the QueueSplit, which the
 * controller lists on every pass and judges expiry from (agent/controller/leaseEvents.ts); the
 * state's copy only tells a renewal apart and times the next pass. Writing each one cost two
 * ConfigMap writes (state and seal) per renewal per split.
 */
export function appliedInMemory(state: SplitState, note: string): TransitionResult {
  return { state, actions: [], outcome: 'applied', note };
}

export function ignored(state: SplitState, note: string): TransitionResult {
  return { state, actions: [], outcome: 'ignored', note };
}

export function invalid(state: SplitState, note: string): TransitionResult {
  return { state, actions: [], outcome: 'invalid', note };
}

function mapQueues(
  queues: SplitState['queues'],
  update: (name: string, queue: QueueState) => QueueState,
): SplitState['queues'] {
  return Object.fromEntries(Object.entries(queues).map(([name, queue]) => [name, update(name, queue)]));
}

/** Sets the phase; the workflow's queues enter it with their step not yet done. */
export function enterPhase(state: SplitState, phase: WorkloadPhase): Step {
  const members = state.workflow?.queues ?? [];
  const next: SplitState = {
    ...state,
    phase,
    queues: mapQueues(state.queues, (name, queue) =>
      members.includes(name) ? { ...queue, phase, done: false } : queue,
    ),
  };
  return { state: next, actions: phaseActions(next) };
}

/** A new activation (or expansion of an active split) for `queues`, under a new epoch. */
export function startActivation(state: SplitState, queues: readonly string[]): Step {
  const epoch = state.activationEpoch + 1;
  const targets = [...new Set(queues)].sort();
  const withEpochs = mapQueues(state.queues, (name, queue) =>
    targets.includes(name) ? { ...queue, epoch } : queue,
  );
  const staged: SplitState = { ...state, queues: withEpochs, activationEpoch: epoch };
  const resources = targets.flatMap((queue) => queueResources(staged, queue, epoch));
  return enterPhase(
    {
      ...staged,
      generation: state.generation + 1,
      workflow: { kind: 'activation', queues: targets, redrains: 0 },
      preActivationReplicas: null,
      preActivationResourceVersion: null,
      inventory: withResources(state.inventory, resources),
    },
    'PREPARING',
  );
}

export function startHandback(state: SplitState): Step {
  return enterPhase(
    {
      ...state,
      workflow: { kind: 'handback', queues: [...state.activeQueues], redrains: 0 },
      handbackReplicas: null,
      handbackResourceVersion: null,
    },
    'STOPPING_SOURCE',
  );
}

/** The current step is complete for every workflow queue: go to the next phase. */
export function advance(state: SplitState): Step {
  switch (state.phase) {
    case 'PREPARING':
      return enterPhase(state, 'QUIESCING_APP');
    case 'QUIESCING_APP':
      return enterPhase(state, 'STARTING_PUMP');
    case 'STARTING_PUMP':
      return enterPhase({ ...state, generation: state.generation + 1 }, 'REDIRECTING_APP');
    case 'REDIRECTING_APP':
      return finishActivation(state);
    case 'ABORTING_ACTIVATION':
      return state.preActivationReplicas !== null
        ? enterPhase({ ...state, generation: state.generation + 1 }, 'RESTORING_APP')
        : enterPhase(state, 'CLEANING_UP');
    case 'STOPPING_SOURCE':
      return enterPhase(state, 'DRAINING_APP');
    case 'DRAINING_APP':
      return enterPhase(state, 'QUIESCING_FOR_HANDBACK');
    case 'QUIESCING_FOR_HANDBACK':
      return enterPhase(state, 'COMMITTING_HANDOFF');
    case 'COMMITTING_HANDOFF':
      return enterPhase({ ...state, generation: state.generation + 1 }, 'RESTORING_APP');
    case 'RESTORING_APP':
      return enterPhase(state, 'CLEANING_UP');
    case 'CLEANING_UP':
      return finishWorkflow(state);
    default:
      return { state, actions: [] };
  }
}

function finishActivation(state: SplitState): Step {
  const joined = state.workflow?.queues ?? [];
  const next: SplitState = {
    ...state,
    phase: 'ACTIVE',
    workflow: null,
    activeQueues: [...new Set([...state.activeQueues, ...joined])].sort(),
    preActivationReplicas: null,
    preActivationResourceVersion: null,
    queues: mapQueues(state.queues, (name, queue) =>
      joined.includes(name) ? { ...queue, phase: 'ACTIVE', done: false } : queue,
    ),
  };
  return settleActive(next);
}

/**
 * In ACTIVE without a workflow: attach pending routes whose queues are split, expand for
 * routes that need more queues, or hand back when no route is left.
 */
export function settleActive(state: SplitState): Step {
  if (state.phase !== 'ACTIVE' || state.workflow !== null) return { state, actions: [] };
  if (state.routes.length === 0) return startHandback(state);
  const actions: SplitAction[] = [];
  let inventory = state.inventory;
  const missing = new Set<string>();
  const routes = state.routes.map((route) => {
    if (route.phase !== 'PENDING') return route;
    const absent = route.queues.filter((queue) => !state.activeQueues.includes(queue));
    if (absent.length > 0) {
      absent.forEach((queue) => missing.add(queue));
      return route;
    }
    inventory = withResources(inventory, routeResources(state, route.routeId, route.queues));
    actions.push({ type: 'prepareRoute', routeId: route.routeId, queues: [...route.queues] });
    return { ...route, phase: 'PREPARING' as const };
  });
  const next: SplitState = { ...state, routes, inventory };
  if (missing.size === 0) return { state: next, actions };
  const expansion = startActivation(next, [...missing]);
  return { state: expansion.state, actions: [...actions, ...expansion.actions] };
}

/** CLEANING_UP is done: the abort or handback is over. */
function finishWorkflow(state: SplitState): Step {
  const workflow = state.workflow;
  if (workflow === null) return { state, actions: [] };
  const ended = workflow.queues;
  const actions: SplitAction[] = [];
  let routes = state.routes;
  if (workflow.kind === 'abort') {
    // Routes waiting for the queues that failed to activate would only trigger the same failure.
    const failed = routes.filter((r) => r.phase === 'PENDING' && r.queues.some((q) => ended.includes(q)));
    failed.forEach((r) =>
      actions.push({ type: 'failRoute', routeId: r.routeId, reason: workflow.reason ?? 'activation failed' }),
    );
    routes = routes.filter((r) => !failed.includes(r));
  }
  const activeQueues =
    workflow.kind === 'handback' ? [] : state.activeQueues.filter((q) => !ended.includes(q));
  const next: SplitState = {
    ...state,
    workflow: null,
    routes,
    activeQueues,
    preActivationReplicas: null,
    preActivationResourceVersion: null,
    handbackReplicas: null,
    handbackResourceVersion: null,
    inventory: state.inventory.filter((r) => !(ended.includes(r.queue) && r.routeId === undefined)),
    checkpoints: Object.fromEntries(
      Object.entries(state.checkpoints).filter(([queue]) => !ended.includes(queue)),
    ),
    queues: mapQueues(state.queues, (name, queue) =>
      ended.includes(name) ? { ...queue, phase: 'INACTIVE', done: false } : queue,
    ),
  };
  if (activeQueues.length > 0) {
    const settled = settleActive({ ...next, phase: 'ACTIVE' });
    return { state: settled.state, actions: [...actions, ...settled.actions] };
  }
  if (routes.length > 0) {
    const restart = startActivation(
      { ...next, phase: 'IDLE' },
      routes.flatMap((r) => r.queues),
    );
    return { state: restart.state, actions: [...actions, ...restart.actions] };
  }
  // No removeFinalizer here: the handback finalizer goes with the state document, once the
  // workload says HandedBack (agent/controller/coordinator.ts, finishIfIdle), so a status write
  // that fails is retried instead of the workload saying HandingBack for good.
  return {
    state: { ...next, phase: 'IDLE' },
    actions: [...actions, { type: 'reapQueueAgent' }, { type: 'releaseLease' }],
  };
}

/**
 * PREPARING's preflight refused `queue` before the queue-agent touched the broker (docs/design.md
 * §6 "Refused activations"): the split cannot be, so every route that needs the queue is
 * rejected with the reason, and the queue leaves the activation with its inventory — none of
 * it was ever created, so there is nothing to roll back, delete or record. Queues that did
 * prepare are rolled back as any aborted activation; with none, the activation ends here and
 * the workload is released (queue-agent, Lease; the finalizer and the state go in finishIfIdle).
 */
export function refuseQueue(state: SplitState, queue: string, reason: string): Step {
  const workflow = state.workflow;
  if (workflow === null) return { state, actions: [] };
  const refused = state.routes.filter((r) => r.queues.includes(queue));
  const actions: SplitAction[] = refused.map((r) => ({
    type: 'rejectRoute',
    routeId: r.routeId,
    reason: 'SourceNotSplittable',
    errors: [
      {
        path: `queue ${queue}`,
        problem: `the queue-agent's preflight refused its source: ${reason}.`,
        fix: 'Nothing was cut over and nothing was changed: the application keeps consuming its source. Split a source the preflight accepts (docs/design.md §3); a new split is evaluated afresh.',
      },
    ],
  }));
  const remaining = workflow.queues.filter((q) => q !== queue);
  const next: SplitState = {
    ...state,
    routes: state.routes.filter((r) => !refused.includes(r)),
    inventory: state.inventory.filter((r) => !(r.queue === queue && r.routeId === undefined)),
    checkpoints: Object.fromEntries(Object.entries(state.checkpoints).filter(([q]) => q !== queue)),
    queues: mapQueues(state.queues, (name, q) =>
      name === queue ? { ...q, phase: 'INACTIVE', done: false } : q,
    ),
    workflow: remaining.length > 0 ? { ...workflow, queues: remaining } : null,
  };
  if (remaining.length > 0) {
    const aborted = failWorkflow(next, 'ABORTING_ACTIVATION', `${queue} refused by its preflight: ${reason}`);
    return { state: aborted.state, actions: [...actions, ...aborted.actions] };
  }
  // Nothing of this activation exists: the workload is where it was before it began.
  const settled: SplitState = { ...next, preActivationReplicas: null, preActivationResourceVersion: null };
  if (settled.activeQueues.length > 0) {
    const active = settleActive({ ...settled, phase: 'ACTIVE' });
    return { state: active.state, actions: [...actions, ...active.actions] };
  }
  if (settled.routes.length > 0) {
    const restart = startActivation(
      { ...settled, phase: 'IDLE' },
      settled.routes.flatMap((r) => r.queues),
    );
    return { state: restart.state, actions: [...actions, ...restart.actions] };
  }
  return {
    state: { ...settled, phase: 'IDLE' },
    actions: [...actions, { type: 'reapQueueAgent' }, { type: 'releaseLease' }],
  };
}

/** A failure, a timeout or a missing proof: abort the activation, or hold in DEGRADED. */
export function failWorkflow(
  state: SplitState,
  target: 'ABORTING_ACTIVATION' | 'DEGRADED',
  reason: string,
  queue?: string,
): Step {
  if (target === 'ABORTING_ACTIVATION' && state.workflow !== null) {
    return enterPhase(
      { ...state, workflow: { ...state.workflow, kind: 'abort', reason } },
      'ABORTING_ACTIVATION',
    );
  }
  const affected = state.workflow?.queues ?? state.activeQueues;
  const next: SplitState = {
    ...state,
    phase: 'DEGRADED',
    degraded: { from: state.phase, reason, ...(queue !== undefined ? { queue } : {}) },
    queues: mapQueues(state.queues, (name, q) => (affected.includes(name) ? { ...q, phase: 'DEGRADED' } : q)),
  };
  return { state: next, actions: phaseActions(next) };
}

/** Leaves DEGRADED by redoing the phase it came from (every step is idempotent). */
export function retryDegraded(state: SplitState): Step {
  const from = state.degraded?.from;
  if (from === undefined) return { state, actions: [] };
  const cleared: SplitState = {
    ...state,
    degraded: null,
    workflow: state.workflow ? { ...state.workflow, redrains: 0 } : null,
  };
  if (from === 'ACTIVE') {
    const back: SplitState = {
      ...cleared,
      phase: 'ACTIVE',
      queues: mapQueues(cleared.queues, (name, q) =>
        cleared.activeQueues.includes(name) ? { ...q, phase: 'ACTIVE', done: false } : q,
      ),
    };
    const settled = settleActive(back);
    // Restart the pumps and republish routes: the agent may have stopped on the fault. The env
    // overrides go back too: the fault may have been someone changing them (docs/design.md, "Drift").
    return {
      state: settled.state,
      actions: [
        { type: 'ensureQueueAgent', generation: back.generation },
        { type: 'startPump', queues: [...back.activeQueues], generation: back.generation },
        { type: 'publishRoutes', generation: back.generation },
        { type: 'applyOverrides', queues: [...back.activeQueues], generation: back.generation },
        ...settled.actions,
      ],
    };
  }
  return enterPhase(cleared, from);
}
