// A status the API server hands back has its keys sorted: it is still the status the controller
// wrote, or a waiting split is rewritten on every pass (about once a second while Degraded).
import assert from 'node:assert/strict';
import { test } from 'node:test';
import type { QueueSplitStatus } from '../../../core/crd/queueSplitSchema';
import { keepTransitionTimes, sameStatus } from '../../../agent/controller/splitStatus';

const sortedKeys = (value: unknown): unknown =>
  Array.isArray(value)
    ? value.map(sortedKeys)
    : value !== null && typeof value === 'object'
      ? Object.fromEntries(
          Object.entries(value)
            .sort(([a], [b]) => a.localeCompare(b))
            .map(([k, v]) => [k, sortedKeys(v)]),
        )
      : value;

test('a status read back with sorted keys (and a newer timestamp) is the same status', () => {
  const written: QueueSplitStatus = {
    phase: 'Degraded',
    observedGeneration: 1,
    queues: [{ name: 'orders', phase: 'Degraded', shadow: { source: 'qs-rses-orders-x' } }],
    delivered: 0,
    nextAction: 'retry',
    conditions: [
      {
        type: 'Ready',
        status: 'False',
        reason: 'Degraded',
        message: 'm',
        lastTransitionTime: '2026-01-01T00:00:00Z',
      },
    ],
  };
  const readBack = sortedKeys({
    ...written,
    conditions: [{ ...written.conditions![0]!, lastTransitionTime: '2026-01-01T00:00:09Z' }],
  }) as QueueSplitStatus;
  assert.ok(sameStatus(readBack, written));
  assert.ok(!sameStatus(readBack, { ...written, phase: 'Failed' }));
  assert.ok(!sameStatus(undefined, written));
});

test('a status rewritten for another field keeps the time its unchanged condition last transitioned', () => {
  const ready = (status: 'True' | 'False', reason: string, at: string) => ({
    type: 'Ready',
    status,
    reason,
    message: 'm',
    lastTransitionTime: at,
  });
  const previous: QueueSplitStatus = {
    phase: 'Active',
    observedGeneration: 1,
    delivered: 3,
    conditions: [ready('True', 'RouteActive', '2026-01-01T00:00:00Z')],
  };
  // More messages delivered: a change worth writing, but Ready did not transition.
  const next: QueueSplitStatus = {
    ...previous,
    delivered: 4,
    conditions: [ready('True', 'RouteActive', '2026-01-01T00:05:00Z')],
  };
  assert.ok(!sameStatus(previous, next), 'a new delivered count is written');
  assert.equal(
    keepTransitionTimes(previous, next).conditions![0]!.lastTransitionTime,
    '2026-01-01T00:00:00Z',
  );
  // Ready went False: that is a transition, and it gets the new time.
  const degraded = { ...next, conditions: [ready('False', 'Degraded', '2026-01-01T00:06:00Z')] };
  assert.equal(
    keepTransitionTimes(previous, degraded).conditions![0]!.lastTransitionTime,
    '2026-01-01T00:06:00Z',
  );
  // The same status with only a fresher timestamp is not written at all.
  assert.ok(
    sameStatus(previous, { ...previous, conditions: [ready('True', 'RouteActive', '2026-01-02T00:00:00Z')] }),
  );
  assert.deepEqual(keepTransitionTimes(undefined, next), next);
});

test('a lease renewal (a new generation, nothing else) does not rewrite the status', () => {
  const status: QueueSplitStatus = {
    phase: 'Active',
    observedGeneration: 4,
    delivered: 0,
    conditions: [
      {
        type: 'Ready',
        status: 'True',
        reason: 'RouteActive',
        message: 'm',
        lastTransitionTime: '2026-01-01T00:00:00Z',
      },
    ],
  };
  assert.ok(sameStatus(status, { ...status, observedGeneration: 5 }));
  assert.ok(!sameStatus(status, { ...status, observedGeneration: 5, phase: 'Draining' }));
});
