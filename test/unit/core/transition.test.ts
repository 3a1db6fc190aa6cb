// The phase machine's paths through docs/design.md §6: activation, attach, detach, handback, abort,
// degradation and retry, with the actions each step asks for.
import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import type { SplitAction } from '../../../core/state/actions';
import type { SplitEvent } from '../../../core/state/events';
import { transition } from '../../../core/state/transition';
import { at, drive, idle, LEASE, request } from './splitFixtures';

const types = (actions: readonly SplitAction[]) => actions.map((a) => a.type);

describe('activation', () => {
  test('a first route starts PREPARING: state and inventory are persisted before shadows are created', () => {
    const result = transition(idle(), request('r1', { user: 'alice' }));
    assert.equal(result.outcome, 'applied');
    assert.equal(result.state.phase, 'PREPARING');
    assert.equal(result.state.activationEpoch, 1);
    assert.deepEqual(types(result.actions), [
      'persistState',
      'acquireLease',
      'ensureFinalizer',
      'ensureQueueAgent',
      'prepareQueues',
    ]);
    assert.deepEqual(
      result.state.inventory.map((r) => r.kind),
      ['topic', 'group', 'group', 'transactionalId'],
    );
    assert.ok(result.state.inventory.every((r) => r.name.startsWith('qs-') && r.queue === 'orders'));
    assert.equal(result.state.routes[0]!.phase, 'PENDING');
  });

  test('QUIESCING_APP records the replicas before scaling to 0 with a resourceVersion precondition', () => {
    const entered = at('QUIESCING_APP');
    assert.equal(entered.preActivationReplicas, null);
    const observed = transition(entered, { type: 'workloadObserved', replicas: 3, resourceVersion: 'rv1' });
    assert.equal(observed.state.preActivationReplicas, 3);
    assert.deepEqual(observed.actions, [
      { type: 'persistState' },
      { type: 'scaleWorkload', replicas: 0, resourceVersion: 'rv1' },
      { type: 'awaitQuiesce', queues: ['orders'] },
    ]);
  });

  test('a quiesce scale an autoscaler raced reads the replicas again instead of failing; elsewhere it is ignored', () => {
    const observed = at('QUIESCING_APP_OBSERVED');
    assert.notEqual(observed.preActivationReplicas, null);
    const raced = transition(observed, { type: 'scaleRaced' });
    assert.equal(raced.outcome, 'applied');
    assert.equal(raced.state.phase, 'QUIESCING_APP');
    assert.equal(raced.state.preActivationReplicas, null);
    assert.equal(raced.state.preActivationResourceVersion, null);
    assert.deepEqual(raced.actions, [{ type: 'persistState' }, { type: 'observeWorkload' }]);
    const again = transition(raced.state, { type: 'workloadObserved', replicas: 4, resourceVersion: 'rv2' });
    assert.deepEqual(again.actions.slice(1, 2), [
      { type: 'scaleWorkload', replicas: 0, resourceVersion: 'rv2' },
    ]);

    const handback = transition(at('QUIESCING_FOR_HANDBACK'), {
      type: 'workloadObserved',
      replicas: 5,
      resourceVersion: 'rv9',
    }).state;
    const racedBack = transition(handback, { type: 'scaleRaced' });
    assert.equal(racedBack.state.handbackReplicas, null);
    assert.deepEqual(racedBack.actions, [{ type: 'persistState' }, { type: 'observeWorkload' }]);

    assert.equal(transition(at('QUIESCING_APP'), { type: 'scaleRaced' }).outcome, 'ignored');
    assert.equal(transition(at('REDIRECTING_APP'), { type: 'scaleRaced' }).outcome, 'ignored');
  });

  test('proof-gated steps refuse a bare success report', () => {
    const state = at('QUIESCING_APP_OBSERVED');
    const result = transition(state, { type: 'stepSucceeded', phase: 'QUIESCING_APP' });
    assert.equal(result.outcome, 'invalid');
    assert.match(result.note, /only with a proof/);
    assert.equal(result.state, state);
  });

  test("REDIRECTING_APP overrides env, restores replicas from the quiesce's 0 only, and waits for the rollout", () => {
    const result = drive(idle(), [
      request('r1', { user: 'alice' }),
      { type: 'stepSucceeded', phase: 'PREPARING', queue: 'orders' },
      { type: 'workloadObserved', replicas: 3, resourceVersion: 'rv1' },
      { type: 'proofReported', phase: 'QUIESCING_APP', proven: true, evidence: '0 pods, 0 consumers' },
      { type: 'stepSucceeded', phase: 'STARTING_PUMP', queue: 'orders' },
    ]).last;
    assert.deepEqual(result.actions.slice(1), [
      { type: 'applyOverrides', queues: ['orders'], generation: 2 },
      // `from: 0`: a person's scale meanwhile is left for the phase's check to name (workloads.scale).
      { type: 'scaleWorkload', replicas: 3, from: 0 },
      { type: 'awaitRollout', generation: 2, overriddenQueues: ['orders'] },
    ]);
  });

  test('ACTIVE: pending routes attach without an app restart', () => {
    const result = drive(at('REDIRECTING_APP'), [
      { type: 'proofReported', phase: 'REDIRECTING_APP', proven: true, evidence: 'ready' },
    ]).last;
    assert.equal(result.state.phase, 'ACTIVE');
    assert.deepEqual(result.state.activeQueues, ['orders']);
    assert.equal(result.state.preActivationReplicas, null);
    assert.deepEqual(types(result.actions), ['persistState', 'prepareRoute']);
    assert.ok(!types(result.actions).includes('scaleWorkload'));
    assert.equal(result.state.routes[0]!.phase, 'PREPARING');
    assert.equal(result.state.inventory.filter((r) => r.routeId === 'r1').length, 3);
  });

  test('a route is ACTIVE only after the agent acks its generation', () => {
    const attaching = at('ACTIVE_ROUTE_ATTACHING');
    assert.equal(
      transition(attaching, { type: 'routeAcked', routeId: 'r1', generation: 2 }).outcome,
      'ignored',
    );
    const acked = transition(attaching, { type: 'routeAcked', routeId: 'r1', generation: 3 });
    assert.equal(acked.state.routes[0]!.phase, 'ACTIVE');
  });
});

