// The environment scripts' process handling, tested on real child processes (no brokers):
// env:down must stop everything a service forked, and a failed start must explain itself.
import assert from 'node:assert/strict';
import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import { test } from 'node:test';

// paths.ts reads QS_ENV_DIR when first loaded, so set it before requiring the module.
process.env.QS_ENV_DIR = fs.mkdtempSync(path.join(os.tmpdir(), 'qs-env-test-'));
const { isAlive, runningPid, startDetached, stop, waitFor } =
  // eslint-disable-next-line @typescript-eslint/no-require-imports -- must run after the env var is set
  require('../env/processes') as typeof import('../env/processes');

test('stop() ends the whole process group, including forked children', async () => {
  // The shell forks a grandchild that ignores nothing: both must be gone after stop().
  const proc = startDetached('forker', 'bash', [
    '-c',
    'sleep 300 & echo $! > "$0"; wait',
    `${process.env.QS_ENV_DIR}/child`,
  ]);
  const childFile = `${process.env.QS_ENV_DIR}/child`;
  await waitFor(
    'child pid file',
    async () => fs.existsSync(childFile) && fs.readFileSync(childFile, 'utf8').trim() !== '',
    {
      timeoutMs: 5000,
      logFile: proc.logFile,
      hint: '',
    },
  );
  const child = Number(fs.readFileSync(childFile, 'utf8'));
  assert.equal(runningPid('forker'), proc.pid);
  assert.ok(isAlive(child));
  assert.equal(await stop('forker', 2000), true);
  assert.equal(isAlive(proc.pid), false);
  assert.equal(isAlive(child), false, 'the forked child must not outlive env:down');
  assert.equal(runningPid('forker'), undefined);
  assert.equal(await stop('forker'), false, 'stopping twice is harmless');
});

test('stop() escalates to SIGKILL when SIGTERM is ignored', async () => {
  startDetached('stubborn', 'bash', ['-c', 'trap "" TERM; while true; do sleep 0.1; done']);
  await new Promise((r) => setTimeout(r, 200));
  const pid = runningPid('stubborn');
  assert.ok(pid);
  assert.equal(await stop('stubborn', 500), true);
  assert.equal(isAlive(pid), false);
});

test('waitFor() reports an early exit with the log tail and the hint', async () => {
  const proc = startDetached('crasher', 'bash', ['-c', 'echo "fatal: port already in use" >&2; exit 3']);
  await assert.rejects(
    waitFor('Crasher', async () => false, {
      timeoutMs: 10_000,
      logFile: proc.logFile,
      pid: proc.pid,
      hint: 'Free the port.',
    }),
    (err: Error) =>
      /Crasher exited before it was ready/.test(err.message) &&
      /fatal: port already in use/.test(err.message) &&
      /Free the port\./.test(err.message),
  );
});

test('waitFor() times out with a clear message', async () => {
  const log = path.join(process.env.QS_ENV_DIR!, 'empty.log');
  fs.writeFileSync(log, 'still starting\n');
  await assert.rejects(
    waitFor('Slowpoke', async () => false, { timeoutMs: 600, logFile: log, hint: 'Try again.' }),
    /Slowpoke was not ready within 0.6s[\s\S]*still starting[\s\S]*Try again\./,
  );
});
