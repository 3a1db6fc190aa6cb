// The launch form every debugger accepts (an env marker naming a split of .vscode/queue-split.json),
// the old inline block still read, and the text edits of "Add Queue Split to Launch
// Configuration" and "Migrate Launch Configurations" (comments kept, per debugger's env field).
import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import { parse } from 'jsonc-parser';
import {
  addSplitTo,
  blockValue,
  migrateInlineBlocks,
  namedSplitBlock,
  newLaunchJson,
  parseSplitsFile,
} from '../../../extension/model/launchEdit';
import { splitNameFor, splitReference } from '../../../extension/model/launchSplits';

const value = blockValue({
  workload: 'deployment/orders-app',
  headers: { 'x-queue-split-user': 'alice' },
  delivery: 'env',
});

const launchJson = [
  '{',
  '  // my comment stays',
  '  "version": "0.2.0",',
  '  "configurations": [',
  '    {',
  '      "type": "node",',
  '      "program": "${workspaceFolder}/{x}.js",',
  '      "name": "Debug orders",',
  '      "request": "launch",',
  '      "env": { "KEEP": "kept" }',
  '    },',
  '    { "type": "debugpy", "request": "launch", "name": "Py" },',
  '    { "type": "cppdbg", "request": "launch", "name": "C", "environment": [{ "name": "A", "value": "1" }] },',
  '    { "type": "made-up", "request": "launch", "name": "Other" }',
  '  ]',
  '}',
].join('\n');

type Config = Record<string, unknown>;
const configs = (text: string) => (parse(text) as { configurations: Config[] }).configurations;

describe('splitReference', () => {
  test('the env marker (object env), cppdbg environment list, the old block, nothing', () => {
    assert.deepEqual(splitReference({ type: 'go', env: { QUEUE_SPLIT: 'orders' } }), {
      kind: 'named',
      name: 'orders',
    });
    assert.deepEqual(splitReference({ type: 'cppdbg', environment: [{ name: 'QUEUE_SPLIT', value: 'o' }] }), {
      kind: 'named',
      name: 'o',
    });
    assert.deepEqual(splitReference({ type: 'node', queueSplit: { delivery: 'env' } }), {
      kind: 'inline',
      raw: { delivery: 'env' },
    });
    assert.deepEqual(splitReference({ type: 'node', env: { OTHER: 'x' } }), { kind: 'none' });
    assert.deepEqual(splitReference({ type: 'node', env: { QUEUE_SPLIT: '  ' } }), { kind: 'none' });
  });
});

describe('namedSplitBlock', () => {
  const file =
    '{\n  // comments are fine\n  "splits": { "orders": { "workload": "deployment/orders", "delivery": "http" } }\n}';
  test('reads the named split', () => {
    const parsed = namedSplitBlock('orders', file);
    assert.ok(parsed.ok, JSON.stringify(parsed));
    assert.equal(parsed.block.mode, 'http');
    assert.deepEqual(parsed.block.workload, { kind: 'Deployment', name: 'orders' });
  });
  test('every problem names the file, the split and the fix', () => {
    const missing = namedSplitBlock('orders', undefined);
    assert.ok(!missing.ok);
    assert.match(missing.errors[0]!, /QUEUE_SPLIT=orders .*\.vscode\/queue-split\.json does not exist/);
    const unknown = namedSplitBlock('nope', file);
    assert.ok(!unknown.ok);
    assert.match(unknown.errors[0]!, /defines no split "nope" \(it defines "orders"\)/);
    const bad = namedSplitBlock('x', '{"splits": {"x": {"delivery": "pigeon"}}}');
    assert.ok(!bad.ok);
    assert.match(
      bad.errors[0]!,
      /\.vscode\/queue-split\.json splits\.x\.delivery must be "env", "http" or "relay"/,
    );
    const broken = parseSplitsFile('{"splits": ');
    assert.ok(!broken.ok);
    assert.match(broken.errors[0]!, /must be JSON/);
  });
});

