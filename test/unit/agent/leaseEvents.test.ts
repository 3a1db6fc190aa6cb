// A route's lease events from its QueueSplit as listed (agent/controller/leaseEvents.ts).
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { leaseEvents } from '../../../agent/controller/leaseEvents';
import type { QueueSplit } from '../../../core/crd/queueSplitSchema';
import type { RouteState } from '../../../core/state/stateDocument';

const LEASE_SECONDS = 60;

function split(renewTime: number): QueueSplit {
  return {
    apiVersion: 'queuesplit.dev/v1alpha1',
    kind: 'QueueSplit',
    metadata: { name: 'qs-alice', uid: 'uid-a' },
    spec: {
      workload: { kind: 'Deployment', name: 'shop' },
      queues: ['orders'],
      filter: { 'x-dev': 'alice' },
      owner: 'alice',
      routeId: 'r1',
      lease: { renewTime: new Date(renewTime).toISOString(), durationSeconds: LEASE_SECONDS },
    },
  };
}

function route(leaseExpiresAt: number): RouteState {
  return {
    routeId: 'r1',
    owner: 'alice',
    queues: ['orders'],
    filter: { 'x-dev': 'alice' },
    phase: 'ACTIVE',
    generation: 3,
    leaseExpiresAt: new Date(leaseExpiresAt).toISOString(),
  };
}

test('a lease renewed after the split list was taken is not expired by a pass that runs after the listed expiry', () => {
  // The list is taken when the loop ticks; with 200 workloads due and 16 passed side by side,
  // this workload's pass may come seconds later. The listed copy's lease had not run out when the list
  // was taken; the sidecar has renewed it since (the next list shows it), but the pass itself
  // runs after the listed expiry.
  const listedAt = Date.now() - 5_000;
  const renewed = listedAt - LEASE_SECONDS * 1000 + 2_000; // runs out 2 s after the list, 3 s ago
  const listed = split(renewed);
  const events = leaseEvents(route(renewed + LEASE_SECONDS * 1000), listed, listedAt);
  assert.deepEqual(events, [], 'judged at the time of the list, the lease was still running');
});

test('a lease that had run out when the split list was taken is expired', () => {
  const listedAt = Date.now();
  const renewed = listedAt - LEASE_SECONDS * 1000 - 1_000;
  const events = leaseEvents(route(renewed + LEASE_SECONDS * 1000), split(renewed), listedAt);
  assert.deepEqual(events, [{ type: 'leaseExpired', routeId: 'r1' }]);
});

test('a draining route is not expired again; a moved expiry is a renewal', () => {
  const listedAt = Date.now();
  const old = listedAt - LEASE_SECONDS * 1000 - 1_000;
  assert.deepEqual(
    leaseEvents({ ...route(old + LEASE_SECONDS * 1000), phase: 'DRAINING' }, split(old), listedAt),
    [],
  );
  const renewed = listedAt;
  assert.deepEqual(leaseEvents(route(old + LEASE_SECONDS * 1000), split(renewed), listedAt), [
    {
      type: 'leaseRenewed',
      routeId: 'r1',
      expiresAt: new Date(renewed + LEASE_SECONDS * 1000).toISOString(),
    },
  ]);
});
