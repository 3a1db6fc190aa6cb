// The copied-not-deleted ledger (docs/providers/sqs.md "A copied-not-deleted ledger"): which
// destination each source message was copied to, so a message that comes back (its delete
// failed, or the engine died between copy and delete) is copied again to the same destination
// whatever the route table says by then. An entry opens before the copy's send; it closes when
// the source message is deleted, and is dropped once it was not seen again for one visibility
// timeout (on AWS a delete that answered success may not have deleted: fact 5). Open entries go
// into the checkpoint; an open entry whose message never comes back (it was deleted before a
// restart lost the close) is dropped once the source's retention has passed, since SQS itself
// has dropped the message by then.

export interface LedgerEntry {
  readonly messageId: string;
  readonly destination: string;
  /** undefined: the application shadow. */
  readonly routeId: string | undefined;
  /** The table generation the destination was selected under (the publish barrier's). */
  readonly generation: number;
  /** When the entry opened (epoch ms). */
  readonly at: number;
  /** When the source message's delete answered success (epoch ms); undefined while open. */
  readonly deletedAt?: number;
}

/** An open entry as the checkpoint keeps it. */
export interface LedgerRecord {
  readonly messageId: string;
  readonly destination: string;
  readonly routeId?: string;
  readonly generation: number;
  readonly at: string;
}

export class CopyLedger {
  private readonly entries = new Map<string, LedgerEntry>();

  lookup(messageId: string): LedgerEntry | undefined {
    return this.entries.get(messageId);
  }

  /** Records the destination before the copy; a message seen again reopens its entry. */
  open(entry: Omit<LedgerEntry, 'deletedAt'>): LedgerEntry {
    const known = this.entries.get(entry.messageId);
    const opened: LedgerEntry = known
      ? {
          messageId: known.messageId,
          destination: known.destination,
          routeId: known.routeId,
          generation: known.generation,
          at: known.at,
        }
      : { ...entry };
    this.entries.set(entry.messageId, opened);
    return opened;
  }

  /** The source message's delete answered success. */
  deleted(messageId: string, now: number): void {
    const known = this.entries.get(messageId);
    if (known) this.entries.set(messageId, { ...known, deletedAt: now });
  }

  /** Drops closed entries older than `closedForMs` and open ones older than `openForMs`. */
  prune(now: number, closedForMs: number, openForMs: number): void {
    for (const [id, e] of this.entries) {
      if (e.deletedAt !== undefined ? now - e.deletedAt >= closedForMs : now - e.at >= openForMs)
        this.entries.delete(id);
    }
  }

  /** Open entries whose table generation is older than `generation`. */
  openBelow(generation: number): number {
    let n = 0;
    for (const e of this.entries.values()) if (e.deletedAt === undefined && e.generation < generation) n++;
    return n;
  }

  get size(): number {
    return this.entries.size;
  }

  /** The open entries, oldest first, as the checkpoint keeps them. */
  records(): LedgerRecord[] {
    return [...this.entries.values()]
      .filter((e) => e.deletedAt === undefined)
      .sort((a, b) => a.at - b.at || (a.messageId < b.messageId ? -1 : 1))
      .map((e) => ({
        messageId: e.messageId,
        destination: e.destination,
        ...(e.routeId === undefined ? {} : { routeId: e.routeId }),
        generation: e.generation,
        at: new Date(e.at).toISOString(),
      }));
  }

  /** Takes back a checkpoint's open entries (replacing what this ledger held). */
  restore(records: readonly LedgerRecord[]): void {
    this.entries.clear();
    for (const r of records) {
      this.entries.set(r.messageId, {
        messageId: r.messageId,
        destination: r.destination,
        routeId: r.routeId,
        generation: r.generation,
        at: Date.parse(r.at),
      });
    }
  }
}
