// Whether another replica's leader Lease has run out, judged as client-go's leader election does:
// by how long this replica's own clock has seen the Lease record unchanged, never by the
// holder's renewTime, which another node's clock wrote (docs/design.md, "Leader election").
// Pure but for the clock, which is a parameter so the skew cases can be tested.

/** The parts of a Lease that change with every renewal or hand-over. */
export interface LeaseRecord {
  holderIdentity?: string | null;
  /** Changes on every write, so an unchanged one means nobody renewed. */
  resourceVersion?: string;
  leaseDurationSeconds?: number;
}

export class LeaseObserver {
  private seen: { version: string; at: number } | undefined;

  /** `now`: a monotonic clock in ms (not the wall clock, which NTP may step). */
  constructor(private readonly now: () => number = () => performance.now()) {}

  /**
   * Notes `record` as read now and says whether `identity` may take (or keep) it: nobody holds
   * it, we do, or its record has not changed for one whole lease duration on our clock. A
   * replica that has just started therefore waits one full lease before displacing a holder.
   */
  mayHold(record: LeaseRecord, identity: string, fallbackLeaseMs: number): boolean {
    const version = record.resourceVersion ?? '';
    if (this.seen?.version !== version) this.seen = { version, at: this.now() };
    const holder = record.holderIdentity;
    if (!holder || holder === identity) return true;
    const leaseMs =
      record.leaseDurationSeconds !== undefined ? record.leaseDurationSeconds * 1000 : fallbackLeaseMs;
    return this.now() - this.seen.at > leaseMs;
  }
}
