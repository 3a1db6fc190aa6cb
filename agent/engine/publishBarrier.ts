// The publish barrier behind route generations: a new route table is acknowledged only once
// every publish selected under an older generation has its broker acknowledgement, so a route
// that left the table receives nothing more before its shadow is drained (docs/design.md §5.3).
export class PublishBarrier {
  private readonly inFlight = new Map<number, number>();
  private waiters: { below: number; resolve: () => void }[] = [];

  /** Marks one publish selected under `generation`; call the returned function exactly once
   * when its outcome is known (acknowledged, or handed to a retry under a newer table). */
  track(generation: number): () => void {
    this.inFlight.set(generation, (this.inFlight.get(generation) ?? 0) + 1);
    let released = false;
    return () => {
      if (released) return;
      released = true;
      const left = (this.inFlight.get(generation) ?? 1) - 1;
      if (left === 0) this.inFlight.delete(generation);
      else this.inFlight.set(generation, left);
      this.wake();
    };
  }

  /** Publishes still open under generations older than `generation`. */
  pendingBelow(generation: number): number {
    let n = 0;
    for (const [gen, count] of this.inFlight) if (gen < generation) n += count;
    return n;
  }

  get total(): number {
    let n = 0;
    for (const count of this.inFlight.values()) n += count;
    return n;
  }

  /** Resolves true once nothing older than `generation` is in flight, false at the deadline. */
  async waitBelow(generation: number, timeoutMs: number): Promise<boolean> {
    if (this.pendingBelow(generation) === 0) return true;
    let timer: NodeJS.Timeout | undefined;
    let entry: { below: number; resolve: () => void } | undefined;
    const passed = new Promise<boolean>((resolve) => {
      entry = { below: generation, resolve: () => resolve(true) };
      timer = setTimeout(() => resolve(false), timeoutMs);
    });
    if (entry) this.waiters.push(entry);
    try {
      return await passed;
    } finally {
      clearTimeout(timer);
      this.waiters = this.waiters.filter((w) => w !== entry);
    }
  }

  private wake(): void {
    for (const waiter of this.waiters) {
      if (this.pendingBelow(waiter.below) === 0) waiter.resolve();
    }
  }
}
