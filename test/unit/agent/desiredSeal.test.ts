// The queue-agent's check of its desired document against the controller's seal
// (agent/queueAgent/desiredSeal.ts): listed documents pass once, unlisted ones are refused with
// where the seal is, and a document rewritten while it was checked is read again, not refused.
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { DESIRED_DIGESTS_KEY, documentDigest } from '../../../agent/kube/sealDocument';
import { DesiredSeal } from '../../../agent/queueAgent/desiredSeal';

function sealStore(read: () => Promise<Record<string, string> | undefined>) {
  let reads = 0;
  return {
    store: {
      namespace: 'queuesplit-system',
      read: async () => {
        reads += 1;
        const data = await read();
        return data ? { data, resourceVersion: '1' } : undefined;
      },
    },
    reads: () => reads,
  };
}

const listing = (...texts: string[]) => ({ [DESIRED_DIGESTS_KEY]: texts.map(documentDigest).join(',') });

test('a listed document passes, and is not checked again until it changes', async () => {
  const { store, reads } = sealStore(async () => listing('new', 'old'));
  const seal = new DesiredSeal(store, 'qs-seal-shop-1');
  assert.equal(await seal.check('old', async () => 'old'), undefined);
  assert.equal(await seal.check('old', async () => 'old'), undefined);
  assert.equal(reads(), 1);
});

test('an unlisted document is refused, naming the seal; a missing seal too', async () => {
  const seal = new DesiredSeal(sealStore(async () => listing('mine')).store, 'qs-seal-shop-1');
  assert.deepEqual(await seal.check('forged', async () => 'forged'), {
    refused:
      'the desired document is not one the controller wrote: its digest is not in the seal ConfigMap queuesplit-system/qs-seal-shop-1',
  });
  const none = new DesiredSeal(sealStore(async () => undefined).store, 'qs-seal-shop-1');
  const missing = await none.check('x', async () => 'x');
  assert.ok(missing && missing !== 'changed');
  assert.match(missing.refused, /has no seal: ConfigMap queuesplit-system\/qs-seal-shop-1 does not exist/);
});

test('a document rewritten while it was checked is read again, not refused', async () => {
  const seal = new DesiredSeal(sealStore(async () => listing('newer', 'new')).store, 'qs-seal-shop-1');
  assert.equal(await seal.check('old', async () => 'newer'), 'changed');
});

test('a seal it may not read is a refusal that says why; other errors fail only the pass', async () => {
  const denied = new DesiredSeal(
    sealStore(async () => Promise.reject(Object.assign(new Error('forbidden'), { code: 403 }))).store,
    'qs-seal-shop-1',
  );
  const result = await denied.check('doc', async () => 'doc');
  assert.ok(result && result !== 'changed');
  assert.match(
    result.refused,
    /its seal ConfigMap queuesplit-system\/qs-seal-shop-1 cannot be read \(forbidden\)/,
  );
  const flaky = new DesiredSeal(
    sealStore(async () => Promise.reject(Object.assign(new Error('boom'), { code: 500 }))).store,
    'qs-seal-shop-1',
  );
  await assert.rejects(
    flaky.check('doc', async () => 'doc'),
    /boom/,
  );
});
