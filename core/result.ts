// The one error shape every validator in core/ returns. Validators collect every problem they
// find (a user fixes a declaration in one pass) and never throw: callers render the list.

/** One problem with a value: where it is, what is wrong, and what to do about it. */
export interface FieldError {
  /** Where, e.g. `queues[1].kafka.groupEnv`; '' means the value as a whole. */
  path: string;
  problem: string;
  fix: string;
}

export type Result<T> = { ok: true; value: T } | { ok: false; errors: FieldError[] };

export function ok<T>(value: T): Result<T> {
  return { ok: true, value };
}

/** A failed result; an empty list would read as failure with nothing to fix, so it is filled in. */
export function fail<T>(errors: readonly FieldError[]): Result<T> {
  if (errors.length === 0) {
    return {
      ok: false,
      errors: [{ path: '', problem: 'validation failed without a reason', fix: 'Report this as a bug.' }],
    };
  }
  return { ok: false, errors: [...errors] };
}

export function fieldError(path: string, problem: string, fix: string): FieldError {
  return { path, problem, fix };
}

/** One line for logs, notifications and CR conditions. */
export function formatFieldError(error: FieldError): string {
  const where = error.path === '' ? '' : `${error.path}: `;
  return `${where}${error.problem} Fix: ${error.fix}`;
}

/**
 * Runs a parser over untrusted input with a last line of defence: parsers are written not to
 * throw, but input can still exhaust the stack (e.g. a value nested 100 000 levels deep) or
 * carry throwing getters. Such input becomes an error at `path`, never an exception.
 */
export function guarded<T>(path: string, parse: () => Result<T>): Result<T> {
  try {
    return parse();
  } catch (error) {
    const why = error instanceof RangeError ? 'it is nested too deeply' : 'it has an unexpected shape';
    return fail([
      fieldError(
        path,
        `could not be read: ${why}.`,
        'Provide plain data (JSON/YAML values) of sensible depth.',
      ),
    ]);
  }
}
