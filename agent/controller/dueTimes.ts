// When each workload's next pass is due. A change to something of the workload (its QueueSplit,
// state, queue-agent document, the workload itself) makes it due at once; after a pass it is
// due again when its coordinator says (at once while it moves, at the next lease expiry or the
// quiet resync when steady).
export class DueTimes {
  /** Epoch ms; absent: at once. */
  private readonly at = new Map<string, number>();

  /** Something of this workload changed. */
  touch(key: string): void {
    this.at.delete(key);
  }

  isDue(key: string, now: number): boolean {
    return (this.at.get(key) ?? 0) <= now;
  }

  /** A pass of `key` that began at `startedAt` ended; the coordinator wants the next in `nextInMs`. */
  passed(key: string, _startedAt: number, nextInMs: number): void {
    this.at.set(key, Date.now() + nextInMs);
  }

  forget(key: string): void {
    this.at.delete(key);
  }
}
