// Coalesces bursts of "something changed" into few runs of an async job: the first request runs
// on the next turn, later ones within `intervalMs` of the last run start wait for the interval's
// end and then run once; a run is never started while one is still going (a request meanwhile
// runs once after it). So a sidecar reporting 100 deliveries a second re-renders a view at most
// 1000 / intervalMs times a second, and always ends on the latest state.

export interface Clock {
  now(): number;
  setTimeout(run: () => void, ms: number): unknown;
  clearTimeout(handle: unknown): void;
}

const realClock: Clock = {
  now: () => Date.now(),
  setTimeout: (run, ms) => setTimeout(run, ms),
  clearTimeout: (handle) => clearTimeout(handle as NodeJS.Timeout),
};

export class Throttle {
  private timer: unknown;
  private last = Number.NEGATIVE_INFINITY;
  private running = false;
  private again = false;
  private disposed = false;

  constructor(
    private readonly job: () => Promise<void>,
    private readonly intervalMs: number,
    private readonly onError: (err: unknown) => void = () => undefined,
    private readonly clock: Clock = realClock,
  ) {}

  schedule(): void {
    if (this.disposed) return;
    if (this.running) {
      this.again = true;
      return;
    }
    if (this.timer !== undefined) return;
    const wait = Math.max(0, this.last + this.intervalMs - this.clock.now());
    this.timer = this.clock.setTimeout(() => void this.run(), wait);
  }

  private async run(): Promise<void> {
    this.timer = undefined;
    if (this.disposed) return;
    this.running = true;
    this.last = this.clock.now();
    try {
      await this.job();
    } catch (err) {
      this.onError(err);
    } finally {
      this.running = false;
      if (this.again) {
        this.again = false;
        this.schedule();
      }
    }
  }

  dispose(): void {
    this.disposed = true;
    if (this.timer !== undefined) this.clock.clearTimeout(this.timer);
    this.timer = undefined;
  }
}
