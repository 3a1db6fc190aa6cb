// The one failure type the sidecar's modules throw: what went wrong in words a developer can act
// on, the protocol's error code, and the suggested next step. main.ts turns it into the `error`
// line and the exit code; anything else that escapes is a bug and reported as `internal`.
import type { ControllerWords, ErrorCode } from '../core/sidecarProtocol';

export class SidecarError extends Error {
  constructor(
    readonly code: ErrorCode,
    message: string,
    readonly suggestedAction: string,
    /** For usage errors: the flag or settings key at fault. */
    readonly flag?: string,
    /** For a refused or failed split: the controller's words, which the line carries as data. */
    readonly controller?: ControllerWords,
  ) {
    super(message);
    this.name = 'SidecarError';
  }
}

/** A bad flag value: the message starts with the flag so the user sees at once what to fix. */
export function usageError(flag: string, problem: string, fix: string): SidecarError {
  return new SidecarError('usage', `${flag}: ${problem}`, fix, flag);
}

/** Error text of anything thrown, without a stack. */
export function errorText(err: unknown): string {
  if (err instanceof Error) return err.message;
  return typeof err === 'string' ? err : JSON.stringify(err);
}

/** An error and its causes (`cause`, kafkajs' `originalError`), outermost first. */
export function errorChain(err: unknown): unknown[] {
  const chain: unknown[] = [];
  for (let e: unknown = err; e !== undefined && e !== null && chain.length < 6 && !chain.includes(e);) {
    chain.push(e);
    const next = e as { cause?: unknown; originalError?: unknown };
    e = next.cause ?? next.originalError;
  }
  return chain;
}

/** The Node system error code (ECONNREFUSED, ENOTFOUND, ...) of an error or its causes. */
export function systemCode(err: unknown): string | undefined {
  for (const e of errorChain(err)) {
    const code = (e as { code?: unknown }).code;
    if (typeof code === 'string' && /^E[A-Z_]+$/.test(code)) return code;
  }
  return undefined;
}

export function isAbort(err: unknown): boolean {
  return (err as { name?: unknown } | undefined)?.name === 'AbortError';
}
