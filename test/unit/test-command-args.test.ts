// `npm test` (test/run-all.sh) takes one choice: which backend runs the smoke and conformance
// suites' brokers. A wrong one stops at once with what is accepted, before anything is built,
// started or removed (its logs directory included: this suite itself runs during `npm test`).
import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import * as path from 'node:path';
import { test } from 'node:test';

const script = path.resolve(__dirname, '../run-all.sh');

function npmTest(args: string[], env: Record<string, string> = {}) {
  return spawnSync('bash', [script, ...args], { env: { ...process.env, ...env }, encoding: 'utf8' });
}

test('an unknown argument: exit 2 naming it and the accepted ones, nothing run', () => {
  const run = npmTest(['--brokers=kafka']);
  assert.equal(run.status, 2, run.stderr);
  assert.match(run.stderr, /unknown argument --brokers=kafka; the arguments are --containers or --processes/);
  assert.doesNotMatch(run.stdout, /===/, 'no step started');
});

test('QS_BROKERS other than processes or containers: exit 2 naming the value and the choices', () => {
  const run = npmTest([], { QS_BROKERS: 'docker' });
  assert.equal(run.status, 2, run.stderr);
  assert.match(run.stderr, /QS_BROKERS=docker: expected processes or containers/);
  assert.doesNotMatch(run.stdout, /===/, 'no step started');
});
