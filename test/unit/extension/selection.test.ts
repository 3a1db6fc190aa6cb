// The workspace's selection file (extension/model/selection.ts): what is written reads back,
// and anything else is refused with the field and the problem, so it is ignored, not half-used.
import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import { formatSelection, parseSelection } from '../../../extension/model/selection';

describe('selection file', () => {
  test('a written selection reads back the same', () => {
    for (const selection of [
      { context: 'qs-second', namespace: 'team-a' },
      { context: 'only-context' },
      {},
    ]) {
      assert.deepEqual(parseSelection(formatSelection(selection)), { selection });
    }
  });

  test('fields that are not set are not written', () => {
    assert.deepEqual(JSON.parse(formatSelection({ context: 'c', namespace: undefined })), { context: 'c' });
  });

  test('unknown fields are dropped', () => {
    assert.deepEqual(parseSelection('{"context":"c","extra":1}'), { selection: { context: 'c' } });
  });

  test('a damaged file is refused with the reason', () => {
    assert.deepEqual(parseSelection('{"context": "c"'), { problem: 'it is not JSON' });
    assert.deepEqual(parseSelection(''), { problem: 'it is not JSON' });
    assert.deepEqual(parseSelection('["c"]'), { problem: 'it is not a JSON object' });
    assert.deepEqual(parseSelection('null'), { problem: 'it is not a JSON object' });
  });

  test('a field of the wrong type or empty is refused, naming the field', () => {
    assert.deepEqual(parseSelection('{"context":"c","namespace":7}'), {
      problem: '"namespace" is not a non-empty string',
    });
    assert.deepEqual(parseSelection('{"context":""}'), { problem: '"context" is not a non-empty string' });
  });
});
