// Helpers shared by the scenario bodies: message batches with unique ids, outcome checks, and
// the delivery-contract assertions (docs/design.md §5).
import assert from 'node:assert/strict';
import { randomBytes } from 'node:crypto';
import type { Checkpoint, Engine, Outcome } from '../../agent/engine/contract';
import { jsonLogger, silentLogger, type Logger } from '../../agent/log';
import { pollUntil, sleep } from '../support/poll';
import type { Observed, ProviderHarness, TestHeaderValue, TestMessage, Topology } from './harness';

export const USER = 'x-queue-split-user';

/** `n` messages with ids unique to this run; `headers(i)` gives each one's headers. */
export function batch(
  prefix: string,
  n: number,
  headers: (i: number) => Readonly<Record<string, TestHeaderValue>> = () => ({}),
): TestMessage[] {
  const run = randomBytes(4).toString('hex');
  return Array.from({ length: n }, (_, i) => ({ id: `${prefix}-${run}-${i}`, headers: headers(i) }));
}

export const ids = (messages: readonly { id: string }[]): string[] => messages.map((m) => m.id);

/** Engine logs go to stderr with QS_ENGINE_LOG=1 (debugging a failing scenario). */
export function testLogger(): Logger {
  return process.env.QS_ENGINE_LOG === '1' ? jsonLogger(undefined, 'debug') : silentLogger;
}

/** An engine logger that keeps its events (names, counts and error names: the engine logs no
 * bodies or header values, agent/log.ts), so a test can wait for what the engine tried. */
export function recordingLogger(): { logger: Logger; events: Array<Record<string, unknown>> } {
  const events: Array<Record<string, unknown>> = [];
  const logger = jsonLogger((line) => {
    events.push(JSON.parse(line) as Record<string, unknown>);
    if (process.env.QS_ENGINE_LOG === '1') process.stderr.write(`${line}\n`);
  }, 'debug');
  return { logger, events };
}

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

export const waitFor = <T>(
  what: string,
  read: () => Promise<T>,
  accept: (v: T) => boolean,
  timeoutMs = 30_000,
) => pollUntil(what, read, accept, timeoutMs);

export interface DeliveryCheck {
  /** Every input id. */
  readonly inputs: readonly string[];
  /** What each live destination's consumers acknowledged / what the test read from it. */
  readonly destinations: Readonly<Record<string, readonly string[]>>;
  /** Ids that may appear twice (a crash boundary); each must appear at most twice. */
  readonly mayDuplicate?: readonly string[];
}

/** docs/design.md §5: every input observed at least once; no message reaches two live destinations;
 * duplicates only where a crash boundary allows them; nothing that was not sent. */
export function assertDelivery(check: DeliveryCheck): void {
  const where = new Map<string, string[]>();
  for (const [dest, seen] of Object.entries(check.destinations)) {
    for (const id of seen) where.set(id, [...(where.get(id) ?? []), dest]);
  }
  const inputs = new Set(check.inputs);
  const lost = check.inputs.filter((id) => !where.has(id));
  assert.deepEqual(lost, [], `lost: ${lost.length} of ${check.inputs.length} inputs never observed`);
  const strays = [...where.keys()].filter((id) => !inputs.has(id));
  assert.deepEqual(strays, [], 'observed ids that were never sent');
  for (const [id, dests] of where) {
    const distinct = [...new Set(dests)];
    // Distinct names and a count: a message looping through the source is seen thousands of times.
    assert.equal(
      distinct.length,
      1,
      `${id} reached ${distinct.length} live destinations (${dests.length} deliveries): ${distinct.join(', ')}`,
    );
    const allowed = check.mayDuplicate?.includes(id) ? 2 : 1;
    assert.ok(dests.length <= allowed, `${id} observed ${dests.length} times in ${dests[0]}`);
  }
}

export const seenIds = (observed: readonly Observed[]): string[] => observed.map((o) => o.id);

/** One test's split: a topology, the engines it made (closed at the end), and teardown. */
export async function withSplit(
  h: ProviderHarness,
  body: (t: Topology, engines: { track(e: Engine): Engine }) => Promise<void>,
): Promise<void> {
  const t = await h.topology();
  const made: Engine[] = [];
  try {
    await body(t, {
      track: (e) => {
        made.push(e);
        return e;
      },
    });
  } finally {
    for (const e of made) await e.close().catch(() => undefined);
    await h.dispose(t);
  }
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
