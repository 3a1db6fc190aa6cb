// Every phase × every event type has a defined outcome and keeps the machine's invariants;
// random event sequences keep them too, and without a positive proof nothing ever reaches
// ACTIVE or returns the workload (docs/design.md §5.6: no proof → never success).
import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import fc from 'fast-check';
import { SPLIT_EVENT_TYPES, type SplitEvent, type SplitEventType } from '../../../core/state/events';
import { STEPS, WORKLOAD_PHASES, type WorkloadPhase } from '../../../core/state/phases';
import { RECOVERY } from '../../../core/state/recovery';
import { parseState, serializeState, type SplitState } from '../../../core/state/stateDocument';
import { transition, type TransitionResult } from '../../../core/state/transition';
import { at, idle, LEASE, PATHS, request } from './splitFixtures';

/** Representative events of one type for a state, including stale and malformed variants. */
function eventsOfType(type: SplitEventType, state: SplitState): SplitEvent[] {
  const queue = state.workflow?.queues[0] ?? 'orders';
  const stale: WorkloadPhase = state.phase === 'PREPARING' ? 'CLEANING_UP' : 'PREPARING';
  const scoped = STEPS[state.phase]?.scope === 'queue' ? { queue } : {};
  switch (type) {
    case 'routeRequested':
      return [
        request('r2', { user: 'bob' }),
        request('r3', { team: 'x' }),
        request('r4', { user: 'c' }, ['payments']),
        request('r5', { user: 'd' }, ['invoices']),
      ];
    case 'routeDeleted':
      return [
        { type, routeId: 'r1' },
        { type, routeId: 'nope' },
      ];
    case 'leaseExpired':
      return [{ type, routeId: 'r1' }];
    case 'leaseRenewed':
      return [
        { type, routeId: 'r1', expiresAt: '2031-01-01T00:00:00Z' },
        { type, routeId: 'r1', expiresAt: 'soon' },
      ];
    case 'routeShadowsReady':
      return [{ type, routeId: 'r1' }];
    case 'routeAcked':
      return [
        { type, routeId: 'r1', generation: state.generation },
        { type, routeId: 'r1', generation: 0 },
      ];
    case 'routeDrained':
      return [
        { type, routeId: 'r1', proven: true, evidence: 'moved' },
        { type, routeId: 'r1', proven: false, evidence: 'unknown' },
      ];
    case 'routeStepFailed':
      return [{ type, routeId: 'r1', reason: 'boom' }];
    case 'routeTimedOut':
      return [{ type, routeId: 'r1' }];
    case 'workloadObserved':
      return [
        { type, replicas: 2, resourceVersion: 'rv' },
        { type, replicas: -1, resourceVersion: 'rv' },
      ];
    case 'scaleRaced':
      return [{ type }];
    case 'stepSucceeded':
      return [
        { type, phase: state.phase, ...scoped },
        { type, phase: state.phase, queue: 'payments' },
        { type, phase: state.phase },
        { type, phase: stale, queue },
      ];
    case 'proofReported':
      return [
        { type, phase: state.phase, ...scoped, proven: true, evidence: 'ok' },
        { type, phase: state.phase, ...scoped, proven: false, evidence: 'not ok' },
        { type, phase: stale, queue, proven: true, evidence: 'late' },
      ];
    case 'stepFailed':
      return [
        { type, phase: state.phase, ...scoped, reason: 'boom' },
        { type, phase: stale, reason: 'late' },
      ];
    case 'stepTimedOut':
      return [{ type, phase: state.phase, ...scoped }];
    case 'faultReported':
      return [{ type, queue, reason: 'foreign consumer' }];
    case 'abortRequested':
      return [{ type, reason: 'operator' }];
    case 'retryRequested':
      return [{ type }, { type, routeId: 'r1' }];
    case 'restarted':
      return [{ type }];
  }
}

const FORWARD_ON_FAILURE = new Set<WorkloadPhase>(['ABORTING_ACTIVATION', 'DEGRADED']);

