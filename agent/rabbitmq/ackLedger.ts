// Which deliveries of one source channel may be acked now, and how (relay.ts, invariants 6-9).
// One `multiple` ack settles a run of deliveries in a single frame, but it settles every
// outstanding delivery tag up to the one it names: it may name a tag only when every
// outstanding tag below it has its copy confirmed. So the ledger holds the channel's outstanding
// deliveries in delivery-tag order (the order the broker delivers them on one channel):
// - the run of confirmed deliveries at the head is acked with one `multiple` ack on its last tag;
// - a confirmed delivery behind one that is not confirmed waits for the next ack, unless the
//   head is blocked (waiting for a retry, or publishing for longer than `holdMs`): then it is
//   acked on its own, so a refused copy holds up nothing but itself.
// Pure bookkeeping: no I/O, no timers; the caller sends the acks and keeps the clock.

export type AckState = 'publishing' | 'retrying' | 'confirmed';

export interface AckPlan<T> {
  /** Ack this one with `multiple`: it and every delivery before it in `acked` are settled. */
  readonly upTo: T | undefined;
  /** Ack these one by one (`multiple` would take the blocked head with them). */
  readonly singles: readonly T[];
  /** Everything this plan acks, in delivery-tag order of each part. */
  readonly acked: readonly T[];
  /** When confirmed deliveries wait behind a head still publishing: take() again then. */
  readonly wakeAt: number | undefined;
}

interface Slot<T> {
  readonly item: T;
  state: AckState;
  /** When the current state began (ms); a publishing head older than holdMs is blocked. */
  since: number;
}

export class AckLedger<T> {
  /** Outstanding deliveries, in delivery-tag order. */
  private slots: Slot<T>[] = [];
  private readonly bySlot = new Map<T, Slot<T>>();
  private confirmedCount = 0;

  constructor(private readonly holdMs: number) {}

  get size(): number {
    return this.slots.length;
  }

  /** A new delivery, publishing; deliveries must be added in delivery-tag order. */
  add(item: T, now: number): void {
    const slot: Slot<T> = { item, state: 'publishing', since: now };
    this.slots.push(slot);
    this.bySlot.set(item, slot);
  }

  /** The delivery moved to `state`; unknown items (already settled) are ignored. */
  mark(item: T, state: AckState, now: number): void {
    const slot = this.bySlot.get(item);
    if (!slot || slot.state === state) return;
    if (slot.state === 'confirmed') this.confirmedCount--;
    if (state === 'confirmed') this.confirmedCount++;
    slot.state = state;
    slot.since = now;
  }

  /** Settled otherwise (nacked): it leaves the ledger, and later acks may pass its tag. */
  remove(item: T): void {
    const slot = this.bySlot.get(item);
    if (!slot) return;
    this.bySlot.delete(item);
    if (slot.state === 'confirmed') this.confirmedCount--;
    this.slots.splice(this.slots.indexOf(slot), 1);
  }

  /** Empties the ledger (the channel is gone: the broker requeued everything); returns what it held. */
  clear(): T[] {
    const items = this.slots.map((s) => s.item);
    this.slots = [];
    this.bySlot.clear();
    this.confirmedCount = 0;
    return items;
  }

  /** The acks to send now; what they settle leaves the ledger. */
  take(now: number): AckPlan<T> {
    let run = 0;
    while (run < this.slots.length && this.slots[run]!.state === 'confirmed') run++;
    const head = this.slots.splice(0, run).map((s) => s.item);
    for (const item of head) this.bySlot.delete(item);
    this.confirmedCount -= run;
    const upTo = head.at(-1);
    const blocker = this.slots[0];
    if (this.confirmedCount === 0 || !blocker) return { upTo, singles: [], acked: head, wakeAt: undefined };
    const blocked = blocker.state === 'retrying' || now - blocker.since >= this.holdMs;
    if (!blocked) return { upTo, singles: [], acked: head, wakeAt: blocker.since + this.holdMs };
    const singles: T[] = [];
    this.slots = this.slots.filter((s) => {
      if (s.state !== 'confirmed') return true;
      singles.push(s.item);
      this.bySlot.delete(s.item);
      return false;
    });
    this.confirmedCount = 0;
    return { upTo, singles, acked: [...head, ...singles], wakeAt: undefined };
  }
}
