// Whether the source carries more than the queue-agent copies: then the application, which reads
// only its shadow while the split lasts, falls further behind for as long as the split lasts
// (docs/design.md "The lag a split adds"). Judged from the source backlog read every few
// seconds (ShadowLag.source) by comparing troughs, not readings: a chunk in flight, Kafka's
// pipelined offsets or a burst the agent catches up with raise single readings, never the
// lowest reading of a whole window.
//
// Behind: for the last window at least BEHIND_FLOOR messages waited at every reading, and the
// lowest reading is higher than the window before's. It stays behind while the trough does not
// fall (a plateau is not catching up) and ends the moment it does, or the engine stops copying.

export const BEHIND_WINDOW_MS = 60_000;
/** About one chunk of the slowest pump (docs/design.md §7): less waits at any moment in a split
 * that keeps up. */
export const BEHIND_FLOOR = 1000;

interface Reading {
  readonly at: number;
  readonly backlog: number;
}

export class BacklogTrend {
  private readings: Reading[] = [];
  private since: number | undefined;

  constructor(
    private readonly windowMs = BEHIND_WINDOW_MS,
    private readonly floor = BEHIND_FLOOR,
  ) {}

  /** Takes a reading (undefined: the engine does not copy, or the broker did not say) and
   * returns since when the source has been falling behind, if it is. */
  observe(at: number, backlog: number | undefined): Date | undefined {
    if (backlog === undefined) {
      // Not copying (the app reads its source itself) or unknown: nothing to judge; a gap in
      // the readings must not join two windows that were never compared.
      this.readings = [];
      this.since = undefined;
      return undefined;
    }
    this.readings.push({ at, backlog });
    this.readings = this.readings.filter((r) => r.at > at - 2 * this.windowMs);
    // The previous window must be covered (a quarter window's slack for a late probe).
    if (this.readings[0]!.at > at - 2 * this.windowMs + this.windowMs / 4) return this.mark(undefined);
    const trough = (from: number, to: number) =>
      Math.min(...this.readings.filter((r) => r.at > from && r.at <= to).map((r) => r.backlog));
    const now = trough(at - this.windowMs, at);
    const before = trough(at - 2 * this.windowMs, at - this.windowMs);
    const behind = now >= this.floor && (this.since === undefined ? now > before : now >= before);
    return this.mark(behind ? (this.since ?? at - this.windowMs) : undefined);
  }

  private mark(since: number | undefined): Date | undefined {
    this.since = since;
    return since === undefined ? undefined : new Date(since);
  }
}
