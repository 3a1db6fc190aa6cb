// Ends a wait on the developer's QueueSplit as soon as the split changes: a watch on it by name
// wakes the loops that read it (waiting for Active, waiting for it to be gone). Their read
// interval stays the fallback, so a watch that is refused, dropped or stalled costs latency,
// never a change. Before, a change waited for the next read: half of --poll-interval (1 s) on
// average, most of an attach's time from Active to ready (docs/design.md "Where activation time
// goes").
import { setTimeout as sleep } from 'node:timers/promises';
import type { KubeTarget } from '../laptop/kube';
import { watchQueueSplit } from '../laptop/queueSplitClient';

/** A watch that ended normally (the API server closes watches after minutes) opens again at
 * once; one that failed (refused, unreachable) after a pause, not in a tight loop. */
const REOPEN_MS = 200;
const RETRY_MS = 5_000;

export class SplitChanges {
  /** The split changed since the last `next` returned: the next one returns at once. */
  private changed = false;
  private wake: (() => void) | undefined;
  private watch: AbortController | undefined;
  private stopped = false;
  private retry: NodeJS.Timeout | undefined;

  constructor(
    private readonly kube: KubeTarget,
    private readonly name: string,
  ) {
    void this.open();
  }

  private async open(): Promise<void> {
    if (this.stopped) return;
    try {
      const watch = await watchQueueSplit(this.kube.kc, this.kube.namespace, this.name, {
        onEvent: () => this.notify(),
        onEnd: (err) => this.reopen(err === undefined || err === null ? REOPEN_MS : RETRY_MS),
      });
      if (this.stopped) watch.abort();
      else this.watch = watch;
    } catch {
      this.reopen(RETRY_MS);
    }
  }

  private reopen(afterMs: number): void {
    this.watch = undefined;
    if (this.stopped) return;
    clearTimeout(this.retry);
    this.retry = setTimeout(() => void this.open(), afterMs);
    this.retry.unref();
  }

  private notify(): void {
    this.changed = true;
    this.wake?.();
  }

  /** Waits `ms`, or less: until the split changes (at once if it changed since the last call).
   * Rejects as `sleep` does when `signal` aborts. */
  async next(ms: number, signal?: AbortSignal): Promise<void> {
    if (this.changed) {
      this.changed = false;
      return;
    }
    const woken = new AbortController();
    this.wake = () => woken.abort();
    try {
      await sleep(ms, undefined, { signal: signal ? AbortSignal.any([woken.signal, signal]) : woken.signal });
    } catch (err) {
      if (signal?.aborted) throw err;
    } finally {
      this.wake = undefined;
      this.changed = false;
    }
  }

  stop(): void {
    this.stopped = true;
    clearTimeout(this.retry);
    this.watch?.abort();
    this.watch = undefined;
  }
}
