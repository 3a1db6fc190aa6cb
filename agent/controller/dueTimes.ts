// When each workload's next pass is due. A change to something of the workload (its QueueSplit,
// state, queue-agent document, the workload itself) makes it due at once; after a pass it is
// due again when its coordinator says (at once while it moves, at the next lease expiry or the
// quiet resync when steady).
//
// A pass reads the caches when it begins: a change that arrives after that (while this or an
// earlier workload is passed) may not have been seen, so it keeps the workload due at once
// instead of being overwritten by the due time the pass ends with.
export class DueTimes {
  /** Epoch ms; absent: at once. */
  private readonly at = new Map<string, number>();
  /** When each workload last changed. */
  private readonly touchedAt = new Map<string, number>();

  /** Something of this workload changed. */
  touch(key: string): void {
    this.at.delete(key);
    this.touchedAt.set(key, Date.now());
  }

  isDue(key: string, now: number): boolean {
    return (this.at.get(key) ?? 0) <= now;
  }

  /** Since when this workload is due (epoch ms; a workload never seen: 0): the longest waiting
   * is passed first, so workloads whose own writes make them due again cannot starve others. */
  dueSince(key: string): number {
    return this.at.get(key) ?? this.touchedAt.get(key) ?? 0;
  }

  /** A pass that read the caches at `startedAt` is done with `key`; its coordinator wants the
   * next pass in `nextInMs`. */
  passed(key: string, startedAt: number, nextInMs: number): void {
    if ((this.touchedAt.get(key) ?? -Infinity) >= startedAt) this.at.delete(key);
    else this.at.set(key, Date.now() + nextInMs);
  }

  /** How long until the soonest workload not yet due becomes due (ms); undefined when none
   * waits. A workload already due is being passed or waits for a free slot: the end of a pass
   * wakes the loop for it. */
  soonestInMs(now: number): number | undefined {
    let soonest: number | undefined;
    for (const at of this.at.values())
      if (at > now) soonest = soonest === undefined ? at : Math.min(soonest, at);
    return soonest === undefined ? undefined : soonest - now;
  }

  forget(key: string): void {
    this.at.delete(key);
    this.touchedAt.delete(key);
  }
}
