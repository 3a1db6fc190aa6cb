// Route events (docs/design.md §6 attach/detach): a route is PENDING until its queues are split, then
// PREPARING (session shadows), ATTACHING (new route generation published, waiting for the
// agent's ack), ACTIVE, and DRAINING when deleted, expired or failed. A drain that cannot be
// proven leaves the route DEGRADED with its resources kept; it never counts as done.
import { retryHint } from './operatorRetry';
import { isAnyOf, sameFilter } from '../filter';
import { fieldError, type FieldError } from '../result';
import { candidateOverlapErrors } from '../routeOverlap';
import type { SplitAction } from './actions';
import type { KeptResource, RouteRequest } from './events';
import { MAX_ROUTES_PER_WORKLOAD } from './limits';
import { isActivationPhase } from './phases';
import type { BrokerResource, RouteState, SplitState } from './stateDocument';
import {
  appliedInMemory,
  failWorkflow,
  ignored,
  invalid,
  result,
  settleActive,
  startActivation,
  type Step,
  type TransitionResult,
} from './workflow';

export function routeRequested(state: SplitState, request: RouteRequest): TransitionResult {
  const existing = state.routes.find((r) => r.routeId === request.routeId);
  if (existing) {
    const same =
      existing.queues.join() === [...new Set(request.queues)].sort().join() &&
      sameFilter(existing.filter, request.filter);
    return same
      ? ignored(state, `route ${request.routeId} is already known`)
      : invalid(
          state,
          `route ${request.routeId} exists with other queues or filter; route ids are immutable`,
        );
  }
  if (state.routes.length >= MAX_ROUTES_PER_WORKLOAD) {
    const errors = [
      fieldError(
        'spec',
        `${state.workload.kind} ${state.workload.name} already carries ${state.routes.length} splits, the most one workload can hold (${MAX_ROUTES_PER_WORKLOAD}): their state must fit in one ConfigMap.`,
        'Wait until a teammate stops their split, or stop one of yours, then start this split again.',
      ),
    ];
    return {
      state,
      actions: [{ type: 'rejectRoute', routeId: request.routeId, errors, reason: 'TooManySplits' }],
      outcome: 'rejected',
      note: errors[0]!.problem,
    };
  }
  const errors = requestErrors(state, request);
  if (errors.length > 0) {
    return {
      state,
      actions: [
        {
          type: 'rejectRoute',
          routeId: request.routeId,
          errors,
          reason: errors.some((e) => e.path.startsWith('spec.queues')) ? 'UnknownQueue' : 'FilterOverlaps',
        },
      ],
      outcome: 'rejected',
      note: errors[0]?.problem ?? 'rejected',
    };
  }
  const route: RouteState = {
    routeId: request.routeId,
    owner: request.owner,
    queues: [...new Set(request.queues)].sort(),
    filter: { ...request.filter },
    phase: 'PENDING',
    generation: state.generation,
    leaseExpiresAt: request.leaseExpiresAt,
    ...(request.publicKey !== undefined ? { publicKey: request.publicKey } : {}),
    ...(request.splitUid !== undefined ? { splitUid: request.splitUid } : {}),
  };
  const added: SplitState = { ...state, routes: [...state.routes, route] };
  if (state.phase === 'IDLE') {
    return result(state, startActivation(added, route.queues), `activating ${route.queues.join(', ')}`);
  }
  if (state.phase === 'ACTIVE' && state.workflow === null) {
    return result(state, settleActive(added), `attaching route ${route.routeId}`);
  }
  return result(
    state,
    { state: added, actions: [] },
    `route ${route.routeId} waits until the workload is ACTIVE (now ${state.phase})`,
  );
}

