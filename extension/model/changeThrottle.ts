// Merges changes that come faster than anyone can read them (a sidecar's `delivered` lines, up to
// thousands a second) into at most one notice per interval, naming every key that changed in it.
// The first change after a quiet interval is told at once, so a rare one (a split turning Active,
// failing, stopping) shows without delay; the rest of a burst waits for the interval's end and
// is told together. Nothing is dropped: the last change of a burst is always told.
export class ChangeThrottle<K> {
  private pending = new Set<K>();
  /** Set from a notice until `intervalMs` later: changes meanwhile wait for its end. */
  private cooling: ReturnType<typeof setTimeout> | undefined;
  private disposed = false;

  /** `intervalMs` 0: every change is told at once, alone (no coalescing). */
  constructor(
    private readonly intervalMs: number,
    private readonly notify: (keys: ReadonlySet<K>) => void,
  ) {
    if (!Number.isFinite(intervalMs) || intervalMs < 0)
      throw new RangeError(`ChangeThrottle intervalMs must be a number ≥ 0, not ${intervalMs}`);
  }

  /** `key` changed. */
  add(key: K): void {
    if (this.disposed) return;
    if (this.intervalMs === 0) {
      this.notify(new Set([key]));
      return;
    }
    this.pending.add(key);
    if (this.cooling === undefined) this.tell();
  }

  private tell(): void {
    const keys = this.pending;
    this.pending = new Set();
    this.cooling = setTimeout(() => {
      this.cooling = undefined;
      if (this.pending.size > 0) this.tell();
    }, this.intervalMs);
    this.notify(keys);
  }

  /** Pending changes are dropped; nothing is told any more. */
  dispose(): void {
    this.disposed = true;
    clearTimeout(this.cooling);
    this.cooling = undefined;
    this.pending.clear();
  }
}
