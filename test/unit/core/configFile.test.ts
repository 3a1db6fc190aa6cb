// A setting inside a mounted config file: found in .properties, YAML and JSON, and rewritten so
// the copy differs from the file in exactly that one value (core/queueConfig/configFile.ts).
import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import { findSetting, rewriteSetting, type ConfigFileFormat } from '../../../core/queueConfig/configFile';

function set(text: string, format: ConfigFileFormat, key: string, value: string): string {
  const found = findSetting(text, format, key, 'the file', 'p');
  assert.ok(found.ok, JSON.stringify(found));
  return rewriteSetting(text, found.value, value);
}

function problem(text: string, format: ConfigFileFormat, key: string): string {
  const found = findSetting(text, format, key, 'the file', 'queues[0].kafka.sourceFile');
  assert.ok(!found.ok, 'expected a refusal');
  assert.equal(found.errors[0]!.path, 'queues[0].kafka.sourceFile');
  return `${found.errors[0]!.problem} ${found.errors[0]!.fix}`;
}

describe('Spring-style .properties', () => {
  const file = [
    '# orders service',
    'spring.kafka.bootstrap-servers=kafka:9092',
    'app.orders.topic = orders',
    '! a comment',
    'spring.kafka.consumer.group-id:orders-app',
    'long.value=a\\',
    '   b',
    '',
  ].join('\n');

  test('finds key = value, key:value, and keeps the last definition', () => {
    const found = findSetting(file, 'properties', 'app.orders.topic', 'f', 'p');
    assert.ok(found.ok);
    assert.equal(found.value.value, 'orders');
    const again = findSetting(`${file}app.orders.topic=later\n`, 'properties', 'app.orders.topic', 'f', 'p');
    assert.ok(again.ok);
    assert.equal(again.value.value, 'later');
  });

  test('rewrites only the value: every other byte as it was', () => {
    const out = set(file, 'properties', 'spring.kafka.consumer.group-id', 'qs-app-group');
    assert.equal(out, file.replace('group-id:orders-app', 'group-id:qs-app-group'));
  });

  test('refuses a value continued over lines, a missing key, a ${} placeholder', () => {
    assert.match(problem(file, 'properties', 'long.value'), /continues over several lines/);
    assert.match(problem(file, 'properties', 'app.invoices.topic'), /has no key app\.invoices\.topic/);
    assert.match(problem('app.topic=${TOPIC}\n', 'properties', 'app.topic'), /placeholder.*sourceEnv/);
  });
});

describe('YAML (Spring Boot application.yml)', () => {
  const file = [
    '# orders service',
    'spring:',
    '  kafka:',
    '    consumer:',
    '      group-id: orders-app   # the group',
    'app.orders:',
    "  topic: 'orders'",
    '---',
    'other: doc',
    '',
  ].join('\n');

  test('nested, dotted and mixed keys reach the same value', () => {
    const found = findSetting(file, 'yaml', 'app.orders.topic', 'f', 'p');
    assert.ok(found.ok);
    assert.equal(found.value.value, 'orders');
  });

  test('rewrites the scalar in its own quoting, comments and other documents untouched', () => {
    assert.equal(
      set(file, 'yaml', 'spring.kafka.consumer.group-id', 'qs-app-group'),
      file.replace('group-id: orders-app', 'group-id: qs-app-group'),
    );
    assert.equal(set(file, 'yaml', 'app.orders.topic', "it's"), file.replace("'orders'", "'it''s'"));
  });

  test('a value YAML would read as another type is quoted', () => {
    assert.equal(set('a: x\n', 'yaml', 'a', 'true'), 'a: "true"\n');
    assert.equal(set('a: x\n', 'yaml', 'a', '123'), 'a: "123"\n');
  });

  test('refuses a key set twice, a map, a block scalar, an empty value', () => {
    assert.match(problem('a:\n  b: 1\na.b: 2\n', 'yaml', 'a.b'), /2 times/);
    assert.match(problem('a: 1\n---\na: 2\n', 'yaml', 'a'), /2 times/);
    assert.match(problem('a:\n  b: 1\n', 'yaml', 'a'), /not a single value/);
    assert.match(problem('a: |\n  x\n', 'yaml', 'a'), /block scalar/);
    assert.match(problem('a:\n', 'yaml', 'a'), /is empty/);
    assert.match(problem('a: [1\n', 'yaml', 'a'), /not valid YAML/);
  });
});

describe('JSON', () => {
  test('a key path, with or without $., rewritten as a JSON string', () => {
    const file = '{\n  "app": {"topic": "orders", "n": 1}\n}\n';
    assert.equal(set(file, 'json', '$.app.topic', 'qs-x'), file.replace('"orders"', '"qs-x"'));
    assert.equal(set(file, 'json', 'app.topic', 'qs-x'), file.replace('"orders"', '"qs-x"'));
  });
});
