// What http and relay delivery share: never drop, retry forever with capped exponential backoff,
// tell the user once per outage (not once per retry), and stop promptly when the sidecar stops.
import { setTimeout as sleep } from 'node:timers/promises';
import type { Reporter } from '../output';
import type { WarningCode } from '../protocol';

export interface RetryPolicy {
  initialMs: number;
  maxMs: number;
}

export const DEFAULT_RETRY: RetryPolicy = { initialMs: 250, maxMs: 30_000 };

/** Delay before retry number `attempt` (1 = after the first failure): doubling, ±20% jitter, never above maxMs. */
export function backoffMs(attempt: number, policy: RetryPolicy, random = Math.random): number {
  const base = Math.min(policy.maxMs, policy.initialMs * 2 ** Math.min(attempt - 1, 30));
  const jittered = base * (0.8 + 0.4 * random());
  return Math.max(1, Math.round(Math.min(policy.maxMs, jittered)));
}

/**
 * Two-stage stop: `stopping` ends backoff waits and prevents new attempts at once; `aborted`
 * cancels an attempt in flight, after a grace period that lets an almost-done request finish
 * (an aborted delivery is not acked, so it comes again: a duplicate, never a loss).
 */
export class StopSignals {
  private readonly stoppingController = new AbortController();
  private readonly abortController = new AbortController();

  get stopping(): AbortSignal {
    return this.stoppingController.signal;
  }

  get aborted(): AbortSignal {
    return this.abortController.signal;
  }

  stop(graceMs: number): void {
    if (this.stoppingController.signal.aborted) return;
    this.stoppingController.abort();
    setTimeout(() => this.abortController.abort(), graceMs).unref();
  }

  abortNow(): void {
    this.stoppingController.abort();
    this.abortController.abort();
  }
}

export function abortError(): Error {
  const err = new Error('stopped');
  err.name = 'AbortError';
  return err;
}

/** One outage of one destination: a warning when it starts, a `recovered` progress when it ends. */
export class Outage {
  private downSince: number | undefined;

  constructor(
    private readonly reporter: Reporter,
    private readonly code: Extract<WarningCode, 'target-down' | 'relay-down'>,
    private readonly destination: string,
    private readonly suggestedAction: string,
  ) {}

  get down(): boolean {
    return this.downSince !== undefined;
  }

  failed(reason: string, queue: string): void {
    if (this.downSince !== undefined) return;
    this.downSince = Date.now();
    this.reporter.emit({
      type: 'warning',
      code: this.code,
      queue,
      message: `${this.destination} is not accepting messages (${reason}). Retrying with backoff; nothing is acked or dropped meanwhile.`,
      suggestedAction: this.suggestedAction,
    });
  }

  ok(queue: string): void {
    if (this.downSince === undefined) return;
    const seconds = Math.round((Date.now() - this.downSince) / 1000);
    this.downSince = undefined;
    this.reporter.emit({
      type: 'progress',
      stage: 'recovered',
      queue,
      message: `${this.destination} accepts messages again (after ${seconds}s).`,
    });
  }
}

export type AttemptResult = { ok: true } | { ok: false; reason: string };

export interface RetryContext {
  policy: RetryPolicy;
  stop: StopSignals;
  outage: Outage;
  queue: string;
  /** Called for every failed attempt, before the wait. */
  onFailure(attempt: number, reason: string, retryInMs: number): void;
}

/**
 * Runs `attempt` until it succeeds; resolves with the number of attempts. Rejects (AbortError)
 * only when the sidecar stops. `attempt` reports failures as results and throws only on abort.
 */
export async function untilDelivered(
  attempt: (signal: AbortSignal) => Promise<AttemptResult>,
  ctx: RetryContext,
): Promise<number> {
  for (let n = 1; ; n++) {
    if (ctx.stop.stopping.aborted) throw abortError();
    const result = await attempt(ctx.stop.aborted);
    if (result.ok) {
      ctx.outage.ok(ctx.queue);
      return n;
    }
    if (ctx.stop.aborted.aborted) throw abortError();
    const delay = backoffMs(n, ctx.policy);
    ctx.onFailure(n, result.reason, delay);
    ctx.outage.failed(result.reason, ctx.queue);
    try {
      await sleep(delay, undefined, { signal: ctx.stop.stopping });
    } catch {
      throw abortError();
    }
  }
}
