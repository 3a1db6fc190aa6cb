// Which PodDisruptionBudgets refuse a split (agent/controller/disruptionBudgets.ts): those whose
// selector takes the workload's pods and that allow none of them to be disrupted.
import assert from 'node:assert/strict';
import { test } from 'node:test';
import type { V1PodDisruptionBudget } from '@kubernetes/client-node';
import { disruptionRefusal, selects } from '../../../agent/controller/disruptionBudgets';

const pods = { app: 'orders', tier: 'backend' };
const pdb = (name: string, spec: V1PodDisruptionBudget['spec']): V1PodDisruptionBudget => ({
  metadata: { name },
  spec: { selector: { matchLabels: { app: 'orders' } }, ...spec },
});

test('selectors as policy/v1 reads them: labels and expressions, an empty one takes every pod, none takes none', () => {
  assert.equal(selects({ matchLabels: { app: 'orders' } }, pods), true);
  assert.equal(selects({ matchLabels: { app: 'other' } }, pods), false);
  assert.equal(
    selects({ matchExpressions: [{ key: 'tier', operator: 'In', values: ['backend'] }] }, pods),
    true,
  );
  assert.equal(
    selects({ matchExpressions: [{ key: 'tier', operator: 'NotIn', values: ['backend'] }] }, pods),
    false,
  );
  assert.equal(selects({ matchExpressions: [{ key: 'zone', operator: 'DoesNotExist' }] }, pods), true);
  assert.equal(selects({ matchExpressions: [{ key: 'zone', operator: 'Exists' }] }, pods), false);
  assert.equal(selects({}, pods), true);
  assert.equal(selects(undefined, pods), false);
});

test('a budget that forbids every eviction is refused by name with what it says', () => {
  for (const [spec, said] of [
    [{ maxUnavailable: 0 }, 'maxUnavailable 0'],
    [{ maxUnavailable: '0%' }, 'maxUnavailable 0%'],
    [{ minAvailable: 3 }, 'minAvailable 3 of 3 replicas'],
    [{ minAvailable: '100%' }, 'minAvailable 100%'],
  ] as const) {
    const refusal = disruptionRefusal([pdb('keep-all', spec)], pods, 3);
    assert.equal(refusal?.reason, 'DisruptionForbidden', said);
    assert.match(refusal?.message ?? '', new RegExp(`PodDisruptionBudget keep-all \\(${said}\\)`));
    assert.match(refusal?.message ?? '', /relax it for the length of the split/);
  }
});

test('a budget that allows some disruption, or selects other pods, is no reason to refuse', () => {
  assert.equal(disruptionRefusal([pdb('one-may-go', { maxUnavailable: 1 })], pods, 3), undefined);
  assert.equal(disruptionRefusal([pdb('two-stay', { minAvailable: 2 })], pods, 3), undefined);
  assert.equal(disruptionRefusal([pdb('half', { minAvailable: '50%' })], pods, 3), undefined);
  const other = {
    ...pdb('other', { maxUnavailable: 0 }),
    spec: { selector: { matchLabels: { app: 'x' } }, maxUnavailable: 0 },
  };
  assert.equal(disruptionRefusal([other], pods, 3), undefined);
});
