// A pass starts from the cached workload only when the copy is at least as new as what the
// controller itself last wrote or read (agent/controller/workloadCache.ts): a cache that has not
// yet shown the controller's own redirect would otherwise read as drift, or prove a rollout that
// has not begun.
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { cachedIsFresh } from '../../../agent/controller/workloadCache';

test("a cached workload older than the controller's own last write is not used", () => {
  assert.ok(cachedIsFresh('1205', '1205'), 'the version the controller wrote');
  assert.ok(cachedIsFresh('1300', '1205'), 'a newer one (someone changed it since)');
  assert.ok(!cachedIsFresh('1204', '1205'), 'older: the watch has not delivered our write yet');
  // Compared as numbers, not text.
  assert.ok(cachedIsFresh('10000', '9999'));
  assert.ok(!cachedIsFresh('9999', '10000'));
  assert.ok(cachedIsFresh('42', undefined), 'nothing written or read yet: the cache answers');
});

test('resourceVersions that are not etcd revisions are never ordered: the pass reads the API', () => {
  assert.ok(!cachedIsFresh('abc', undefined));
  assert.ok(!cachedIsFresh('12', 'xyz'));
  assert.ok(!cachedIsFresh(undefined, '12'));
  assert.ok(!cachedIsFresh('', undefined));
});
