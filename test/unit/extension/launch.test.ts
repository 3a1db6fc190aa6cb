// The queueSplit block of a launch configuration and the env merge of env mode (the text edits: launchSplits.test.ts).
import assert from 'node:assert/strict';
import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import { describe, test } from 'node:test';
import {
  mergeLaunchEnv,
  overriddenNames,
  parseDotenv,
  parseLaunchBlock,
  type LaunchBlock,
} from '../../../extension/model/launch';
import { writeEnvFile } from '../../../sidecar/delivery/env';

function block(raw: unknown): LaunchBlock {
  const result = parseLaunchBlock(raw);
  assert.ok(result.ok, JSON.stringify(result));
  return result.block;
}

function errors(raw: unknown): string[] {
  const result = parseLaunchBlock(raw);
  assert.equal(result.ok, false);
  return result.ok ? [] : result.errors;
}

describe('parseLaunchBlock', () => {
  test('defaults: env delivery, not persisted, everything else inferred', () => {
    assert.deepEqual(block({}), { mode: 'env', persist: false });
  });
  test('every setting', () => {
    assert.deepEqual(
      block({
        workload: 'deployment/orders-app',
        queues: ['orders', 'orders'],
        headers: { 'x-queue-split-user': 'alice', team: 'red' },
        delivery: 'http',
        target: 'http://127.0.0.1:8080/events',
        persist: true,
      }),
      {
        workload: { kind: 'Deployment', name: 'orders-app' },
        queues: ['orders'],
        filter: { team: 'red', 'x-queue-split-user': 'alice' },
        mode: 'http',
        httpTarget: 'http://127.0.0.1:8080/events',
        persist: true,
      },
    );
  });
  test('filter: any form (text, list, clause map, anyOf) instead of headers', () => {
    assert.deepEqual(block({ filter: 'tenant^=alice- or baggage:queue-split-user=alice' }).filter, {
      anyOf: [{ 'baggage:queue-split-user': { equals: 'alice' } }, { tenant: { prefix: 'alice-' } }],
    });
    assert.deepEqual(block({ filter: ['x-queue-split-user=alice', 'team=red'] }).filter, {
      team: 'red',
      'x-queue-split-user': 'alice',
    });
    assert.deepEqual(block({ filter: { tenant: { regex: '(dev|qa)-[0-9]+' } } }).filter, {
      anyOf: [{ tenant: { regex: '(dev|qa)-[0-9]+' } }],
    });
    assert.deepEqual(block({ filter: { anyOf: [{ a: '1' }, { b: { exists: true } }] } }).filter, {
      anyOf: [{ a: { equals: '1' } }, { b: { exists: true } }],
    });
    // The predicates of the old headers map work too.
    assert.deepEqual(block({ headers: { tenant: { prefix: 'alice-' } } }).filter, {
      anyOf: [{ tenant: { prefix: 'alice-' } }],
    });
  });
  test('filter: problems name the field', () => {
    assert.match(errors({ filter: 'tenant~="(a"' }).join(' '), /queueSplit\.filter.*regex/);
    assert.match(errors({ filter: 42 }).join(' '), /queueSplit\.filter must be filter text/);
    assert.match(errors({ filter: 'a=1', headers: { b: '2' } }).join(' '), /both set/);
    assert.match(
      errors({ filter: { anyOf: [{ a: { prefix: 1 } }] } }).join(' '),
      /queueSplit\.filter\.anyOf\[0\]\.a\.prefix/,
    );
  });
  test('every problem, with its path', () => {
    const all = errors({
      workload: 'job/x',
      queues: ['Orders'],
      headers: { a: 1 },
      delivery: 'carrier-pigeon',
      target: 'ftp://x',
      persist: 'yes',
      extra: 1,
    });
    for (const key of ['workload', 'queues', 'headers.a', 'delivery', 'target', 'persist', 'extra'])
      assert.ok(
        all.some((e) => e.includes(`queueSplit.${key}`)),
        `no error names queueSplit.${key}: ${all.join(' | ')}`,
      );
    assert.match(errors('deployment/x')[0]!, /must be an object/);
  });
});

describe('env mode', () => {
  test('the split env wins over the launch env; other values are kept (numbers as text)', () => {
    const launch = { SOURCE_QUEUE: 'orders', PORT: 8080, DEBUG: null, NESTED: { x: 1 } };
    const split = { SOURCE_QUEUE: 'qs-rses-orders-abc', AMQP_URL: 'amqp://u:p@127.0.0.1:5672' };
    assert.deepEqual(mergeLaunchEnv(launch, split), {
      SOURCE_QUEUE: 'qs-rses-orders-abc',
      PORT: '8080',
      DEBUG: null,
      AMQP_URL: 'amqp://u:p@127.0.0.1:5672',
    });
    assert.deepEqual(overriddenNames(launch, split), ['SOURCE_QUEUE']);
    assert.deepEqual(mergeLaunchEnv(undefined, split), split);
  });

  test('reads back exactly what the sidecar writes to its env file', () => {
    const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'qs-env-'));
    const file = path.join(dir, 'split.env');
    const env = {
      PLAIN: 'orders',
      URL: 'amqp://user:p@ss w0rd@127.0.0.1:5672/%2F',
      QUOTE: "it's",
      MULTI: 'line1\nline2',
      EMPTY: '',
    };
    try {
      writeEnvFile(file, env);
      assert.deepEqual(parseDotenv(fs.readFileSync(file, 'utf8')), env);
    } finally {
      fs.rmSync(dir, { recursive: true, force: true });
    }
  });
});
