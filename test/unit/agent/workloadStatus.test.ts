// The workload-level status the controller publishes on the workload: which phase a state
// document is in for a person, what blocks it, and the safe action — and that it survives the
// annotation round trip the sidecar and the extension read.
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { initialState, type SplitState } from '../../../core/state/stateDocument';
import {
  handbackUnfinished,
  sameWorkloadStatus,
  serializeWorkloadStatus,
} from '../../../core/workloadStatus';
import { parseWorkloadStatus } from '../../../core/workloadStatusParse';
import { OBSERVED_API_VERSION, type ObservedState } from '../../../core/agentProtocol';
import { behindQueues, mayHoldBack, workloadStatusFor } from '../../../agent/controller/workloadStatus';

const base = initialState({
  workload: { kind: 'Deployment', namespace: 'shop', name: 'orders', uid: 'u1' },
  installId: 'i1',
  queues: { orders: 'rabbitmq' },
});
const at = (phase: SplitState['phase'], extra: Partial<SplitState> = {}): SplitState => ({
  ...base,
  phase,
  ...extra,
});
const now = new Date('2026-12-01T14:00:00.123Z');

test('a handback that waits says so, with what it waits for and the safe action', () => {
  const status = workloadStatusFor({
    state: at('DRAINING_APP'),
    blocking: 'orders: the application has not drained its shadow: 30 ready, 0 consumers',
    stepTimeoutMs: 120_000,
    now,
  });
  assert.equal(status.phase, 'HandingBack');
  assert.equal(status.step, 'DRAINING_APP');
  assert.match(status.message, /Waiting: orders: the application has not drained its shadow: 30 ready/);
  assert.match(
    status.nextAction ?? '',
    /Nothing is lost.*pods running and consuming.*about 2 min it turns Degraded/,
  );
  assert.equal(status.updated, '2026-12-01T14:00:00Z');
  assert.ok(handbackUnfinished(status));
});

test('Degraded names the reason and the exact retry command; handed back names a kept-resources record', () => {
  const degraded = workloadStatusFor({
    state: at('DEGRADED', { degraded: { from: 'DRAINING_APP', reason: 'DRAINING_APP timed out' } }),
    stepTimeoutMs: 120_000,
  });
  assert.equal(degraded.phase, 'Degraded');
  assert.match(degraded.message, /DRAINING_APP timed out/);
  assert.match(
    degraded.nextAction ?? '',
    /kubectl -n shop annotate deployment\/orders queuesplit.dev\/retry=now/,
  );
  const done = workloadStatusFor({ state: undefined, stepTimeoutMs: 1, cleanupConfigMap: 'qs-cleanup-x' });
  assert.equal(done.phase, 'HandedBack');
  assert.match(done.message, /ConfigMap qs-cleanup-x lists them/);
  assert.ok(!handbackUnfinished(done));
});

test('activation, active and rollback phases map to Splitting, Split and RollingBack', () => {
  const phase = (s: SplitState) => workloadStatusFor({ state: s, stepTimeoutMs: 1 }).phase;
  assert.equal(phase(at('QUIESCING_APP')), 'Splitting');
  assert.equal(phase(at('ACTIVE')), 'Split');
  assert.equal(phase(at('ABORTING_ACTIVATION')), 'RollingBack');
  assert.equal(phase(at('RESTORING_APP')), 'HandingBack');
  assert.equal(phase(at('IDLE')), 'HandingBack', 'IDLE without routes is the end of a handback');
});

test('the annotation round-trips; anything else parses to nothing; equality ignores the write time', () => {
  const status = workloadStatusFor({ state: at('ACTIVE'), stepTimeoutMs: 1, now });
  const parsed = parseWorkloadStatus(serializeWorkloadStatus(status));
  assert.deepEqual(parsed, status);
  assert.ok(sameWorkloadStatus(parsed, { ...status, updated: '2030-01-01T00:00:00Z' }));
  assert.ok(!sameWorkloadStatus(parsed, { ...status, routes: 2 }));
  assert.equal(parseWorkloadStatus('{"phase":"Sideways"}'), undefined);
  assert.equal(parseWorkloadStatus('not json'), undefined);
  assert.equal(parseWorkloadStatus(undefined), undefined);
});

test('a route that came or went is written at once; only the same story within a phase waits', () => {
  const split = (routes: number, message = `${routes} split route(s).`) =>
    ({ phase: 'Split', routes, message, updated: now.toISOString() }) as const;
  const t0 = now.getTime();
  // Another developer's route left and ours came: the count is news, whatever the clock says.
  assert.equal(mayHoldBack(split(2), split(1), t0, t0 + 1_000), false, '2 → 1 route');
  assert.equal(mayHoldBack(split(1), split(2), t0, t0 + 1_000), false, '1 → 2 routes');
  // The same phase, reason and routes with another message (a waiting count) may wait a while.
  assert.equal(mayHoldBack(split(2, 'a'), split(2, 'b'), t0, t0 + 1_000), true);
  assert.equal(mayHoldBack(split(2, 'a'), split(2, 'b'), t0, t0 + 60_000), false, 'not for long');
  assert.equal(mayHoldBack(undefined, split(1), t0, t0), false, 'nothing written yet');
  const handedBack = { phase: 'HandedBack', routes: 0, message: 'Handed back.', updated: '' } as const;
  assert.equal(mayHoldBack(handedBack, handedBack, t0, t0), false, 'the last word is written in full');
});

test('a split whose source outgrows the queue-agent says so on the workload, with a Warning event reason and the safe action', () => {
  const observed: ObservedState = {
    apiVersion: OBSERVED_API_VERSION,
    activationId: 'i1/u1',
    observedGeneration: 3,
    updatedAt: '2026-12-07T21:00:00Z',
    routes: {},
    queues: {
      orders: {
        step: 'ACTIVE' as const,
        generation: 3,
        outcome: { kind: 'done' as const, evidence: 'ok' },
        health: 'ok' as const,
        published: {},
        lag: { routes: {}, source: 48_213, behindSince: '2026-12-07T20:58:00.000Z' },
      },
      invoices: {
        step: 'ACTIVE' as const,
        generation: 3,
        outcome: { kind: 'done' as const, evidence: 'ok' },
        health: 'ok' as const,
        published: {},
        lag: { routes: {}, source: 12 },
      },
    },
  };
  const behind = behindQueues(observed);
  assert.deepEqual(behind, [{ queue: 'orders', backlog: 48_000 }]);
  const status = workloadStatusFor({ state: at('ACTIVE'), stepTimeoutMs: 1, behind, now });
  assert.equal(status.phase, 'Split');
  assert.match(status.message, /falling behind: the source of orders \(about 48000 messages waiting\)/);
  assert.match(status.nextAction ?? '', /Stop the splits no longer used/);
  const steady = workloadStatusFor({ state: at('ACTIVE'), stepTimeoutMs: 1, behind: [], now });
  assert.doesNotMatch(steady.message, /behind/);
  // A new story: written at once (not held back like a count), and told as its own event.
  assert.equal(mayHoldBack(steady, status, now.getTime(), now.getTime() + 1000), false);
});