describe('attach and detach while active', () => {
  test('a second, non-overlapping route attaches; an overlapping one is rejected naming the other', () => {
    const active = at('ACTIVE');
    const second = transition(active, request('r2', { user: 'bob' }));
    assert.equal(second.state.routes[1]!.phase, 'PREPARING');
    assert.deepEqual(types(second.actions), ['persistState', 'prepareRoute']);
    const overlap = transition(active, request('r3', { team: 'x' }));
    assert.equal(overlap.outcome, 'rejected');
    assert.equal(overlap.state, active);
    const reject = overlap.actions[0];
    assert.ok(reject?.type === 'rejectRoute');
    assert.match(reject.errors[0]!.problem, /overlaps route "r1"/);
    assert.equal(reject.errors[0]!.path, 'spec.filter');
  });

  test('routes on different queues never conflict; unknown queues are rejected', () => {
    const active = at('ACTIVE');
    const other = transition(active, request('r2', { user: 'alice' }, ['invoices']));
    assert.equal(other.outcome, 'applied');
    const unknown = transition(active, request('r3', { user: 'x' }, ['payments']));
    assert.equal(unknown.outcome, 'rejected');
    assert.match(
      JSON.stringify(unknown.actions),
      /not declared by Deployment shop.*orders, invoices|Use one of: orders, invoices/,
    );
  });

  test('a route needing an inactive queue expands the split under a new epoch', () => {
    const result = transition(at('ACTIVE'), request('r2', { user: 'bob' }, ['orders', 'invoices']));
    assert.equal(result.state.phase, 'PREPARING');
    assert.deepEqual(result.state.workflow?.queues, ['invoices']);
    assert.equal(result.state.activationEpoch, 2);
    assert.deepEqual(result.state.activeQueues, ['orders']);
    assert.equal(result.state.queues.orders!.phase, 'ACTIVE');
    assert.equal(result.state.queues.invoices!.epoch, 2);
  });

  test('detach: the route drains (stop classifying, then drain) and the last one starts the handback', () => {
    const draining = transition(at('ACTIVE'), { type: 'routeDeleted', routeId: 'r1' });
    assert.equal(draining.state.routes[0]!.phase, 'DRAINING');
    assert.deepEqual(types(draining.actions), ['persistState', 'publishRoutes', 'drainRoute']);
    const drained = transition(draining.state, {
      type: 'routeDrained',
      routeId: 'r1',
      proven: true,
      evidence: 'ok',
    });
    assert.equal(drained.state.phase, 'STOPPING_SOURCE');
    assert.deepEqual(drained.state.routes, []);
    assert.equal(drained.state.inventory.filter((r) => r.routeId === 'r1').length, 0);
    assert.deepEqual(types(drained.actions), ['persistState', 'stopSourceAtFrontier']);
  });

  test('an expired lease drains the route like a deletion; renewals move the expiry', () => {
    const renewed = transition(at('ACTIVE'), {
      type: 'leaseRenewed',
      routeId: 'r1',
      expiresAt: '2031-01-01T00:00:00Z',
    });
    assert.equal(renewed.state.routes[0]!.leaseExpiresAt, '2031-01-01T00:00:00Z');
    const expired = transition(renewed.state, { type: 'leaseExpired', routeId: 'r1' });
    assert.equal(expired.state.routes[0]!.phase, 'DRAINING');
    assert.equal(expired.state.routes[0]!.lastError, 'lease expired');
  });

  // controller-scale bench, 200 workloads × 5 splits: every sidecar's renewal (each 20 s) made the
  // controller write the state document and its seal, 135 ConfigMap writes a second with nothing
  // else changing (0.72 requests/s per steady workload; the goal is 0.05).
  test('a lease renewal alone is not written: the QueueSplit holds it, and the next write carries it', () => {
    const renewed = transition(at('ACTIVE'), {
      type: 'leaseRenewed',
      routeId: 'r1',
      expiresAt: '2031-01-01T00:00:00Z',
    });
    assert.equal(renewed.outcome, 'applied');
    assert.deepEqual(types(renewed.actions), []);
    const deleted = transition(renewed.state, { type: 'routeDeleted', routeId: 'r1' });
    assert.equal(types(deleted.actions)[0], 'persistState');
  });

  test('an unproven drain leaves the route DEGRADED, its resources kept; retry drains again', () => {
    const degraded = transition(at('ACTIVE_ROUTE_DRAINING'), {
      type: 'routeDrained',
      routeId: 'r1',
      proven: false,
      evidence: 'session group still has a member',
    });
    assert.equal(degraded.state.routes[0]!.phase, 'DEGRADED');
    assert.equal(degraded.state.phase, 'ACTIVE');
    assert.equal(degraded.state.inventory.filter((r) => r.routeId === 'r1').length, 3);
    assert.ok(types(degraded.actions).includes('reportDegraded'));
    const retried = transition(degraded.state, { type: 'retryRequested', routeId: 'r1' });
    assert.equal(retried.state.routes[0]!.phase, 'DRAINING');
  });

  test('attach failures and timeouts drain; they never activate the route', () => {
    for (const event of [
      { type: 'routeTimedOut', routeId: 'r1' },
      { type: 'routeStepFailed', routeId: 'r1', reason: 'topic create failed' },
    ] as SplitEvent[]) {
      for (const name of ['ACTIVE_ROUTE_PREPARING', 'ACTIVE_ROUTE_ATTACHING'] as const) {
        const result = transition(at(name), event);
        assert.equal(result.state.routes[0]!.phase, 'DRAINING', `${event.type} in ${name}`);
      }
    }
    const drainTimeout = transition(at('ACTIVE_ROUTE_DRAINING'), { type: 'routeTimedOut', routeId: 'r1' });
    assert.equal(drainTimeout.state.routes[0]!.phase, 'DEGRADED');
  });

  test('a kept session queue (no loss-proof delete) is reported as cleanup-pending', () => {
    const state = at('ACTIVE_ROUTE_DRAINING');
    const name = state.inventory.find((r) => r.routeId === 'r1' && r.kind === 'topic')!.name;
    const result = transition(state, {
      type: 'routeDrained',
      routeId: 'r1',
      proven: true,
      evidence: 'empty',
      kept: [{ name, reason: 'quorum queue: no conditional delete' }],
    });
    assert.deepEqual(
      result.state.cleanupPending.map((p) => [p.resource.name, p.reason]),
      [[name, 'quorum queue: no conditional delete']],
    );
  });

  test('the same route requested twice is idempotent; a changed spec under the same id is invalid', () => {
    const active = at('ACTIVE');
    assert.equal(transition(active, request('r1', { user: 'alice' })).outcome, 'ignored');
    assert.equal(transition(active, request('r1', { user: 'bob' })).outcome, 'invalid');
  });
});

