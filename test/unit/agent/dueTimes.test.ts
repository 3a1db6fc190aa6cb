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

test('the workload due the longest comes first, so one whose own writes make it due again cannot starve others', async () => {
  const due = new DueTimes();
  due.touch('waiting');
  await new Promise((resolve) => setTimeout(resolve, 2));
  const startedAt = Date.now();
  due.touch('echoing'); // its own write's watch event, during its pass
  due.passed('echoing', startedAt - 1, 30_000);
  assert.equal(due.isDue('echoing', Date.now()), true);
  const order = ['echoing', 'waiting'].sort((a, b) => due.dueSince(a) - due.dueSince(b));
  assert.deepEqual(order, ['waiting', 'echoing']);
  assert.equal(due.dueSince('never-seen'), 0, 'a workload never seen is due since always');
});

test('the loop sleeps until the soonest workload waiting for a time, never for one already due', async () => {
  const due = new DueTimes();
  assert.equal(due.soonestInMs(Date.now()), undefined);
  due.passed('quiet', Date.now(), 30_000);
  due.passed('lease', Date.now(), 5_000);
  due.passed('moving', Date.now(), 0); // due at once: being passed again, or waiting for a slot
  await new Promise((resolve) => setTimeout(resolve, 2));
  const soonest = due.soonestInMs(Date.now())!;
  assert.ok(
    soonest > 4_900 && soonest <= 5_000,
    `the lease's expiry, not the one already due (${soonest} ms)`,
  );
  assert.equal(due.isDue('moving', Date.now()), true);
});
