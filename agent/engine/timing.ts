// Waiting helpers shared by engines: sleeps, exponential backoff with jitter, and polling with
// a deadline (broker statistics lag, so proofs are polled, never assumed).
import { setTimeout as sleepMs } from 'node:timers/promises';

export const sleep = (ms: number): Promise<void> => sleepMs(ms);

export class Backoff {
  private attempt = 0;
  constructor(
    private readonly initialMs: number,
    private readonly maxMs: number,
  ) {}

  /** The next delay: doubles up to the cap, ±20% jitter so agents do not retry in lockstep. */
  next(): number {
    const base = Math.min(this.maxMs, this.initialMs * 2 ** this.attempt);
    this.attempt++;
    return Math.round(base * (0.8 + Math.random() * 0.4));
  }

  reset(): void {
    this.attempt = 0;
  }
}

export type PollResult<T> = { ok: true; value: T } | { ok: false; last: T | undefined; error: unknown };

/** Reads until `accept` likes a value or the deadline (epoch ms) passes. Never throws for a
 * failed read: the last value and error come back for the blocking reason. */
export async function pollUntil<T>(
  deadline: number,
  intervalMs: number,
  read: () => Promise<T>,
  accept: (value: T) => boolean,
): Promise<PollResult<T>> {
  let last: T | undefined;
  let error: unknown;
  for (;;) {
    try {
      last = await read();
      error = undefined;
      if (accept(last)) return { ok: true, value: last };
    } catch (err) {
      error = err;
    }
    if (Date.now() + intervalMs > deadline) return { ok: false, last, error };
    await sleep(intervalMs);
  }
}
