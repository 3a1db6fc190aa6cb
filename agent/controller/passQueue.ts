// The workloads being passed: at most `limit` side by side, each by one pass at a time
// (controller-runtime's work queue, keyed by workload). The controller fills a free slot as soon
// as a pass ends, instead of waiting for a whole round of passes to end: in rounds, a split
// created during a round waited for the round's slowest pass before its own began
// (docs/design.md §6 "Steady splits").
//
// Invariants:
// 1. A workload is in `running` from the moment its pass is started until it has ended: the
//    controller never starts a second pass of it meanwhile (a coordinator is not reentrant).
// 2. `running.size <= limit` at all times.
// 3. `ended` is called once per pass, after the pass is out of `running`: a pass that ends frees
//    its slot before the controller looks for the next due workload.
export class PassQueue {
  /** Each running workload's key → when its pass began (epoch ms). */
  private readonly running = new Map<string, number>();
  private readonly passes = new Set<Promise<void>>();

  constructor(
    private readonly limit: number,
    private readonly ended: () => void,
  ) {}

  /** Whether a pass of this workload is running. */
  has(key: string): boolean {
    return this.running.has(key);
  }

  /** How many more passes may start now. */
  get free(): number {
    return this.limit - this.running.size;
  }

  /** Starts `pass` for `key`, which must not be running and needs a free slot. `pass` handles
   * its own errors (the controller logs a failed pass and passes the workload again). */
  start(key: string, pass: () => Promise<void>): void {
    if (this.running.has(key)) throw new Error(`a pass of ${key} is already running`);
    if (this.free <= 0) throw new Error(`no free slot for a pass of ${key}`);
    this.running.set(key, Date.now());
    const done: Promise<void> = pass().finally(() => {
      this.running.delete(key);
      this.passes.delete(done);
      this.ended();
    });
    this.passes.add(done);
  }

  /** When the longest-running pass began; undefined when none runs. */
  oldestStart(): number | undefined {
    let oldest: number | undefined;
    for (const at of this.running.values()) oldest = oldest === undefined ? at : Math.min(oldest, at);
    return oldest;
  }

  /** Resolves once every pass started so far has ended. */
  async idle(): Promise<void> {
    await Promise.all([...this.passes]);
  }
}
