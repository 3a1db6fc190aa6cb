// Cleanup steps of the extension-host tests, each bounded: a step that hangs (a debug session
// that never ends, an editor that will not close) fails the hook with its name instead of
// stalling the whole run until the harness's overall timeout.
import { setTimeout as sleep } from 'node:timers/promises';

export async function bounded<T>(
  what: string,
  work: () => PromiseLike<T> | T,
  timeoutMs = 30_000,
): Promise<T> {
  const timeout = sleep(timeoutMs).then(() => {
    throw new Error(`cleanup step "${what}" did not finish within ${timeoutMs / 1000}s`);
  });
  return Promise.race([Promise.resolve().then(work), timeout]);
}
