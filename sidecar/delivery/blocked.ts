// A message whose delivery keeps failing, as the developer can act on it. While it fails, every
// later message of its queue (Kafka: of its partition) waits behind it, so the retry loop
// (./retry.ts) hands it this handle: it records each failure (what the `failed` lines and the
// extension show: "blocked on message X: HTTP 500, attempt 8"), and a request from stdin may end
// its backoff wait now (retry) or give up on it (reject) — the choices the source itself offers.
import { abortError, type RejectedBy, type RetryControl } from './retry';

export class BlockedMessage implements RetryControl {
  /** Failed attempts so far; 0 while the first attempt is under way (not blocked yet). */
  attempt = 0;
  reason = '';
  /** When the first attempt failed. */
  since: Date | undefined;
  private given: RejectedBy | undefined;
  private wake: (() => void) | undefined;

  constructor(readonly messageId: string) {}

  /** Blocked once an attempt failed: before that, nothing is known to be wrong with it. */
  get blocked(): boolean {
    return this.attempt > 0;
  }

  /** True while it waits for its next attempt (false while an attempt is under way). */
  get waiting(): boolean {
    return this.wake !== undefined;
  }

  get rejectedBy(): RejectedBy | undefined {
    return this.given;
  }

  failed(attempt: number, reason: string): void {
    this.since ??= new Date();
    this.attempt = attempt;
    this.reason = reason;
  }

  /** Ends the wait for the next attempt now; false when no wait was under way. */
  retryNow(): boolean {
    if (this.wake === undefined) return false;
    this.wake();
    return true;
  }

  /** Gives up on it: no attempt after the one under way, if any. The first reason given stays. */
  reject(by: RejectedBy): void {
    this.given ??= by;
    this.wake?.();
  }

  wait(ms: number, stopping: AbortSignal): Promise<void> {
    return new Promise<void>((resolve, reject) => {
      if (stopping.aborted) {
        reject(abortError());
        return;
      }
      const done = (end: () => void): void => {
        clearTimeout(timer);
        stopping.removeEventListener('abort', onStop);
        this.wake = undefined;
        end();
      };
      const onStop = (): void => done(() => reject(abortError()));
      const timer = setTimeout(() => done(resolve), ms);
      stopping.addEventListener('abort', onStop, { once: true });
      this.wake = () => done(resolve);
    });
  }
}
