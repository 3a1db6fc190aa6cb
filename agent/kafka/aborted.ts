// Aborted-transaction filtering of one partition's fetch at read_committed, as the Java client
// does it (KIP-98; `CompletedFetch.nextFetchedRecord` in Apache Kafka's consumer): the broker
// lists the aborted transactions that overlap the fetch (producer id and first offset, in the
// order the transactions *ended*), and only the client can tell which batches they cover.
//
// - The list is taken in order of first offset.
// - Before each batch, every listed transaction whose first offset is at or before the batch's
//   last offset makes its producer "aborted" (all of them, however many start before it: a fetch
//   that starts inside the log gets ranges that began before it).
// - A control batch with an ABORT marker ends its producer's aborted range.
// - A transactional data batch of an aborted producer is dropped whole; a non-transactional
//   batch never is (a producer id can write both).
//
// kafkajs 2.2.4's `filterAbortedMessages` takes the list in the broker's order and consumes at
// most one transaction per record, so interleaved aborts leaked records into the shadows as
// committed copies (agent/kafka/DECISIONS.md, "Aborted source transactions").

/** What this needs of a record kafkajs decoded (every record of a batch shares `batchContext`). */
export interface BatchedRecord {
  readonly offset: string;
  readonly key: Buffer | null;
  readonly isControlRecord?: boolean;
  readonly batchContext?: {
    readonly producerId: string;
    readonly inTransaction: boolean;
    readonly firstOffset?: string;
    readonly lastOffsetDelta?: number;
  };
}

export interface AbortedTransaction {
  readonly producerId: string;
  readonly firstOffset: string;
}

/** A batch of a fetch: its records in order, and where the next one starts. */
export interface RecordBatchOf<T> {
  readonly records: readonly T[];
  readonly lastOffset: bigint;
}

/** The control record type of a marker: key = version (int16), type (int16); 0 is ABORT. */
const isAbortMarker = (key: Buffer | null) => key !== null && key.length >= 4 && key.readInt16BE(2) === 0;

/** Regroups kafkajs' flat record list into its batches (records of one batch share the same
 * `batchContext` object). A record without one (a pre-v2 message set) is a batch of its own. */
export function batchesOf<T extends BatchedRecord>(records: readonly T[]): RecordBatchOf<T>[] {
  const out: { records: T[]; lastOffset: bigint }[] = [];
  let context: BatchedRecord['batchContext'] | null = null;
  for (const r of records) {
    const last = out[out.length - 1];
    if (last && r.batchContext !== undefined && r.batchContext === context) {
      last.records.push(r);
      last.lastOffset = batchEnd(r);
      continue;
    }
    context = r.batchContext ?? null;
    out.push({ records: [r], lastOffset: batchEnd(r) });
  }
  return out;
}

/** The batch's last offset from its header (compaction may have removed its last records),
 * else the record's own. */
function batchEnd(r: BatchedRecord): bigint {
  const c = r.batchContext;
  const own = BigInt(r.offset);
  if (c?.firstOffset === undefined || c.lastOffsetDelta === undefined) return own;
  const end = BigInt(c.firstOffset) + BigInt(c.lastOffsetDelta);
  return end > own ? end : own;
}

/** The batches of one partition's read_committed fetch that are not part of an aborted
 * transaction (control batches included: the caller drops them). */
export function dropAborted<T extends BatchedRecord>(
  batches: readonly RecordBatchOf<T>[],
  abortedTransactions: readonly AbortedTransaction[] | null | undefined,
): RecordBatchOf<T>[] {
  const pending = [...(abortedTransactions ?? [])]
    .map((a) => ({ producerId: a.producerId, firstOffset: BigInt(a.firstOffset) }))
    .sort((a, b) => (a.firstOffset < b.firstOffset ? -1 : a.firstOffset > b.firstOffset ? 1 : 0));
  const abortedProducers = new Set<string>();
  const kept: RecordBatchOf<T>[] = [];
  for (const batch of batches) {
    const first = batch.records[0];
    const context = first?.batchContext;
    // Only a batch with a producer id (idempotent or transactional) can be part of one.
    if (!first || !context || BigInt(context.producerId) < 0n) {
      kept.push(batch);
      continue;
    }
    while (pending.length > 0 && pending[0]!.firstOffset <= batch.lastOffset) {
      abortedProducers.add(pending.shift()!.producerId);
    }
    if (first.isControlRecord) {
      if (isAbortMarker(first.key)) abortedProducers.delete(context.producerId);
    } else if (context.inTransaction && abortedProducers.has(context.producerId)) {
      continue; // an aborted transaction's batch: dropped whole
    }
    kept.push(batch);
  }
  return kept;
}
