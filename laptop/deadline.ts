// A bound on one check against a broker (the sidecar's mode preflight): a dead address fails
// fast instead of waiting out the client's own retries.

/** Rejects with a timeout error after `ms`; `onLate` cleans up whatever `work` opens later. */
export async function within<T>(
  ms: number,
  what: string,
  work: Promise<T>,
  onLate: (value: T) => void,
): Promise<T> {
  let timer: NodeJS.Timeout | undefined;
  let timedOut = false;
  const timeout = new Promise<never>((_, reject) => {
    timer = setTimeout(() => {
      timedOut = true;
      reject(Object.assign(new Error(`${what}: no answer within ${ms / 1000}s`), { code: 'ETIMEDOUT' }));
    }, ms);
  });
  work.then(
    (value) => {
      if (timedOut) onLate(value);
    },
    () => undefined,
  );
  try {
    return await Promise.race([work, timeout]);
  } finally {
    clearTimeout(timer);
  }
}
