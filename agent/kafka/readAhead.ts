// One source read started ahead, while the pump's transactions for the previous read commit
// (agent/kafka/DECISIONS.md, "Performance"). A read changes nothing by itself: the pump only
// moves its positions when it processes a read. So a read ahead is used only by a round that
// asks for exactly the positions it was started at; any other round (a rewind after a failed
// copy, a refused record, partition growth, a stop) drops it, and its result or error with it.
import type { Offsets, PartitionRead } from './wire';

type Settled = { ok: true; reads: PartitionRead[] } | { ok: false; err: unknown };

export function samePositions(a: Offsets, b: Offsets): boolean {
  if (a.size !== b.size) return false;
  for (const [p, o] of a) if (b.get(p) !== o) return false;
  return true;
}

export class ReadAhead {
  private pending: { positions: Offsets; result: Promise<Settled> } | undefined;

  constructor(private readonly read: (positions: Offsets) => Promise<PartitionRead[]>) {}

  /** Starts reading at `positions` (replacing any read ahead not taken). */
  start(positions: Offsets): void {
    const at = new Map(positions);
    this.pending = {
      positions: at,
      // Settled here, so a read ahead that nobody takes never rejects unhandled.
      result: this.read(at).then(
        (reads) => ({ ok: true, reads }),
        (err: unknown) => ({ ok: false, err }),
      ),
    };
  }

  /** The records at `positions`: the read ahead when it was started at exactly these, else a
   * fresh read. A read ahead is used once, and dropped when it does not match. */
  async take(positions: Offsets): Promise<PartitionRead[]> {
    const ahead = this.pending;
    this.pending = undefined;
    if (!ahead || !samePositions(ahead.positions, positions)) return this.read(positions);
    const settled = await ahead.result;
    if (!settled.ok) throw settled.err;
    return settled.reads;
  }

  /** Forgets the read ahead (stop, restart): its records are read again when needed. */
  drop(): void {
    this.pending = undefined;
  }
}
