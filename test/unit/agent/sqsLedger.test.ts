// The SQS pump's copied-not-deleted ledger (agent/sqs/ledger.ts, docs/providers/sqs.md): a
// message seen again goes to its recorded destination; open entries go into the checkpoint.
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { CopyLedger } from '../../../agent/sqs/ledger';

const T0 = Date.parse('2026-12-01T10:00:00.000Z');

test('an entry keeps its first destination when the message is seen again, after its delete too', () => {
  const ledger = new CopyLedger();
  ledger.open({ messageId: 'a', destination: 'alice-shadow', routeId: 'alice', generation: 1, at: T0 });
  ledger.deleted('a', T0 + 10);
  const again = ledger.open({
    messageId: 'a',
    destination: 'app',
    routeId: undefined,
    generation: 2,
    at: T0 + 20,
  });
  assert.deepEqual(again, {
    messageId: 'a',
    destination: 'alice-shadow',
    routeId: 'alice',
    generation: 1,
    at: T0,
  });
  assert.equal(ledger.lookup('a')?.deletedAt, undefined, 'seen again: open again');
});

test('closed entries last one visibility timeout past the delete; open ones until retention', () => {
  const ledger = new CopyLedger();
  ledger.open({ messageId: 'closed', destination: 'app', routeId: undefined, generation: 1, at: T0 });
  ledger.deleted('closed', T0 + 1_000);
  ledger.open({ messageId: 'open', destination: 'app', routeId: undefined, generation: 1, at: T0 });
  ledger.prune(T0 + 30_999, 30_000, 3_600_000);
  assert.equal(ledger.size, 2);
  ledger.prune(T0 + 31_000, 30_000, 3_600_000);
  assert.deepEqual([ledger.lookup('closed'), ledger.lookup('open')?.messageId], [undefined, 'open']);
  ledger.prune(T0 + 3_600_000, 30_000, 3_600_000);
  assert.equal(ledger.size, 0);
});

test('the checkpoint keeps the open entries, oldest first, and restores them', () => {
  const ledger = new CopyLedger();
  ledger.open({ messageId: 'b', destination: 'app', routeId: undefined, generation: 2, at: T0 + 5 });
  ledger.open({ messageId: 'a', destination: 'alice-shadow', routeId: 'alice', generation: 1, at: T0 });
  ledger.open({ messageId: 'c', destination: 'app', routeId: undefined, generation: 2, at: T0 + 9 });
  ledger.deleted('c', T0 + 10);
  const records = ledger.records();
  assert.deepEqual(records, [
    {
      messageId: 'a',
      destination: 'alice-shadow',
      routeId: 'alice',
      generation: 1,
      at: '2026-12-01T10:00:00.000Z',
    },
    { messageId: 'b', destination: 'app', generation: 2, at: '2026-12-01T10:00:00.005Z' },
  ]);
  assert.equal(ledger.openBelow(2), 1);
  const restored = new CopyLedger();
  restored.restore(records);
  assert.deepEqual(restored.records(), records);
  assert.equal(restored.lookup('a')?.destination, 'alice-shadow');
  assert.equal(restored.lookup('c'), undefined);
});
