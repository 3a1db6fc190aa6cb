// Constructors for the non-`done` outcomes (a `done` carries the engine's own checkpoint, so
// each engine builds those itself).
import type { BlockingCode, DegradedCode, EnginePhase, Outcome } from './contract';
import type { FieldError } from '../../core/result';

export function pending(code: BlockingCode, blockingReason: string, retryAfterMs = 1000): Outcome<never> {
  return { kind: 'pending', code, blockingReason, retryAfterMs };
}

export function degraded(code: DegradedCode, reason: string, safeAction: string): Outcome<never> {
  return { kind: 'degraded', code, reason, safeAction };
}

export function rejected(errors: readonly FieldError[]): Outcome<never> {
  return { kind: 'rejected', errors };
}

/** A step called in a phase where it makes no sense is a controller bug: say so, change nothing. */
export function wrongPhase(
  step: string,
  phase: EnginePhase,
  allowed: readonly EnginePhase[],
): Outcome<never> {
  return rejected([
    {
      path: 'phase',
      problem: `${step} is not possible in phase ${phase}`,
      fix: `call ${step} only in phase ${allowed.join(' or ')}`,
    },
  ]);
}
