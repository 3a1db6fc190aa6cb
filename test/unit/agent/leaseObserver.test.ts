// Leader Lease expiry is judged on the observer's own clock (agent/controller/leaseObserver.ts):
// the holder's renewTime, written by another node's clock, never decides it.
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { LeaseObserver } from '../../../agent/controller/leaseObserver';

const LEASE_MS = 6_000;

function clock() {
  let now = 1_000;
  return { now: () => now, advance: (ms: number) => (now += ms) };
}

test('a Lease renewed by another replica is not free, however old its renewTime looks', () => {
  // The holder's clock could be minutes behind ours: only whether the record changes counts.
  const c = clock();
  const observer = new LeaseObserver(c.now);
  for (let rv = 1; rv <= 10; rv++) {
    assert.equal(
      observer.mayHold({ holderIdentity: 'a', resourceVersion: String(rv) }, 'b', LEASE_MS),
      false,
    );
    c.advance(LEASE_MS - 1);
  }
});

test('a replica that just started waits one whole lease on its own clock before displacing a holder', () => {
  const c = clock();
  const observer = new LeaseObserver(c.now);
  const record = { holderIdentity: 'a', resourceVersion: '7', leaseDurationSeconds: 6 };
  assert.equal(observer.mayHold(record, 'b', LEASE_MS), false);
  c.advance(LEASE_MS);
  assert.equal(observer.mayHold(record, 'b', LEASE_MS), false, 'exactly one lease is not yet past it');
  c.advance(1);
  assert.equal(observer.mayHold(record, 'b', LEASE_MS), true);
});

test("the holder's own lease duration counts, not ours", () => {
  const c = clock();
  const observer = new LeaseObserver(c.now);
  const record = { holderIdentity: 'a', resourceVersion: '7', leaseDurationSeconds: 30 };
  observer.mayHold(record, 'b', LEASE_MS);
  c.advance(LEASE_MS * 2);
  assert.equal(observer.mayHold(record, 'b', LEASE_MS), false);
  c.advance(30_000);
  assert.equal(observer.mayHold(record, 'b', LEASE_MS), true);
});

test('a released Lease (no holder) and our own are free at once', () => {
  const observer = new LeaseObserver(clock().now);
  assert.equal(observer.mayHold({ holderIdentity: null, resourceVersion: '1' }, 'b', LEASE_MS), true);
  assert.equal(observer.mayHold({ holderIdentity: 'b', resourceVersion: '2' }, 'b', LEASE_MS), true);
});
