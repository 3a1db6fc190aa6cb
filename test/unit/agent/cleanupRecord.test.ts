// The cleanup record a handback leaves when it kept broker resources: names and reasons only,
// merged across handbacks, with the safe action spelled out.
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { CLEANUP_KEY } from '../../../core/agentProtocol';
import { initialState, type SplitState } from '../../../core/state/stateDocument';
import { cleanupRecord, namespaceDeletedRecord } from '../../../agent/controller/cleanupRecord';

function withPending(names: string[]): SplitState {
  const state = initialState({
    workload: { kind: 'Deployment', namespace: 'shop', name: 'orders', uid: 'u1' },
    installId: 'i1',
    queues: { orders: 'rabbitmq' },
  });
  return {
    ...state,
    cleanupPending: names.map((name) => ({
      resource: { provider: 'rabbitmq', kind: 'queue', name, queue: 'orders', epoch: 1 },
      reason: `${name}: 3 ready`,
    })),
  };
}

test('lists each kept resource with its reason and says what to do', () => {
  const record = cleanupRecord(withPending(['qs-rses-a', 'qs-rapp-b']));
  const listed = JSON.parse(record[CLEANUP_KEY]!) as { name: string; reason: string; provider: string }[];
  assert.deepEqual(
    listed.map((r) => [r.name, r.reason, r.provider]),
    [
      ['qs-rses-a', 'qs-rses-a: 3 ready', 'rabbitmq'],
      ['qs-rapp-b', 'qs-rapp-b: 3 ready', 'rabbitmq'],
    ],
  );
  assert.match(record.safeAction!, /may hold messages/);
});

test('a later handback adds to the earlier record without repeating a resource', () => {
  const first = cleanupRecord(withPending(['qs-rses-a']));
  const second = cleanupRecord(withPending(['qs-rses-a', 'qs-rses-c']), first[CLEANUP_KEY]);
  const names = (JSON.parse(second[CLEANUP_KEY]!) as { name: string }[]).map((r) => r.name);
  assert.deepEqual(names, ['qs-rses-a', 'qs-rses-c']);
});

test('a deleted namespace records the whole inventory, kept resources with their reasons, and earlier records', () => {
  const state: SplitState = {
    ...withPending(['qs-rapp-b']),
    inventory: ['qs-rses-a', 'qs-rapp-b'].map((name) => ({
      provider: 'rabbitmq' as const,
      kind: 'queue' as const,
      name,
      queue: 'orders',
      epoch: 1,
    })),
  };
  const earlier = cleanupRecord(withPending(['qs-rses-old']))[CLEANUP_KEY];
  const record = namespaceDeletedRecord(state, [earlier, undefined]);
  const listed = JSON.parse(record[CLEANUP_KEY]!) as { name: string; reason: string }[];
  assert.deepEqual(
    listed.map((r) => r.name),
    ['qs-rses-old', 'qs-rapp-b', 'qs-rses-a'],
  );
  assert.equal(listed[1]!.reason, 'qs-rapp-b: 3 ready', 'a kept resource keeps its own reason');
  assert.match(listed[2]!.reason, /namespace shop was deleted during the split/);
  assert.equal(record.workload, 'shop/Deployment/orders');
  assert.match(record.safeAction!, /may hold messages/);
});
