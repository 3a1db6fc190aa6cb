// Which QueueSplit a route belongs to when several carry its routeId (agent/controller/routeBinding.ts).
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { bindRoutes } from '../../../agent/controller/routeBinding';
import type { QueueSplit } from '../../../core/crd/queueSplitSchema';

function split(name: string, owner: string, routeId: string, uid: string, created: string): QueueSplit {
  return {
    apiVersion: 'queuesplit.dev/v1alpha1',
    kind: 'QueueSplit',
    metadata: { name, uid, creationTimestamp: created },
    spec: {
      workload: { kind: 'Deployment', name: 'shop' },
      queues: ['orders'],
      filter: { 'x-dev': owner },
      owner,
      routeId,
      lease: { renewTime: created, durationSeconds: 60 },
    },
  };
}

const alice = split('qs-alice', 'alice', 'r1', 'uid-a', '2026-12-03T10:00:00Z');
const bobCopy = split('qs-bob', 'bob', 'r1', 'uid-b', '2026-12-03T10:05:00Z');
const bobOwn = split('qs-bob-own', 'bob', 'r2', 'uid-c', '2026-12-03T10:06:00Z');
const names = (splits: readonly QueueSplit[]) => splits.map((s) => s.metadata.name).sort();

test('a route in the state keeps the object it was made from, in any list order; the copy is refused naming it', () => {
  for (const list of [
    [alice, bobCopy, bobOwn],
    [bobCopy, bobOwn, alice],
  ]) {
    const { accepted, copies } = bindRoutes([{ routeId: 'r1', owner: 'alice', splitUid: 'uid-a' }], list);
    assert.deepEqual(names(accepted), ['qs-alice', 'qs-bob-own']);
    assert.deepEqual(
      copies.map((c) => [c.split.metadata.name, c.holder]),
      [['qs-bob', 'qs-alice']],
    );
  }
});

test('a copy does not inherit a route whose own object is gone (it is deleted, the route drains)', () => {
  const { accepted, copies } = bindRoutes([{ routeId: 'r1', owner: 'alice', splitUid: 'uid-a' }], [bobCopy]);
  assert.deepEqual(accepted, []);
  assert.equal(copies[0]?.split, bobCopy);
});

test('a copy older than its route cannot take it either: the uid decides, not age', () => {
  const early = split('qs-early', 'mallory', 'r1', 'uid-m', '2026-12-03T09:00:00Z');
  const { accepted } = bindRoutes([{ routeId: 'r1', owner: 'alice', splitUid: 'uid-a' }], [early, alice]);
  assert.deepEqual(names(accepted), ['qs-alice']);
});

test('state written before routes were bound: the route owner’s object, never another owner’s', () => {
  const { accepted, copies } = bindRoutes([{ routeId: 'r1', owner: 'alice' }], [bobCopy, alice]);
  assert.deepEqual(names(accepted), ['qs-alice']);
  assert.deepEqual(names(copies.map((c) => c.split)), ['qs-bob']);
});

test('two new objects with one routeId: the older is the candidate, the later one refused, whatever the list order', () => {
  for (const list of [
    [alice, bobCopy],
    [bobCopy, alice],
  ]) {
    const { accepted, copies } = bindRoutes([], list);
    assert.deepEqual(names(accepted), ['qs-alice']);
    assert.deepEqual(names(copies.map((c) => c.split)), ['qs-bob']);
  }
});
