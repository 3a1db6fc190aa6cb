// The lag a developer sees on their QueueSplit: their session shadow's unconsumed messages per
// queue and in all (the extension shows them: "lag N", "draining … (N left)"), what the split adds
// to the application's lag (the source's backlog), and a condition while that backlog keeps
// growing. Before, the status schema and the extension had `lag` but the controller never wrote it.
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { OBSERVED_API_VERSION, type ObservedState } from '../../../core/agentProtocol';
import type { QueueSplit } from '../../../core/crd/queueSplitSchema';
import { initialState, type SplitState } from '../../../core/state/stateDocument';
import { splitStatus } from '../../../agent/controller/splitStatus';

const split = {
  apiVersion: 'queuesplit.dev/v1alpha1',
  kind: 'QueueSplit',
  metadata: { name: 'alice-orders', namespace: 'shop', generation: 1 },
  spec: { routeId: 'routealiceaaaaaaaa', queues: ['orders', 'invoices'] },
} as unknown as QueueSplit; // only the fields splitStatus reads

const state: SplitState = {
  ...initialState({
    workload: { kind: 'Deployment', namespace: 'shop', name: 'orders', uid: 'u1' },
    installId: 'i1',
    queues: { orders: 'rabbitmq', invoices: 'rabbitmq' },
  }),
  phase: 'ACTIVE',
  routes: [
    {
      routeId: 'routealiceaaaaaaaa',
      owner: 'alice',
      queues: ['orders', 'invoices'],
      filter: { 'x-dev-user': 'alice' },
      phase: 'ACTIVE',
      generation: 2,
      leaseExpiresAt: '2026-12-07T22:00:00Z',
    },
  ],
};

const observed = (queues: ObservedState['queues']): ObservedState => ({
  apiVersion: OBSERVED_API_VERSION,
  activationId: 'i1/u1',
  observedGeneration: 3,
  updatedAt: '2026-12-07T21:00:00Z',
  queues,
  routes: {},
});
const queue = (lag: NonNullable<ObservedState['queues'][string]['lag']>, published = 0) => ({
  step: 'ACTIVE' as const,
  generation: 3,
  outcome: { kind: 'done' as const, evidence: 'ok' },
  health: 'ok' as const,
  published: { routealiceaaaaaaaa: published },
  lag,
});

test("the status names each queue's unconsumed session messages and their sum, and the source backlog the split adds", () => {
  const status = splitStatus(split, {
    state,
    resolved: [],
    observed: observed({
      orders: queue({ routes: { routealiceaaaaaaaa: 7, routebobaaaaaaaaaa: 40 }, source: 12_345 }, 9),
      invoices: queue({ routes: { routealiceaaaaaaaa: 2 } }),
    }),
  });
  const orders = status.queues?.find((q) => q.name === 'orders');
  const invoices = status.queues?.find((q) => q.name === 'invoices');
  assert.equal(orders?.lag, 7, "alice's own shadow, not bob's");
  assert.equal(
    orders?.sourceBacklog,
    12_000,
    'two significant digits: not every reading rewrites every status',
  );
  assert.equal(invoices?.lag, 2);
  assert.equal(invoices?.sourceBacklog, undefined, 'not copying, or unknown: absent, never 0');
  const small = splitStatus(split, {
    state,
    resolved: [],
    observed: observed({ orders: queue({ routes: {}, source: 640 }), invoices: queue({ routes: {} }) }),
  });
  assert.equal(small.queues?.[0]?.sourceBacklog, undefined, 'under a chunk: in flight, not lag');
  assert.equal(status.lag, 9);
  assert.ok(!status.conditions?.some((c) => c.type === 'FallingBehind'));
});

test('a lag the agent could not read is absent, in the queue and in the sum', () => {
  const status = splitStatus(split, {
    state,
    resolved: [],
    observed: observed({
      orders: queue({ routes: {} }),
      invoices: queue({ routes: { routealiceaaaaaaaa: 2 } }),
    }),
  });
  assert.equal(status.queues?.find((q) => q.name === 'orders')?.lag, undefined);
  assert.equal(status.lag, undefined, 'a sum over an unknown reading would understate it');
});

test('a source falling behind is a condition that names the queue, the backlog, since when, and the safe action', () => {
  const status = splitStatus(split, {
    state,
    resolved: [],
    observed: observed({
      orders: queue({
        routes: { routealiceaaaaaaaa: 0 },
        source: 48_200,
        behindSince: '2026-12-07T20:58:00.000Z',
      }),
      invoices: queue({ routes: { routealiceaaaaaaaa: 0 }, source: 3 }),
    }),
  });
  const behind = status.conditions?.find((c) => c.type === 'FallingBehind');
  assert.ok(behind, 'condition present');
  assert.equal(behind.status, 'True');
  assert.equal(behind.reason, 'SourceBacklogGrowing');
  assert.equal(behind.lastTransitionTime, '2026-12-07T20:58:00Z');
  assert.match(behind.message, /orders: about 48000 messages wait in the source/);
  assert.doesNotMatch(behind.message, /invoices/);
  assert.match(behind.message, /application reads them late/);
  assert.match(behind.message, /Stop the splits you no longer use/);
  // The split itself is still Active and Ready: the condition informs, it does not block.
  assert.equal(status.phase, 'Active');
});
