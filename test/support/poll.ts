import { setTimeout as sleep } from 'node:timers/promises';

/**
 * Polls until `read` returns a value `accept` likes. Broker statistics (RabbitMQ management
 * counts in particular) lag the protocol state by seconds, so tests wait with a deadline and
 * report the last value seen when it passes.
 */
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

export async function pollUntil<T>(
  what: string,
  read: () => Promise<T>,
  accept: (value: T) => boolean,
  timeoutMs = 20_000,
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
    await sleep(250);
  }
  throw new Error(
    `${what}: not reached within ${timeoutMs / 1000}s; last value ${JSON.stringify(last)}` +
      (lastError ? `; last error ${String(lastError)}` : ''),
  );
}
