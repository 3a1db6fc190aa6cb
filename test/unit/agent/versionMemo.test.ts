// A pass derives what it needs from each cached object once per version (agent/controller/
// versionMemo.ts): with 1,000 splits, one changed split must not revalidate the other 999.
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { VersionMemo } from '../../../agent/controller/versionMemo';

const obj = (uid: string, resourceVersion: string | undefined, value: string) => ({
  metadata: { uid, ...(resourceVersion !== undefined ? { resourceVersion } : {}) },
  value,
});

test('derived again only for an object whose resourceVersion changed, or that has none', () => {
  const derived: string[] = [];
  const memo = new VersionMemo((o: ReturnType<typeof obj>) => {
    derived.push(o.metadata.uid);
    return o.value.toUpperCase();
  });
  assert.deepEqual(memo.map([obj('a', '1', 'x'), obj('b', '1', 'y')]), ['X', 'Y']);
  assert.deepEqual(derived, ['a', 'b']);
  assert.deepEqual(memo.map([obj('a', '1', 'x'), obj('b', '2', 'z')]), ['X', 'Z']);
  assert.deepEqual(derived, ['a', 'b', 'b'], 'only the changed one');
  // Gone, then back with the same version: derived again (it was forgotten).
  memo.map([obj('b', '2', 'z')]);
  memo.map([obj('a', '1', 'x'), obj('b', '2', 'z')]);
  assert.deepEqual(derived, ['a', 'b', 'b', 'a']);
  // Without a version nothing is kept.
  memo.map([obj('c', undefined, 'q')]);
  memo.map([obj('c', undefined, 'q')]);
  assert.deepEqual(derived.slice(-2), ['c', 'c']);
});