function checkInvariants(before: SplitState, event: SplitEvent, result: TransitionResult): void {
  const label = `${event.type} in ${before.phase}: ${result.outcome} (${result.note})`;
  assert.ok(['applied', 'ignored', 'invalid', 'rejected'].includes(result.outcome), label);
  assert.equal(typeof result.note, 'string');
  if (result.outcome === 'ignored' || result.outcome === 'invalid') {
    assert.equal(result.state, before, label);
    assert.deepEqual(result.actions, [], label);
  }
  if (result.outcome === 'rejected') {
    assert.equal(result.state, before, label);
    assert.deepEqual(
      result.actions.map((a) => a.type),
      ['rejectRoute'],
      label,
    );
  }
  const persists = result.actions.filter((a) => a.type === 'persistState').length;
  // A lease renewal alone is applied in memory and written with the next change (workflow.ts
  // appliedInMemory): it may change nothing but a route's lease expiry.
  const renewalOnly =
    event.type === 'leaseRenewed' &&
    result.outcome === 'applied' &&
    persists === 0 &&
    serializeState({
      ...result.state,
      routes: result.state.routes.map((r) => ({ ...r, leaseExpiresAt: '' })),
    }) === serializeState({ ...before, routes: before.routes.map((r) => ({ ...r, leaseExpiresAt: '' })) });
  if (result.state !== before && !renewalOnly) {
    assert.equal(
      result.actions[0]?.type,
      'persistState',
      `state changed without being persisted first: ${label}`,
    );
    assert.equal(persists, 1, label);
  } else {
    assert.equal(persists, 0, label);
    if (renewalOnly) assert.deepEqual(result.actions, [], label);
  }
  const reparsed = parseState(serializeState(result.state));
  assert.ok(reparsed.ok, `${label}: ${JSON.stringify(reparsed)}`);
  const failure =
    event.type === 'stepFailed' ||
    event.type === 'stepTimedOut' ||
    (event.type === 'proofReported' &&
      !event.proven &&
      before.phase !== 'QUIESCING_FOR_HANDBACK' &&
      before.phase !== 'CLEANING_UP');
  if (failure && result.state.phase !== before.phase) {
    assert.ok(
      FORWARD_ON_FAILURE.has(result.state.phase),
      `a failure moved forward: ${label} → ${result.state.phase}`,
    );
  }
  if (event.type === 'routeTimedOut' || event.type === 'routeStepFailed') {
    const route = result.state.routes.find((r) => r.routeId === event.routeId);
    const was = before.routes.find((r) => r.routeId === event.routeId);
    if (route && was?.phase !== 'ACTIVE') assert.notEqual(route.phase, 'ACTIVE', label);
  }
  if (event.type === 'stepSucceeded' && STEPS[before.phase]?.completion === 'proof') {
    // A bare success never completes a proof step: refused as invalid, or ignored as stale when
    // it is for another phase or for a queue that already finished this one.
    assert.ok(result.outcome === 'invalid' || result.outcome === 'ignored', `${label}: ${result.outcome}`);
    if (before.phase !== event.phase) assert.equal(result.outcome, 'ignored', label);
    assert.equal(result.state, before, `${label}: the state must not change`);
  }
}

describe('every phase × every event type', () => {
  const fixtures = Object.keys(PATHS).map((name) => [name, at(name)] as const);

  test('the fixtures cover every workload phase and recovery rule', () => {
    const covered = new Set(fixtures.map(([, state]) => state.phase));
    for (const phase of WORKLOAD_PHASES) {
      assert.ok(covered.has(phase), `no fixture in ${phase}`);
      assert.ok(RECOVERY[phase], `no recovery rule for ${phase}`);
    }
  });

  for (const [name, state] of fixtures) {
    test(`${name} (${state.phase})`, () => {
      for (const type of SPLIT_EVENT_TYPES) {
        for (const event of eventsOfType(type, state)) {
          checkInvariants(state, event, transition(state, event));
        }
      }
    });
  }
});

