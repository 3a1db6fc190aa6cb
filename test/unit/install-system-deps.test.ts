// `npm run env:up` (and so `npm test` and `npm run demo`) first runs test/env/install-system-deps.sh:
// without root it must stop naming what is missing and the exact command, never half-install.
// Run as the unprivileged `nobody` user (setpriv) with a package list that cannot be installed.
import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import * as path from 'node:path';
import { test } from 'node:test';

const script = path.resolve(__dirname, '../env/install-system-deps.sh');

function runAsNobody(packages: string) {
  const run = spawnSync('setpriv', ['--reuid=65534', '--regid=65534', '--clear-groups', 'bash', script], {
    env: { ...process.env, QS_DEBIAN_PACKAGES: packages },
    encoding: 'utf8',
  });
  if (run.error) throw new Error(`setpriv could not run the installer as nobody: ${run.error.message}`);
  return run;
}

test('a missing Debian package without root: stops naming the package and the command to run', () => {
  const run = runAsNobody('qs-no-such-package-1 bash');
  assert.equal(run.status, 1, run.stderr);
  assert.match(run.stderr, /missing Debian packages: qs-no-such-package-1\. Install them as root/);
  assert.ok(run.stderr.includes(`sudo bash ${script}`), run.stderr);
  assert.doesNotMatch(run.stdout, /installing/, 'no install attempted without root');
});

test('nothing missing: the installer passes without root and names the toolchains', () => {
  const run = runAsNobody('bash');
  assert.equal(run.status, 0, run.stderr);
  assert.match(run.stdout, /toolchains: node v\d+/);
});
