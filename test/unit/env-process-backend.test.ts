// env:up's process backend needs Linux with Debian's packages; elsewhere it must say so and name
// what does run there (the broker suites on containers), not fail at the first dpkg or apt-get.
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { processBackendRefusal } from '../env/processBackend';

test('Linux with dpkg: the process backend runs', () => {
  assert.equal(processBackendRefusal('linux', true, false), undefined);
  assert.equal(processBackendRefusal('linux', true, true), undefined);
});

test('macOS, full env:up: names the suites that cannot run, why, and the container commands', () => {
  const why = processBackendRefusal('darwin', false, false)!;
  assert.match(why, /the sidecar, cluster and e2e suites and `npm run demo` need run only on Linux/);
  assert.match(why, /this machine is darwin/);
  assert.match(why, /npm run env:up -- --brokers --containers/);
  assert.match(why, /npm test -- --containers/);
});

test('macOS, --brokers: points at the containers', () => {
  const why = processBackendRefusal('darwin', false, true)!;
  assert.match(
    why,
    /the brokers as local processes need Linux with Debian's packages, and this machine is darwin/,
  );
  assert.match(why, /--brokers --containers/);
});

test('a Linux without dpkg: says that is why', () => {
  assert.match(processBackendRefusal('linux', false, true)!, /this Linux has no dpkg/);
});
