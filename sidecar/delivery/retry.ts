// What http and relay delivery share: never drop, retry with capped exponential backoff until
// delivered or the developer gives up on the message (a reject request, --reject-after), tell the
// user once per outage (not once per retry), and stop promptly when the sidecar stops.
import type { Reporter } from '../output';
import type { WarningCode } from '../../core/sidecarProtocol';

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

/** Who gave up on a message that kept failing: a reject request, or the --reject-after limit. */
export type RejectedBy = 'request' | 'reject-after';

/**
 * The developer's handle on one message while it fails (./blocked.ts): told of each failure,
 * its backoff wait can be ended early (retry now, reject), and it says whether someone gave up.
 */
export interface RetryControl {
  failed(attempt: number, reason: string): void;
  reject(by: RejectedBy): void;
  readonly rejectedBy: RejectedBy | undefined;
  /** Waits `ms`, less if woken; throws abortError() when `stopping` aborts. */
  wait(ms: number, stopping: AbortSignal): Promise<void>;
}

export type RetryResult =
  | { delivered: true; attempts: number }
  | { delivered: false; attempts: number; rejectedBy: RejectedBy; reason: string };

export interface RetryContext {
  policy: RetryPolicy;
  stop: StopSignals;
  outage: Outage;
  queue: string;
  control: RetryControl;
  /** Give up once this many attempts failed; undefined: never (the default: a debugging
   * developer wants the message, and the handler fixed, not the message gone). */
  rejectAfter?: number;
  /** Called for every failed attempt: before the wait with its length, or with undefined when
   * the message is given up on instead of retried. */
  onFailure(attempt: number, reason: string, retryInMs: number | undefined): void;
}

/**
 * Runs `attempt` until it succeeds or someone gives up on the message (a reject request, the
 * --reject-after limit); resolves with the attempts made. Rejects (AbortError) only when the
 * sidecar stops. `attempt` reports failures as results and throws only on abort. A reject asked
 * for while an attempt is under way takes effect when it fails; if it succeeds, it is delivered.
 */
export async function untilDelivered(
  attempt: (signal: AbortSignal) => Promise<AttemptResult>,
  ctx: RetryContext,
): Promise<RetryResult> {
  for (let n = 1; ; n++) {
    if (ctx.stop.stopping.aborted) throw abortError();
    const result = await attempt(ctx.stop.aborted);
    if (result.ok) {
      ctx.outage.ok(ctx.queue);
      return { delivered: true, attempts: n };
    }
    if (ctx.stop.aborted.aborted) throw abortError();
    ctx.control.failed(n, result.reason);
    if (ctx.rejectAfter !== undefined && n >= ctx.rejectAfter) ctx.control.reject('reject-after');
    const given = ctx.control.rejectedBy;
    if (given !== undefined) {
      ctx.onFailure(n, result.reason, undefined);
      ctx.outage.failed(result.reason, ctx.queue);
      return { delivered: false, attempts: n, rejectedBy: given, reason: result.reason };
    }
    const delay = backoffMs(n, ctx.policy);
    ctx.onFailure(n, result.reason, delay);
    ctx.outage.failed(result.reason, ctx.queue);
    await ctx.control.wait(delay, ctx.stop.stopping);
    // Rejected during the wait: no further attempt.
    const rejectedBy = ctx.control.rejectedBy;
    if (rejectedBy !== undefined) return { delivered: false, attempts: n, rejectedBy, reason: result.reason };
  }
}
