// When a ScaledObject counts as paused for a split (agent/controller/keda.ts, invariants 1-3):
// asked by an annotation, confirmed by KEDA's Paused condition with its HPA gone, and ours to
// resume only when it carries our mark.
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { pauseState, type ScaledObject } from '../../../agent/controller/keda';

const so = (annotations: Record<string, string>, paused?: 'True' | 'False'): ScaledObject => ({
  metadata: { name: 'orders', annotations },
  spec: { scaleTargetRef: { name: 'app' } },
  ...(paused ? { status: { conditions: [{ type: 'Paused', status: paused }] } } : {}),
});

test('not asked: running; asked by us: pausing until KEDA reports Paused and its HPA is gone', () => {
  assert.deepEqual(pauseState(so({}), 'uid-1', true), { asked: false, ours: false, done: false });
  const ours = { 'autoscaling.keda.sh/paused': 'true', 'queuesplit.dev/paused-for': 'uid-1' };
  assert.deepEqual(pauseState(so(ours), 'uid-1', true), { asked: true, ours: true, done: false });
  assert.deepEqual(
    pauseState(so(ours, 'True'), 'uid-1', true).done,
    false,
    'Paused is set before the HPA goes',
  );
  assert.deepEqual(pauseState(so(ours, 'True'), 'uid-1', false), { asked: true, ours: true, done: true });
});

test('a pause someone else asked for is waited on the same way but never ours to remove', () => {
  const theirs = so({ 'autoscaling.keda.sh/paused-replicas': '2' }, 'True');
  assert.deepEqual(pauseState(theirs, 'uid-1', false), { asked: true, ours: false, done: true });
  const otherSplit = so(
    { 'autoscaling.keda.sh/paused': 'true', 'queuesplit.dev/paused-for': 'uid-2' },
    'True',
  );
  assert.equal(pauseState(otherSplit, 'uid-1', false).ours, false);
  assert.equal(pauseState(so({ 'autoscaling.keda.sh/paused': 'false' }), 'uid-1', false).asked, false);
});