describe('Add Queue Split to Launch Configuration (text edits)', () => {
  test('node: the marker joins its env, the split goes to a new splits file, comments stay', () => {
    const result = addSplitTo(launchJson, undefined, 'Debug orders', value);
    assert.ok(result.ok);
    assert.match(result.edit.launchJson, /\/\/ my comment stays/);
    assert.deepEqual(configs(result.edit.launchJson)[0]!.env, { KEEP: 'kept', QUEUE_SPLIT: 'debug-orders' });
    assert.equal(result.edit.splitName, 'debug-orders');
    assert.deepEqual(JSON.parse(result.edit.splitsFile), { splits: { 'debug-orders': value } });
    assert.equal(configs(result.edit.launchJson)[0]!.queueSplit, undefined, 'no inline block written');
  });
  test('debugpy and an unknown debugger get an env object; cppdbg an environment entry', () => {
    let text = launchJson;
    let splits: string | undefined;
    for (const name of ['Py', 'C', 'Other']) {
      const result = addSplitTo(text, splits, name, value);
      assert.ok(result.ok, JSON.stringify(result));
      ({ launchJson: text, splitsFile: splits } = result.edit);
    }
    const [, py, c, other] = configs(text);
    assert.deepEqual(py!.env, { QUEUE_SPLIT: 'py' });
    assert.deepEqual(c!.environment, [
      { name: 'A', value: '1' },
      { name: 'QUEUE_SPLIT', value: 'c' },
    ]);
    assert.equal(c!.env, undefined);
    assert.deepEqual(other!.env, { QUEUE_SPLIT: 'other' });
    assert.deepEqual(Object.keys((JSON.parse(splits!) as { splits: object }).splits), ['py', 'c', 'other']);
  });
  test('not twice, not for unknown names; a taken split name gets a suffix', () => {
    const once = addSplitTo(launchJson, undefined, 'Py', value);
    assert.ok(once.ok);
    const twice = addSplitTo(once.edit.launchJson, once.edit.splitsFile, 'Py', value);
    assert.ok(!twice.ok);
    assert.match(twice.error, /already starts the split "py"/);
    const unknown = addSplitTo(launchJson, undefined, 'Nope', value);
    assert.ok(!unknown.ok);
    assert.match(unknown.error, /no configuration named "Nope"/);
    assert.equal(splitNameFor('Py', ['py', 'py-2']), 'py-3');
  });
  test('a new launch.json names the split in a node env', () => {
    const [config] = configs(newLaunchJson('orders'));
    assert.deepEqual(config!.env, { QUEUE_SPLIT: 'orders' });
    assert.equal(config!.type, 'node');
  });
});

describe('Migrate Launch Configurations', () => {
  const old = [
    '{',
    '  "configurations": [',
    '    // keep me',
    '    { "type": "node", "request": "launch", "name": "A", "env": {"X": "1"}, "queueSplit": { "workload": "deployment/a", "persist": true } },',
    '    { "type": "cppdbg", "request": "launch", "name": "B", "queueSplit": { "delivery": "http" } },',
    '    { "type": "go", "request": "launch", "name": "plain" }',
    '  ]',
    '}',
  ].join('\n');
  test('each inline block moves to the splits file unchanged; its launch names it; others untouched', () => {
    const existing = '{\n  "splits": { "a": { "workload": "deployment/other" } }\n}\n';
    const migration = migrateInlineBlocks(old, existing);
    assert.deepEqual(migration.migrated, [
      { configuration: 'A', split: 'a-2' },
      { configuration: 'B', split: 'b' },
    ]);
    assert.match(migration.launchJson, /\/\/ keep me/);
    const [a, b, plain] = configs(migration.launchJson);
    assert.deepEqual(a, { type: 'node', request: 'launch', name: 'A', env: { X: '1', QUEUE_SPLIT: 'a-2' } });
    assert.deepEqual(b!.environment, [{ name: 'QUEUE_SPLIT', value: 'b' }]);
    assert.equal(b!.queueSplit, undefined);
    assert.deepEqual(plain, { type: 'go', request: 'launch', name: 'plain' });
    assert.deepEqual(parse(migration.splitsFile), {
      splits: {
        a: { workload: 'deployment/other' },
        'a-2': { workload: 'deployment/a', persist: true },
        b: { delivery: 'http' },
      },
    });
    assert.deepEqual(
      migrateInlineBlocks(migration.launchJson, migration.splitsFile).migrated,
      [],
      'idempotent',
    );
  });
});
