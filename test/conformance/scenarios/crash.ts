// Crash between shadow publish and source ack (docs/design.md §5.2): the engine runs in a child
// process that stops right after one message's shadow publish is confirmed; the parent kills
// it with SIGKILL there, starts a new engine from the checkpoint, and expects that message
// exactly twice and every other exactly once.
import { spawn, type ChildProcess } from 'node:child_process';
import * as path from 'node:path';
import { createInterface } from 'node:readline';
import { test } from 'node:test';
import assert from 'node:assert/strict';
import type { Checkpoint } from '../../../agent/engine/contract';
import type { ChildSpec, ProviderHarness } from '../harness';
import { assertDelivery, batch, ids, seenIds, USER } from '../delivery';
import { untilDone } from '../steps';
import { testLogger, waitFor, withSplit } from '../support';

const childScript = path.join(__dirname, '..', 'crash-child.ts');

export function crashScenarios(h: ProviderHarness): void {
  test('crash between shadow publish and source ack: one duplicate, no loss', () =>
    withSplit(h, async (t, engines) => {
      const alice = t.route('alice', { [USER]: 'alice' });
      const input = batch('crash', 10, (i) => ({ [USER]: i % 2 === 0 ? 'alice' : 'bob' }));
      const victim = input[4]!; // an alice message in the middle
      await h.produce(t, input);
      // Prefetch 1: only the victim is between publish and ack when the child dies.
      const checkpoint = await crashChildAt(h.childSpec(t, 1, [alice], { prefetch: 1 }), victim.id);

      const restarted = engines.track(h.engine(t, { logger: testLogger() }));
      const recovered = await untilDone(() => restarted.recover(checkpoint), 'recover');
      assert.equal(recovered.value.phase, 'running');
      const toAlice = input.filter((_, i) => i % 2 === 0);
      const toApp = input.filter((_, i) => i % 2 === 1);
      const seen = {
        [alice.shadow]: seenIds(await h.read(alice.shadow, ids(toAlice))),
        app: seenIds(await h.read(t.appShadow, ids(toApp))),
      };
      assertDelivery({ inputs: ids(input), destinations: seen, mayDuplicate: [victim.id] });
      assert.equal(
        seen[alice.shadow]!.filter((id) => id === victim.id).length,
        2,
        'the message in flight at the crash is delivered twice',
      );
      assert.equal(seen[alice.shadow]!.length + seen.app!.length, input.length + 1, 'exactly one duplicate');
      await waitFor(
        'source drained',
        () => h.backlog(t.source),
        (n) => n === 0,
      );
    }));
}

/** Runs an engine from `spec` in a child process until `victimId`'s shadow publish is
 * confirmed, kills it there with SIGKILL, and returns the checkpoint it reported. */
export async function crashChildAt(spec: ChildSpec, victimId: string): Promise<Checkpoint> {
  const child = spawn(process.execPath, ['--import', 'tsx', childScript], {
    env: { ...process.env, QS_CHILD_SPEC: JSON.stringify(spec), QS_CRASH_AT: victimId },
    stdio: ['ignore', 'pipe', 'inherit'],
  });
  let checkpoint: Checkpoint | undefined;
  try {
    await new Promise<void>((resolve, reject) => {
      const timer = setTimeout(
        () => reject(new Error('child did not reach the crash point in 60 s')),
        60_000,
      );
      let confirmed = false;
      createInterface({ input: child.stdout! }).on('line', (line) => {
        if (line.startsWith('CHECKPOINT ')) checkpoint = JSON.parse(line.slice(11)) as Checkpoint;
        if (line.startsWith('ERROR ')) reject(new Error(`child failed: ${line.slice(6)}`));
        if (line === `CONFIRMED ${victimId}`) confirmed = true;
        if (confirmed && checkpoint) {
          clearTimeout(timer);
          resolve();
        }
      });
      child.on('exit', (code) => reject(new Error(`child exited early (${code})`)));
    });
  } finally {
    await kill9(child);
  }
  assert.ok(checkpoint, 'the child reported its checkpoint');
  return checkpoint;
}

async function kill9(child: ChildProcess): Promise<void> {
  if (child.exitCode !== null || child.signalCode !== null) return;
  const exited = new Promise<void>((resolve) => child.once('exit', () => resolve()));
  child.kill('SIGKILL');
  await exited;
}