function requestErrors(state: SplitState, request: RouteRequest): FieldError[] {
  const errors: FieldError[] = [];
  if (request.queues.length === 0) {
    errors.push(fieldError('spec.queues', 'names no queue.', 'Pick at least one declared queue.'));
  }
  const declared = Object.keys(state.queues);
  request.queues.forEach((queue, index) => {
    if (!Object.hasOwn(state.queues, queue)) {
      errors.push(
        fieldError(
          `spec.queues[${index}]`,
          `"${queue}" is not declared by ${state.workload.kind} ${state.workload.name}.`,
          `Use one of: ${declared.join(', ') || '(none declared)'}.`,
        ),
      );
    }
  });
  const sharing = state.routes.filter((r) => r.queues.some((q) => request.queues.includes(q)));
  errors.push(
    ...candidateOverlapErrors(
      { routeId: request.routeId, filter: request.filter },
      sharing,
      isAnyOf(request.filter) ? 'spec.match' : 'spec.filter',
    ),
  );
  return errors;
}

/** Deletion or lease expiry: stop classifying to the route and drain what it has. */
export function routeReleased(state: SplitState, routeId: string, why: string): TransitionResult {
  const route = state.routes.find((r) => r.routeId === routeId);
  if (!route) return ignored(state, `route ${routeId} is unknown (already gone)`);
  if (route.phase === 'DRAINING') return ignored(state, `route ${routeId} is already draining`);
  // A degraded drain waits for an operator's retry; its deleted split must not restart it on
  // every pass (the status would flap between Draining and Degraded).
  if (route.phase === 'DEGRADED')
    return ignored(state, `route ${routeId} is degraded; an operator retries it`);
  if (route.phase === 'PENDING') return dropPending(state, route, why);
  return result(state, startDrain(state, route, why), `route ${routeId} draining (${why})`);
}

function dropPending(state: SplitState, route: RouteState, why: string): TransitionResult {
  const next: SplitState = { ...state, routes: state.routes.filter((r) => r !== route) };
  const workflowQueues = state.workflow?.kind === 'activation' ? state.workflow.queues : [];
  const stillWanted = next.routes.some((r) => r.queues.some((q) => workflowQueues.includes(q)));
  if (isActivationPhase(state.phase) && workflowQueues.length > 0 && !stillWanted) {
    const aborted = failWorkflow(
      next,
      'ABORTING_ACTIVATION',
      'every route that asked for these queues is gone',
    );
    return result(
      state,
      aborted,
      `route ${route.routeId} removed (${why}); nobody needs the activation any more`,
    );
  }
  return result(state, { state: next, actions: [] }, `pending route ${route.routeId} removed (${why})`);
}

function startDrain(state: SplitState, route: RouteState, why: string): Step {
  const generation = state.generation + 1;
  const routes = state.routes.map((r) =>
    r === route ? { ...r, phase: 'DRAINING' as const, generation, lastError: why } : r,
  );
  return {
    state: { ...state, generation, routes },
    actions: [
      { type: 'publishRoutes', generation },
      { type: 'drainRoute', routeId: route.routeId, queues: [...route.queues], generation },
    ],
  };
}

export function routeShadowsReady(state: SplitState, routeId: string): TransitionResult {
  const route = state.routes.find((r) => r.routeId === routeId);
  if (route?.phase !== 'PREPARING') return ignored(state, `route ${routeId} is not preparing`);
  const generation = state.generation + 1;
  const routes = state.routes.map((r) =>
    r === route ? { ...r, phase: 'ATTACHING' as const, generation } : r,
  );
  return result(
    state,
    { state: { ...state, generation, routes }, actions: [{ type: 'publishRoutes', generation }] },
    `route ${routeId} published at generation ${generation}`,
  );
}

export function routeAcked(state: SplitState, routeId: string, generation: number): TransitionResult {
  const route = state.routes.find((r) => r.routeId === routeId);
  if (route?.phase !== 'ATTACHING') return ignored(state, `route ${routeId} is not attaching`);
  if (generation < route.generation) {
    return ignored(state, `ack for generation ${generation} is older than the route's ${route.generation}`);
  }
  const routes = state.routes.map((r) => (r === route ? { ...r, phase: 'ACTIVE' as const } : r));
  return result(state, { state: { ...state, routes }, actions: [] }, `route ${routeId} active`);
}