describe('final deactivation (handback)', () => {
  test('records the then-current replicas, scales to 0, commits the frontier, restores them', () => {
    const observed = transition(at('QUIESCING_FOR_HANDBACK'), {
      type: 'workloadObserved',
      replicas: 5,
      resourceVersion: 'rv9',
    });
    assert.deepEqual(observed.actions.slice(1), [
      { type: 'scaleWorkload', replicas: 0, resourceVersion: 'rv9' },
      { type: 'verifyHandbackQuiesce', queues: ['orders'] },
    ]);
    const restoring = at('RESTORING_APP');
    const restore = transition(at('COMMITTING_HANDOFF'), {
      type: 'stepSucceeded',
      phase: 'COMMITTING_HANDOFF',
      queue: 'orders',
    });
    assert.equal(restore.state.phase, 'RESTORING_APP');
    assert.deepEqual(restore.actions.slice(1), [
      { type: 'removeOverrides', queues: ['orders'], generation: restoring.generation },
      { type: 'scaleWorkload', replicas: 5 },
      { type: 'awaitRollout', generation: restoring.generation, overriddenQueues: [] },
    ]);
  });

  test('requeued deliveries send the app back to drain, at most 3 times, then DEGRADED', () => {
    let state = at('QUIESCING_FOR_HANDBACK_OBSERVED');
    const unproven: SplitEvent = {
      type: 'proofReported',
      phase: 'QUIESCING_FOR_HANDBACK',
      queue: 'orders',
      proven: false,
      evidence: 'committed 10 < end 12',
    };
    for (let i = 1; i <= 3; i++) {
      const again = transition(state, unproven);
      assert.equal(again.state.phase, 'DRAINING_APP');
      assert.deepEqual(again.actions.slice(1, 2), [{ type: 'scaleWorkload', replicas: 5 }]);
      state = drive(again.state, [
        { type: 'proofReported', phase: 'DRAINING_APP', queue: 'orders', proven: true, evidence: 'lag 0' },
      ]).state;
    }
    const gaveUp = transition(state, unproven);
    assert.equal(gaveUp.state.phase, 'DEGRADED');
    assert.match(gaveUp.state.degraded!.reason, /not proven after 3 drains/);
  });

  test('cleanup: the lease is released and the agent reaped, the finalizer kept for the HandedBack status; unverified resources are kept and reported', () => {
    const clean = transition(at('CLEANING_UP'), {
      type: 'proofReported',
      phase: 'CLEANING_UP',
      queue: 'orders',
      proven: true,
      evidence: 'deleted',
    });
    assert.equal(clean.state.phase, 'IDLE');
    assert.deepEqual(types(clean.actions), ['persistState', 'reapQueueAgent', 'releaseLease']);
    assert.deepEqual(clean.state.inventory, []);
    assert.deepEqual(clean.state.activeQueues, []);
    const unverified = transition(at('CLEANING_UP'), {
      type: 'proofReported',
      phase: 'CLEANING_UP',
      queue: 'orders',
      proven: false,
      evidence: 'could not read end offsets',
    });
    assert.equal(unverified.state.phase, 'IDLE');
    assert.equal(unverified.state.cleanupPending.length, 4);
    assert.match(unverified.state.cleanupPending[0]!.reason, /not verified/);
  });

  test('a route requested during the handback waits and starts a fresh activation afterwards', () => {
    const waiting = transition(at('DRAINING_APP'), request('r9', { user: 'zoe' }));
    assert.equal(waiting.state.routes[0]!.phase, 'PENDING');
    const { state } = drive(waiting.state, [
      { type: 'proofReported', phase: 'DRAINING_APP', queue: 'orders', proven: true, evidence: 'lag 0' },
      { type: 'workloadObserved', replicas: 5, resourceVersion: 'rv9' },
      {
        type: 'proofReported',
        phase: 'QUIESCING_FOR_HANDBACK',
        queue: 'orders',
        proven: true,
        evidence: 'ok',
      },
      { type: 'stepSucceeded', phase: 'COMMITTING_HANDOFF', queue: 'orders' },
      { type: 'proofReported', phase: 'RESTORING_APP', proven: true, evidence: 'ok' },
      { type: 'proofReported', phase: 'CLEANING_UP', queue: 'orders', proven: true, evidence: 'ok' },
    ]);
    assert.equal(state.phase, 'PREPARING');
    assert.equal(state.activationEpoch, 2);
  });
});

