// The delivery contract (docs/design.md §5) as the scenarios check it: message batches with ids
// unique to the run, the ids of what was sent and seen, and the assertion that every input reached
// exactly one live destination.
import assert from 'node:assert/strict';
import { randomBytes } from 'node:crypto';
import type { Observed, TestHeaderValue, TestMessage } from './harness';

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