export function routeDrained(
  state: SplitState,
  routeId: string,
  proven: boolean,
  evidence: string,
  kept: readonly KeptResource[] = [],
): TransitionResult {
  const route = state.routes.find((r) => r.routeId === routeId);
  if (route?.phase !== 'DRAINING') return ignored(state, `route ${routeId} is not draining`);
  if (!proven) {
    const routes = state.routes.map((r) =>
      r === route ? { ...r, phase: 'DEGRADED' as const, lastError: `drain not proven: ${evidence}` } : r,
    );
    const action: SplitAction = {
      type: 'reportDegraded',
      reason: `route ${routeId}: drain not proven (${evidence})`,
      nextAction: `Its session shadow is kept with its messages. Check the broker, then retry the route: ${retryHint(state.workload)}`,
    };
    return result(state, { state: { ...state, routes }, actions: [action] }, `route ${routeId} degraded`);
  }
  const owned = (r: BrokerResource) => r.routeId === routeId;
  const keptNames = new Map(kept.map((k) => [k.name, k.reason]));
  const pending = state.inventory
    .filter((r) => owned(r) && keptNames.has(r.name))
    .map((resource) => ({ resource, reason: keptNames.get(resource.name) ?? 'kept' }));
  const next: SplitState = {
    ...state,
    routes: state.routes.filter((r) => r !== route),
    inventory: state.inventory.filter((r) => !owned(r)),
    cleanupPending: [...state.cleanupPending, ...pending],
  };
  return result(state, settleActive(next), `route ${routeId} drained`);
}

/** A failed or timed-out attach drains (the shadow may hold messages); a failed drain degrades. */
export function routeFailed(state: SplitState, routeId: string, reason: string): TransitionResult {
  const route = state.routes.find((r) => r.routeId === routeId);
  if (!route) return ignored(state, `route ${routeId} is unknown`);
  if (route.phase === 'PREPARING' || route.phase === 'ATTACHING') {
    return result(state, startDrain(state, route, reason), `route ${routeId} failed to attach; draining`);
  }
  if (route.phase === 'DRAINING') {
    const routes = state.routes.map((r) =>
      r === route ? { ...r, phase: 'DEGRADED' as const, lastError: reason } : r,
    );
    const action: SplitAction = {
      type: 'reportDegraded',
      reason: `route ${routeId}: drain failed (${reason})`,
      nextAction: `Its session shadow is kept with its messages. Fix the cause (a consumer still attached to it?), then retry the route: ${retryHint(state.workload)}`,
    };
    return result(state, { state: { ...state, routes }, actions: [action] }, `route ${routeId} degraded`);
  }
  return ignored(state, `route ${routeId} is ${route.phase}; nothing is in progress for it`);
}

export function leaseRenewed(state: SplitState, routeId: string, expiresAt: string): TransitionResult {
  const route = state.routes.find((r) => r.routeId === routeId);
  if (!route || route.phase === 'DRAINING') return ignored(state, `route ${routeId} has no lease to renew`);
  if (Number.isNaN(Date.parse(expiresAt))) return invalid(state, `lease expiry "${expiresAt}" is not a time`);
  if (route.leaseExpiresAt === expiresAt) return ignored(state, 'lease unchanged');
  const routes = state.routes.map((r) => (r === route ? { ...r, leaseExpiresAt: expiresAt } : r));
  return appliedInMemory({ ...state, routes }, `lease of ${routeId} renewed`);
}

/** Retry of a DEGRADED route: drain it again. */
export function retryRoute(state: SplitState, routeId: string): TransitionResult {
  const route = state.routes.find((r) => r.routeId === routeId);
  if (route?.phase !== 'DEGRADED') return ignored(state, `route ${routeId} is not degraded`);
  return result(state, startDrain(state, route, 'retry'), `route ${routeId} draining again`);
}

/** Route ids whose lease ran out at `now` (ms since the epoch); the controller sends leaseExpired. */
export function expiredRoutes(state: SplitState, now: number): string[] {
  return state.routes
    .filter((r) => r.phase !== 'DRAINING' && Date.parse(r.leaseExpiresAt) <= now)
    .map((r) => r.routeId);
}
