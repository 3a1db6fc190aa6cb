// A queue the queue-agent's preflight refuses in PREPARING, before it touched the broker
// (docs/design.md §6 "Refused activations"): the split is Rejected with the reason and the
// activation ends by itself, nothing of the refused queue left to roll back, delete or record.
import assert from 'node:assert/strict';
import { test } from 'node:test';
import type { SplitEvent } from '../../../core/state/events';
import { transition } from '../../../core/state/transition';
import { drive, idle, request } from './splitFixtures';

const refused = (queue: string, phase: 'PREPARING' | 'ABORTING_ACTIVATION' = 'PREPARING'): SplitEvent => ({
  type: 'stepFailed',
  phase,
  queue,
  reason: 'queue src has declaration arguments x-message-ttl',
  nothingChanged: true,
});

test('a refused source in PREPARING rejects the split and ends the activation: no rollback, no inventory', () => {
  const { state } = drive(idle(), [request('r1', { user: 'alice' }, ['invoices'])]);
  assert.equal(state.phase, 'PREPARING');
  assert.ok(state.inventory.length > 0, 'the names are recorded before anything is created');
  const r = transition(state, refused('invoices'));
  assert.equal(r.outcome, 'applied');
  assert.equal(r.state.phase, 'IDLE');
  assert.equal(r.state.workflow, null);
  assert.deepEqual(r.state.routes, []);
  assert.deepEqual(r.state.inventory, [], 'nothing of it was created: nothing to clean up or record');
  assert.deepEqual(r.state.cleanupPending, []);
  assert.equal(r.state.queues.invoices?.phase, 'INACTIVE');
  const types = r.actions.map((a) => a.type);
  assert.deepEqual(types, ['persistState', 'rejectRoute', 'reapQueueAgent', 'releaseLease']);
  const reject = r.actions[1];
  assert.ok(reject?.type === 'rejectRoute');
  assert.equal(reject.reason, 'SourceNotSplittable');
  assert.match(reject.errors[0]?.problem ?? '', /x-message-ttl/);
  assert.match(reject.errors[0]?.fix ?? '', /Nothing was cut over/);
});

test('queues that did prepare are rolled back as any abort; the refused one is not asked to', () => {
  const { state } = drive(idle(), [request('r1', { user: 'alice' }, ['invoices', 'orders'])]);
  const r = transition(state, refused('invoices'));
  assert.equal(r.state.phase, 'ABORTING_ACTIVATION');
  assert.deepEqual(r.state.workflow?.queues, ['orders']);
  assert.ok(r.state.inventory.every((res) => res.queue !== 'invoices'));
  assert.ok(r.actions.some((a) => a.type === 'rejectRoute' && a.routeId === 'r1'));
  assert.deepEqual(r.state.routes, []);
});

test('a plain rejection (no nothingChanged) still aborts through the proved rollback', () => {
  const { state } = drive(idle(), [request('r1', { user: 'alice' }, ['invoices'])]);
  const r = transition(state, { type: 'stepFailed', phase: 'PREPARING', queue: 'invoices', reason: 'x' });
  assert.equal(r.state.phase, 'ABORTING_ACTIVATION');
  assert.ok(!r.actions.some((a) => a.type === 'rejectRoute'));
});

test('nothingChanged is only believed in PREPARING', () => {
  const { state } = drive(idle(), [
    request('r1', { user: 'alice' }, ['invoices']),
    { type: 'stepFailed', phase: 'PREPARING', queue: 'invoices', reason: 'x' },
  ]);
  const r = transition(state, refused('invoices', 'ABORTING_ACTIVATION'));
  assert.equal(r.state.phase, 'DEGRADED');
});