describe('random event sequences', () => {
  const queueArb = fc.constantFrom('orders', 'invoices', 'payments');
  const phaseArb = fc.constantFrom(...WORKLOAD_PHASES);
  const routeArb = fc.constantFrom('r1', 'r2', 'r3');
  const filterArb = fc.dictionary(fc.constantFrom('user', 'team'), fc.constantFrom('a', 'b'), { maxKeys: 2 });
  const evidence = fc.constant('e');

  function eventArb(allowProof: boolean): fc.Arbitrary<SplitEvent> {
    return fc.oneof(
      fc.record({
        type: fc.constant('routeRequested' as const),
        route: fc.record({
          routeId: routeArb,
          owner: fc.constant('o'),
          queues: fc.subarray(['orders', 'invoices'], { minLength: 1 }),
          filter: filterArb,
          leaseExpiresAt: fc.constant(LEASE),
        }),
      }),
      fc.record({
        type: fc.constantFrom(
          'routeDeleted' as const,
          'leaseExpired' as const,
          'routeShadowsReady' as const,
          'routeTimedOut' as const,
        ),
        routeId: routeArb,
      }),
      fc.record({ type: fc.constant('routeAcked' as const), routeId: routeArb, generation: fc.nat(12) }),
      fc.record({
        type: fc.constant('routeDrained' as const),
        routeId: routeArb,
        proven: fc.boolean(),
        evidence,
      }),
      fc.record({
        type: fc.constant('workloadObserved' as const),
        replicas: fc.nat(5),
        resourceVersion: fc.constant('rv'),
      }),
      fc.record({
        type: fc.constant('stepSucceeded' as const),
        phase: phaseArb,
        queue: fc.option(queueArb, { nil: undefined }),
      }),
      fc.record({
        type: fc.constant('proofReported' as const),
        phase: phaseArb,
        queue: fc.option(queueArb, { nil: undefined }),
        proven: allowProof ? fc.boolean() : fc.constant(false),
        evidence,
      }),
      fc.record({
        type: fc.constant('stepFailed' as const),
        phase: phaseArb,
        queue: fc.option(queueArb, { nil: undefined }),
        reason: evidence,
      }),
      fc.record({
        type: fc.constant('stepTimedOut' as const),
        phase: phaseArb,
        queue: fc.option(queueArb, { nil: undefined }),
      }),
      fc.record({
        type: fc.constantFrom('faultReported' as const, 'abortRequested' as const),
        reason: evidence,
      }),
      fc.record({
        type: fc.constant('retryRequested' as const),
        routeId: fc.option(routeArb, { nil: undefined }),
      }),
      fc.constant({ type: 'restarted' as const }),
    ) as fc.Arbitrary<SplitEvent>;
  }

  /** The event that moves `state` along the happy path, if there is one. */
  function nextGood(state: SplitState, allowProof: boolean): SplitEvent | undefined {
    const draining = state.routes.find((r) => r.phase === 'DRAINING');
    if (draining)
      return { type: 'routeDrained', routeId: draining.routeId, proven: allowProof, evidence: 'e' };
    const preparing = state.routes.find((r) => r.phase === 'PREPARING');
    if (preparing) return { type: 'routeShadowsReady', routeId: preparing.routeId };
    const attaching = state.routes.find((r) => r.phase === 'ATTACHING');
    if (attaching) return { type: 'routeAcked', routeId: attaching.routeId, generation: state.generation };
    if (state.phase === 'IDLE') return request('r1', { user: 'a' });
    if (state.phase === 'DEGRADED') return { type: 'retryRequested' };
    if (state.phase === 'ACTIVE') {
      const active = state.routes.find((r) => r.phase === 'ACTIVE');
      return active ? { type: 'routeDeleted', routeId: active.routeId } : undefined;
    }
    if (
      (state.phase === 'QUIESCING_APP' && state.preActivationReplicas === null) ||
      (state.phase === 'QUIESCING_FOR_HANDBACK' && state.handbackReplicas === null)
    ) {
      return { type: 'workloadObserved', replicas: 2, resourceVersion: 'rv' };
    }
    const spec = STEPS[state.phase];
    if (!spec) return undefined;
    const queue =
      spec.scope === 'queue' ? state.workflow?.queues.find((q) => !state.queues[q]?.done) : undefined;
    return spec.completion === 'proof'
      ? { type: 'proofReported', phase: state.phase, queue, proven: allowProof, evidence: 'e' }
      : { type: 'stepSucceeded', phase: state.phase, queue };
  }

  /** Mostly the happy-path event, otherwise the random one, so sequences explore deep phases. */
  function steer(
    state: SplitState,
    raw: { pick: number; event: SplitEvent },
    allowProof: boolean,
  ): SplitEvent {
    return (raw.pick < 17 ? nextGood(state, allowProof) : undefined) ?? raw.event;
  }

  const stepArb = (allowProof: boolean) =>
    fc.array(fc.record({ pick: fc.integer({ min: 0, max: 19 }), event: eventArb(allowProof) }), {
      maxLength: 100,
      size: 'max',
    });

  test('keep every invariant', () => {
    const seen = new Set<WorkloadPhase>();
    fc.assert(
      fc.property(stepArb(true), (events) => {
        let state = idle();
        for (const raw of events) {
          const event = steer(state, raw, true);
          const result = transition(state, event);
          checkInvariants(state, event, result);
          state = result.state;
          seen.add(state.phase);
        }
      }),
      { numRuns: 400 },
    );
    // The sequences must actually explore the machine, not stall in IDLE.
    for (const phase of WORKLOAD_PHASES) {
      assert.ok(seen.has(phase), `random sequences never reached ${phase}; saw ${[...seen].join(', ')}`);
    }
  });

  test('without a positive proof, nothing reaches ACTIVE and the workload is never handed back', () => {
    fc.assert(
      fc.property(stepArb(false), (events) => {
        let state = idle();
        let left = false;
        for (const raw of events) {
          const event = steer(state, raw, false);
          state = transition(state, event).state;
          left ||= state.phase !== 'IDLE';
          assert.notEqual(state.phase, 'ACTIVE');
          assert.ok(state.routes.every((r) => r.phase !== 'ACTIVE'));
          if (left) assert.notEqual(state.phase, 'IDLE', 'returned to IDLE without any proof');
        }
      }),
      { numRuns: 400 },
    );
  });
});