describe('abort and degradation', () => {
  test('a failed activation step aborts: stop pump, roll back, then restore the recorded replicas', () => {
    const aborting = at('ABORTING_ACTIVATION');
    assert.equal(aborting.phase, 'ABORTING_ACTIVATION');
    assert.equal(aborting.workflow?.kind, 'abort');
    const restore = transition(aborting, {
      type: 'proofReported',
      phase: 'ABORTING_ACTIVATION',
      queue: 'orders',
      proven: true,
      evidence: 'group at pre-activation offsets',
    });
    assert.equal(restore.state.phase, 'RESTORING_APP');
    assert.ok(restore.actions.some((a) => a.type === 'scaleWorkload' && a.replicas === 3));
  });

  test('entering ABORTING_ACTIVATION scales the app to 0 before rollback', () => {
    const result = transition(at('REDIRECTING_APP'), { type: 'stepTimedOut', phase: 'REDIRECTING_APP' });
    assert.equal(result.state.phase, 'ABORTING_ACTIVATION');
    assert.deepEqual(types(result.actions), ['persistState', 'scaleWorkload', 'stopPump', 'rollbackQueues']);
  });

  test('an abort that cannot be proven holds in DEGRADED at zero replicas', () => {
    const result = transition(at('ABORTING_ACTIVATION'), {
      type: 'proofReported',
      phase: 'ABORTING_ACTIVATION',
      queue: 'orders',
      proven: false,
      evidence: 'shadow still holds 3 messages',
    });
    assert.equal(result.state.phase, 'DEGRADED');
    assert.equal(result.state.degraded?.from, 'ABORTING_ACTIVATION');
    assert.ok(!result.actions.some((a) => a.type === 'scaleWorkload' && a.replicas > 0));
    const report = result.actions.find((a) => a.type === 'reportDegraded');
    assert.ok(report?.type === 'reportDegraded');
    assert.match(report.nextAction, /zero replicas/);
  });

  test('an abort before anything was scaled goes straight to cleanup and back to IDLE', () => {
    const { state } = drive(at('PREPARING'), [
      { type: 'stepFailed', phase: 'PREPARING', queue: 'orders', reason: 'no ACL to create topics' },
      {
        type: 'proofReported',
        phase: 'ABORTING_ACTIVATION',
        queue: 'orders',
        proven: true,
        evidence: 'nothing moved',
      },
    ]);
    assert.equal(state.phase, 'CLEANING_UP');
    const end = transition(state, {
      type: 'proofReported',
      phase: 'CLEANING_UP',
      queue: 'orders',
      proven: true,
      evidence: 'ok',
    });
    assert.equal(end.state.phase, 'IDLE');
    const failRoute = end.actions.find((a) => a.type === 'failRoute');
    assert.ok(failRoute?.type === 'failRoute');
    assert.match(failRoute.reason, /no ACL to create topics/);
  });

  test('deleting the only route during activation aborts it', () => {
    const result = transition(at('STARTING_PUMP'), { type: 'routeDeleted', routeId: 'r1' });
    assert.equal(result.state.phase, 'ABORTING_ACTIVATION');
    assert.deepEqual(result.state.routes, []);
  });

  test('DEGRADED holds on restart and resumes its phase on retry', () => {
    const degraded = at('DEGRADED');
    const restarted = transition(degraded, { type: 'restarted' });
    assert.equal(restarted.state, degraded);
    assert.deepEqual(types(restarted.actions), ['reportDegraded']);
    const retried = transition(degraded, { type: 'retryRequested' });
    assert.equal(retried.state.phase, 'ABORTING_ACTIVATION');
    assert.equal(retried.state.degraded, null);
    assert.deepEqual(types(retried.actions), ['persistState', 'scaleWorkload', 'stopPump', 'rollbackQueues']);
  });

  test('an agent fault while ACTIVE degrades; retry restarts pumps, republishes routes and puts the env overrides back', () => {
    const fault = transition(at('ACTIVE'), {
      type: 'faultReported',
      queue: 'orders',
      reason: 'foreign consumer on quorum source',
    });
    assert.equal(fault.state.phase, 'DEGRADED');
    assert.equal(fault.state.queues.orders!.phase, 'DEGRADED');
    const retried = transition(fault.state, { type: 'retryRequested' });
    assert.equal(retried.state.phase, 'ACTIVE');
    assert.deepEqual(types(retried.actions), [
      'persistState',
      'ensureQueueAgent',
      'startPump',
      'publishRoutes',
      // The fault may have been drift (docs/design.md, "Drift"); applied only where changed.
      'applyOverrides',
    ]);
  });

  test('abort while ACTIVE drains every route instead of cutting them off', () => {
    const result = transition(at('ACTIVE'), { type: 'abortRequested', reason: 'operator' });
    assert.equal(result.state.phase, 'ACTIVE');
    assert.equal(result.state.routes[0]!.phase, 'DRAINING');
    assert.ok(types(result.actions).includes('drainRoute'));
  });
});

