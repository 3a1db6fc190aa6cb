// The persisted state document: round trips, and refuses corrupt or future documents clearly.
import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import fc from 'fast-check';
import { parseState, serializeState, STATE_API_VERSION } from '../../../core/state/stateDocument';
import { at, idle, PATHS } from './splitFixtures';

describe('state document', () => {
  test('every state the machine produces serialises and parses back unchanged', () => {
    for (const name of Object.keys(PATHS)) {
      const state = at(name);
      const parsed = parseState(serializeState(state));
      assert.ok(parsed.ok, `${name}: ${JSON.stringify(parsed)}`);
      assert.deepEqual(parsed.value, state);
    }
  });

  test('a newer version is refused with "upgrade the controller"', () => {
    const future = { ...idle(), apiVersion: 'queuesplit.dev/state/v2', somethingNew: true };
    const result = parseState(JSON.stringify(future));
    assert.ok(!result.ok);
    assert.equal(result.errors[0]!.path, 'apiVersion');
    assert.match(result.errors[0]!.problem, /newer Queue Split controller/);
    assert.match(result.errors[0]!.fix, /Upgrade the Queue Split controller/);
  });

  test('corrupt JSON, wrong kinds of documents and unknown versions are refused', () => {
    for (const text of [
      '{',
      '',
      'null',
      '[]',
      '"text"',
      '{"apiVersion": "v1"}',
      '{"apiVersion":"queuesplit.dev/state/v0"}',
    ]) {
      const result = parseState(text);
      assert.ok(!result.ok, text);
      assert.match(result.errors[0]!.fix, /will not act on a state it cannot read/);
    }
    assert.match(JSON.stringify(parseState('{')), /not valid JSON/);
  });

  test('schema violations name the field and say the state is corrupt', () => {
    const state = { ...idle(), generation: -1, phase: 'SOMEWHERE' };
    const result = parseState(state);
    assert.ok(!result.ok);
    const paths = result.errors.map((e) => e.path);
    assert.ok(paths.includes('generation') && paths.includes('phase'), paths.join());
    assert.ok(result.errors.every((e) => /state is corrupt/.test(e.problem)));
  });

  test('cross-field inconsistencies are corruption too', () => {
    const degradedWithoutReason = { ...idle(), phase: 'DEGRADED' };
    assert.match(JSON.stringify(parseState(degradedWithoutReason)), /degraded/);
    const unknownQueue = { ...idle(), activeQueues: ['payments'] };
    assert.match(JSON.stringify(parseState(unknownQueue)), /undeclared queue \\"payments\\"/);
    const stepWithoutWorkflow = { ...at('PREPARING'), workflow: null };
    assert.match(JSON.stringify(parseState(stepWithoutWorkflow)), /workflow/);
  });

  test('oversized text is refused without parsing', () => {
    const result = parseState(`{"pad":"${'x'.repeat(1024 * 1024)}"}`);
    assert.ok(!result.ok);
    assert.match(result.errors[0]!.problem, /larger than/);
  });

  test('never throws on random input', () => {
    fc.assert(
      fc.property(fc.oneof(fc.string(), fc.jsonValue(), fc.anything()), (input) => {
        const result = parseState(input);
        assert.equal(typeof result.ok, 'boolean');
      }),
      { numRuns: 500 },
    );
    assert.equal(idle().apiVersion, STATE_API_VERSION);
  });
});
