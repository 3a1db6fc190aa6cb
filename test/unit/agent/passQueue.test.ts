// The workloads being passed side by side (agent/controller/passQueue.ts).
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { PassQueue } from '../../../agent/controller/passQueue';

/** A pass the test ends by hand. */
function gate(): { pass: () => Promise<void>; end: () => void } {
  let end!: () => void;
  const ended = new Promise<void>((resolve) => (end = resolve));
  return { pass: () => ended, end };
}

test('a pass that ends frees its slot at once, without waiting for the others (no rounds)', async () => {
  let endedCount = 0;
  const queue = new PassQueue(2, () => endedCount++);
  const slow = gate();
  const fast = gate();
  queue.start('slow', slow.pass);
  queue.start('fast', fast.pass);
  assert.equal(queue.free, 0);
  fast.end();
  await new Promise((resolve) => setImmediate(resolve));
  assert.equal(endedCount, 1, 'the ended pass said so');
  assert.equal(queue.free, 1, 'its slot is free while the slow pass still runs');
  assert.equal(queue.has('fast'), false);
  assert.equal(queue.has('slow'), true);
  const next = gate();
  queue.start('next', next.pass);
  slow.end();
  next.end();
  await queue.idle();
  assert.equal(queue.free, 2);
  assert.equal(endedCount, 3);
});

test('a workload is never passed twice at once, and no pass starts beyond the limit', () => {
  const queue = new PassQueue(1, () => undefined);
  const a = gate();
  queue.start('a', a.pass);
  assert.throws(() => queue.start('a', gate().pass), /already running/);
  assert.throws(() => queue.start('b', gate().pass), /no free slot/);
  a.end();
});

test('the oldest running pass is what the liveness probe sees', async () => {
  const queue = new PassQueue(2, () => undefined);
  assert.equal(queue.oldestStart(), undefined);
  const before = Date.now();
  const a = gate();
  queue.start('a', a.pass);
  await new Promise((resolve) => setTimeout(resolve, 5));
  const b = gate();
  queue.start('b', b.pass);
  const oldest = queue.oldestStart()!;
  assert.ok(oldest >= before && oldest <= before + 4, `the first pass's start (${oldest - before} ms)`);
  a.end();
  b.end();
  await queue.idle();
  assert.equal(queue.oldestStart(), undefined);
});