describe('recovery after a restart', () => {
  test('re-runs the current phase for the queues that have not finished it', () => {
    const pump = transition(at('STARTING_PUMP'), { type: 'restarted' });
    assert.deepEqual(pump.actions, [{ type: 'startPump', queues: ['orders'], generation: 1 }]);
    const quiesce = transition(at('QUIESCING_APP'), { type: 'restarted' });
    assert.deepEqual(types(quiesce.actions), ['observeWorkload']);
    const active = transition(at('ACTIVE_ROUTE_DRAINING'), { type: 'restarted' });
    assert.deepEqual(types(active.actions), ['ensureQueueAgent', 'startPump', 'publishRoutes', 'drainRoute']);
    assert.deepEqual(transition(idle(), { type: 'restarted' }).actions, []);
  });

  test('reports for queues already done are ignored, so a replayed report cannot skip a queue', () => {
    const state = drive(idle(), [request('r1', { user: 'a' }, ['orders', 'invoices'])]).state;
    const once = transition(state, { type: 'stepSucceeded', phase: 'PREPARING', queue: 'orders' });
    assert.equal(once.state.phase, 'PREPARING');
    const twice = transition(once.state, { type: 'stepSucceeded', phase: 'PREPARING', queue: 'orders' });
    assert.equal(twice.outcome, 'ignored');
    const both = transition(once.state, {
      type: 'stepSucceeded',
      phase: 'PREPARING',
      queue: 'invoices',
      checkpoint: { x: 1 },
    });
    assert.equal(both.state.phase, 'QUIESCING_APP');
    assert.deepEqual(both.state.checkpoints, { invoices: { x: 1 } });
  });

  test('lease helper data is carried on the route', () => {
    assert.equal(at('ACTIVE').routes[0]!.leaseExpiresAt, LEASE);
  });
});
