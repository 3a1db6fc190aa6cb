// When a workload's next pass is due (agent/controller/dueTimes.ts).
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { DueTimes } from '../../../agent/controller/dueTimes';

test('a workload is due at once until passed, then when its coordinator said', () => {
  const due = new DueTimes();
  const now = Date.now();
  assert.equal(due.isDue('w', now), true);
  due.passed('w', now, 30_000);
  assert.equal(due.isDue('w', Date.now()), false);
  assert.equal(due.isDue('w', Date.now() + 30_001), true);
  due.touch('w');
  assert.equal(due.isDue('w', Date.now()), true, 'a change makes it due at once');
});

test('a change that arrives while the workload is being passed is not lost to the quiet resync', () => {
  // The pass read the QueueSplits before the change (the split was deleted meanwhile): the next
  // pass must come at once, not 30 s later (seen with three cluster files side by side: a
  // deleted split waited out the resync before its finalizer went).
  const due = new DueTimes();
  const startedAt = Date.now();
  due.touch('w'); // the informer's event, during the pass
  due.passed('w', startedAt, 30_000);
  assert.equal(due.isDue('w', Date.now()), true);
});
