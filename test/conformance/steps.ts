// Driving an engine step by step as the controller does: an outcome that must be done (or
// pending), a step retried while it answers pending, and an engine brought to running.
import assert from 'node:assert/strict';
import type { Checkpoint, Engine, Outcome } from '../../agent/engine/contract';
import { sleep } from '../support/poll';

export function done<T>(outcome: Outcome<T>, step = 'step'): { value: T; checkpoint: Checkpoint } {
  assert.equal(outcome.kind, 'done', `${step} should be done, got ${JSON.stringify(outcome)}`);
  if (outcome.kind !== 'done') throw new Error('unreachable');
  return { value: outcome.value, checkpoint: outcome.checkpoint };
}

/** Retries a step while it answers `pending` (only with a code of `codes`, when given), after
 * the delay it asks for, as the controller does (statistics lag: a proof may need a few rounds). */
export async function untilDone<T>(
  step: () => Promise<Outcome<T>>,
  name: string,
  timeoutMs = 40_000,
  codes?: readonly string[],
): Promise<{ value: T; checkpoint: Checkpoint }> {
  const deadline = Date.now() + timeoutMs;
  let last = await step();
  while (
    last.kind === 'pending' &&
    (codes === undefined || codes.includes(last.code)) &&
    Date.now() < deadline
  ) {
    await sleep(Math.min(last.retryAfterMs, 1_000));
    last = await step();
  }
  return done(last, name);
}

export function expectPending(outcome: Outcome<unknown>, code?: string, step = 'step'): void {
  assert.equal(outcome.kind, 'pending', `${step} should be pending, got ${JSON.stringify(outcome)}`);
  if (code !== undefined && outcome.kind === 'pending')
    assert.equal(outcome.code, code, outcome.blockingReason);
}

/** Prepared, route table installed, pump running. */
export async function running(
  engine: Engine,
  generation: number,
  routes: Parameters<Engine['reconcileRoutes']>[1],
) {
  // Only a briefly unavailable broker is waited out, as the controller does: a fresh broker
  // creates its offsets topic on the first group lookup and answers NOT_COORDINATOR for a
  // moment. Any other pending answer is the step's real outcome and fails the test.
  const transient = ['broker-unavailable'];
  await untilDone(() => engine.prepare(), 'prepare', 40_000, transient);
  await untilDone(() => engine.reconcileRoutes(generation, routes), 'reconcileRoutes', 40_000, transient);
  return untilDone(() => engine.start(), 'start', 40_000, transient);
}
