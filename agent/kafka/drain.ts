// Moves a removed route's unconsumed suffix (from the drain group's position to the session
// shadow's end captured after the publish barrier) to the application shadow, same partition
// and fields. Each transaction carries the copies and the drain group's new position, so the
// drain group's commits are the crash-recovery checkpoint and a restarted drain neither skips
// nor (for read_committed consumers) repeats a record.
import type { Logger } from '../log';
import { chunks, topicMessages } from './records';
import { sendAcknowledged, type TxnProducer } from './txn';
import type { FetchedRecord, Offsets, Wire } from './wire';

export interface DrainSpec {
  readonly sessionTopic: string;
  readonly appShadow: string;
  readonly drainGroup: string;
  readonly from: Offsets;
  readonly to: Offsets;
}

export type DrainOutcome =
  | { readonly complete: true; readonly moved: number }
  | { readonly complete: false; readonly moved: number; readonly fenced: boolean; readonly reason: string };

export async function drainSuffix(
  wire: Wire,
  txn: TxnProducer,
  spec: DrainSpec,
  maxRecordsPerTxn: number,
  deadline: number,
  log: Logger,
): Promise<DrainOutcome> {
  const positions = new Map<number, bigint>();
  const ends = new Map<number, bigint>();
  for (const [p, to] of spec.to) {
    const from = BigInt(spec.from.get(p) ?? '0');
    ends.set(p, BigInt(to));
    if (from < BigInt(to)) positions.set(p, from);
  }
  let moved = 0;
  let stalled = 0;
  const todo = () =>
    new Map([...positions].filter(([p, o]) => o < (ends.get(p) ?? 0n)).map(([p, o]) => [p, o.toString()]));
  while (todo().size > 0) {
    if (Date.now() > deadline)
      return { complete: false, moved, fenced: false, reason: 'the step deadline passed' };
    const reads = await wire.read(spec.sessionTopic, todo());
    const records: FetchedRecord[] = [];
    const next = new Map<number, bigint>();
    for (const read of reads) {
      const end = ends.get(read.partition) ?? 0n;
      records.push(...read.records.filter((r) => BigInt(r.offset) < end));
      const reached = BigInt(read.nextOffset);
      next.set(read.partition, reached < end ? reached : end);
    }
    // Nothing readable before the end: an open transaction in the session shadow holds it back.
    const progressed = [...next].some(([p, o]) => o !== positions.get(p));
    if (!progressed) {
      if (++stalled > 20)
        return {
          complete: false,
          moved,
          fenced: false,
          reason: 'an open transaction holds back the session shadow',
        };
      continue;
    }
    stalled = 0;
    const batches = chunks(
      records.map((record) => ({ destination: spec.appShadow, record })),
      maxRecordsPerTxn,
    ).map((c) => c.map((x) => x.record));
    if (batches.length === 0) batches.push([]); // markers only: the position still moves
    for (const [n, chunk] of batches.entries()) {
      const last = n === batches.length - 1;
      const offsets = new Map<number, bigint>();
      for (const r of chunk) offsets.set(r.partition, BigInt(r.offset) + 1n);
      if (last) for (const [p, o] of next) offsets.set(p, o); // past markers at the tail too
      const outcome = await txn.run(async (t) => {
        if (chunk.length > 0) {
          await sendAcknowledged(t, {
            acks: -1,
            topicMessages: topicMessages(chunk.map((record) => ({ destination: spec.appShadow, record }))),
          });
        }
        await t.sendOffsets({
          consumerGroupId: spec.drainGroup,
          topics: [
            {
              topic: spec.sessionTopic,
              partitions: [...offsets].map(([partition, o]) => ({ partition, offset: o.toString() })),
            },
          ],
        });
      }, 'drain');
      if (!outcome.ok) {
        log.warn('drain.copy-failed', { sessionTopic: spec.sessionTopic, error: outcome.reason });
        return { complete: false, moved, fenced: outcome.kind === 'fenced', reason: outcome.reason };
      }
      moved += chunk.length;
      for (const [p, o] of offsets) positions.set(p, o);
    }
  }
  return { complete: true, moved };
}
