// env delivery for every debugger: the split's env lands in the field each debugger reads
// (`env` for node, python/debugpy, go, java, ...; `environment` list for cppdbg), over the
// launch's own values, and an attach configuration is refused with the fix.
import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import { envTargetFor, mergeSplitEnv } from '../../../extension/model/debuggerEnv';

const split = { SOURCE_QUEUE: 'qs-shadow-1', AMQP_URL: 'amqp://h:5672' };

describe('mergeSplitEnv', () => {
  for (const type of ['node', 'pwa-node', 'python', 'debugpy', 'go', 'java', 'coreclr', 'lldb']) {
    test(`${type}: merged into env, the split wins, the launch keeps the rest`, () => {
      const result = mergeSplitEnv(
        { type, request: 'launch', env: { SOURCE_QUEUE: 'real-queue', KEEP: 'kept', N: 3 } },
        split,
      );
      assert.ok(result.ok);
      assert.deepEqual(result.merge.fields, {
        env: { SOURCE_QUEUE: 'qs-shadow-1', AMQP_URL: 'amqp://h:5672', KEEP: 'kept', N: '3' },
      });
      assert.deepEqual(result.merge.replaced, ['SOURCE_QUEUE']);
      assert.equal(envTargetFor(type).field, 'env');
    });
  }

  test('a launch without env gets exactly the split env', () => {
    const result = mergeSplitEnv({ type: 'go', request: 'launch' }, split);
    assert.ok(result.ok);
    assert.deepEqual(result.merge.fields, { env: split });
    assert.deepEqual(result.merge.replaced, []);
  });

  test('cppdbg: merged into the environment list of {name, value}', () => {
    const result = mergeSplitEnv(
      {
        type: 'cppdbg',
        request: 'launch',
        environment: [
          { name: 'SOURCE_QUEUE', value: 'real-queue' },
          { name: 'KEEP', value: 'kept' },
          { bogus: true },
        ],
      },
      split,
    );
    assert.ok(result.ok);
    assert.deepEqual(result.merge.fields, {
      environment: [
        { name: 'SOURCE_QUEUE', value: 'qs-shadow-1' },
        { name: 'KEEP', value: 'kept' },
        { name: 'AMQP_URL', value: 'amqp://h:5672' },
      ],
    });
    assert.deepEqual(result.merge.replaced, ['SOURCE_QUEUE']);
    assert.equal('env' in result.merge.fields, false, 'cppdbg ignores env: nothing written there');
  });

  test('attach is refused with the fix, for any debugger', () => {
    for (const type of ['debugpy', 'go', 'java', 'node']) {
      const result = mergeSplitEnv({ type, request: 'attach', env: {} }, split);
      assert.equal(result.ok, false);
      if (!result.ok) {
        assert.match(result.error, /attach/);
        assert.match(result.fix, /"request": "launch"/);
      }
    }
  });
});
