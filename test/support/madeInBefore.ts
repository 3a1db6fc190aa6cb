// The fields of a test fixture that its `before` hook makes: read when a test uses them, so a
// fixture can be declared at the top of a file and filled in once the hooks run.

/**
 * Adds to `target` a read-only property for each of `keys`, which reads `made[key]`: `made` is
 * filled in by the fixture's `before` hook, and a read before that (or of something the file
 * did not ask for) throws saying so instead of handing out `undefined`.
 */
export function madeInBefore<T extends object, M extends object>(
  target: T,
  made: Partial<M>,
  keys: readonly (keyof M & string)[],
  fixture: string,
): T & Readonly<M> {
  for (const key of keys) {
    Object.defineProperty(target, key, {
      enumerable: true,
      get: () => {
        const value = made[key];
        if (value === undefined)
          throw new Error(
            `the ${fixture} has no ${key}: its before hook failed, or the file did not ask for it`,
          );
        return value;
      },
    });
  }
  // The properties just defined are exactly M's keys (the caller lists them).
  return target as T & Readonly<M>;
}
