// Runs the shared crash child (crash-child.ts) until it confirms the shadow copy of one
// message, then kills it with SIGKILL before its offset commit; returns its checkpoint.
import { spawn } from 'node:child_process';
import * as path from 'node:path';
import { createInterface } from 'node:readline';
import type { Checkpoint } from '../../../agent/engine/contract';
import type { ChildSpec } from '../harness';

const childScript = path.join(__dirname, '..', 'crash-child.ts');

export async function runCrashChild(
  spec: ChildSpec,
  crashAt: string,
  timeoutMs = 60_000,
): Promise<Checkpoint> {
  const child = spawn(process.execPath, ['--import', 'tsx', childScript], {
    env: { ...process.env, QS_CHILD_SPEC: JSON.stringify(spec), QS_CRASH_AT: crashAt },
    stdio: ['ignore', 'pipe', 'inherit'],
  });
  const exited = new Promise<void>((resolve) => child.once('exit', () => resolve()));
  try {
    return await new Promise<Checkpoint>((resolve, reject) => {
      const timer = setTimeout(() => reject(new Error('the child did not reach the crash point')), timeoutMs);
      let checkpoint: Checkpoint | undefined;
      let confirmed = false;
      createInterface({ input: child.stdout! }).on('line', (line) => {
        if (line.startsWith('CHECKPOINT ')) checkpoint = JSON.parse(line.slice(11)) as Checkpoint;
        if (line.startsWith('ERROR ')) reject(new Error(`child failed: ${line.slice(6)}`));
        if (line === `CONFIRMED ${crashAt}`) confirmed = true;
        if (confirmed && checkpoint) {
          clearTimeout(timer);
          resolve(checkpoint);
        }
      });
      child.once('exit', (code) => reject(new Error(`child exited early (${code})`)));
    });
  } finally {
    if (child.exitCode === null && child.signalCode === null) child.kill('SIGKILL');
    await exited;
  }
}
