import { setTimeout as timersSleep } from 'node:timers/promises';
import { waiting } from './fileTiming';

/** A fixed wait, counted as waiting in the suite report (test/support/fileTiming.ts). */
export function sleep(ms: number): Promise<void> {
  return waiting(() => timersSleep(ms), 'sleep');
}

/** Waits until `read` answers 404: the object is gone (finalizers and all). */
export function waitForGone(what: string, read: () => Promise<unknown>, timeoutMs: number): Promise<boolean> {
  return pollUntil(
    what,
    () =>
      read().then(
        () => false,
        (err: unknown) => (err as { code?: number }).code === 404,
      ),
    (gone) => gone,
    timeoutMs,
  );
}

/**
 * Polls until `read` returns a value `accept` likes. Broker statistics (RabbitMQ management
 * counts in particular) lag the protocol state by seconds, so tests wait with a deadline and
 * report the last value seen when it passes.
 */
export function pollUntil<T>(
  what: string,
  read: () => Promise<T>,
  accept: (value: T) => boolean,
  timeoutMs = 20_000,
): Promise<T> {
  // All of it counts as waiting in the suite report: the condition is someone else's work.
  return waiting(() => poll(what, read, accept, timeoutMs), what);
}

async function poll<T>(
  what: string,
  read: () => Promise<T>,
  accept: (value: T) => boolean,
  timeoutMs: number,
): Promise<T> {
  const deadline = Date.now() + timeoutMs;
  let last: T | undefined;
  let lastError: unknown;
  while (Date.now() < deadline) {
    try {
      last = await read();
      if (accept(last)) return last;
    } catch (err) {
      lastError = err;
    }
    await timersSleep(250);
  }
  throw new Error(
    `${what}: not reached within ${timeoutMs / 1000}s; last value ${JSON.stringify(last)}` +
      (lastError ? `; last error ${String(lastError)}` : ''),
  );
}
