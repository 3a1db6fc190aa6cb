// The crash scenario's child process: runs an engine until the shadow publish of one chosen
// message is confirmed, then tells the parent and hangs before the source ack/commit, so the
// parent can kill -9 it exactly between publish and ack (docs/design.md §5.2).
//
// In:  QS_CHILD_SPEC (a ChildSpec as JSON), QS_CRASH_AT (the message id to stop at).
// Out: one line per event on stdout: `CHECKPOINT <json>`, `CONFIRMED <id>`, `ERROR <text>`.
import type { Outcome } from '../../agent/engine/contract';
import { silentLogger } from '../../agent/log';
import type { ChildSpec } from './harness';
import { engineFromSpec } from './providers';

const say = (line: string) => process.stdout.write(`${line}\n`);

async function main(): Promise<void> {
  const spec = JSON.parse(process.env.QS_CHILD_SPEC ?? 'null') as ChildSpec | null;
  const crashAt = process.env.QS_CRASH_AT;
  if (!spec || !crashAt) throw new Error('QS_CHILD_SPEC and QS_CRASH_AT are required');
  const engine = engineFromSpec(spec, {
    logger: silentLogger,
    hooks: {
      afterShadowConfirm: ({ messageId }) => {
        if (messageId !== crashAt) return;
        say(`CONFIRMED ${messageId}`);
        return new Promise<void>(() => undefined); // never ack: the parent kills us here
      },
    },
  });
  check(await engine.prepare(), 'prepare');
  check(await engine.reconcileRoutes(spec.generation, spec.routes), 'reconcileRoutes');
  const started = check(await engine.start(), 'start');
  say(`CHECKPOINT ${JSON.stringify(started.checkpoint)}`);
}

function check<T>(outcome: Outcome<T>, step: string): Extract<Outcome<T>, { kind: 'done' }> {
  if (outcome.kind !== 'done') throw new Error(`${step} not done: ${JSON.stringify(outcome)}`);
  return outcome;
}

main().catch((err: unknown) => {
  say(`ERROR ${err instanceof Error ? err.message : String(err)}`);
  process.exit(1);
});
