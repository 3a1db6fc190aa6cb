// How many messages a group has not consumed from a topic. `end − committed` is only an upper
// bound: every transaction leaves a commit marker that takes an offset, so a consumer that
// commits `record offset + 1` after the last record stays one offset short of the end forever,
// and aborted records take offsets too. The proof therefore reads the gap and counts the
// committed data records in it (bounded; an open transaction makes the count unknown).
import type { Admin } from 'kafkajs';
import { committedOffsets } from './groups';
import type { Wire } from './wire';

export interface Backlog {
  /** Data records after the group's position (a lower bound when `exact` is false). */
  readonly records: number;
  readonly exact: boolean;
  /** `end − committed` summed: what naive arithmetic would call the backlog. */
  readonly offsetGap: bigint;
  /** Per partition: where the group stands (log start when it has no commit) and the end. */
  readonly positions: ReadonlyMap<number, { readonly from: string; readonly end: string }>;
}

export const isEmptyBacklog = (b: Backlog): boolean => b.exact && b.records === 0;

export function describeBacklog(topic: string, groupId: string, b: Backlog): string {
  const n = b.exact ? `${b.records}` : `at least ${b.records}`;
  return `${n} records in ${topic} not consumed by group ${groupId} (offset gap ${b.offsetGap})`;
}

/** The gap between a group's position and the end, per partition (pure arithmetic). */
export function offsetGaps(
  ends: readonly { partition: number; high: string; low: string }[],
  committed: ReadonlyMap<number, string>,
): Map<number, { from: string; end: string }> {
  const out = new Map<number, { from: string; end: string }>();
  for (const { partition, high, low } of ends) {
    const c = committed.get(partition);
    // No commit: the group starts wherever its reset policy says; count from the log start,
    // which never undercounts. A commit below the log start means those records expired.
    const from = c === undefined || BigInt(c) < BigInt(low) ? low : c;
    out.set(partition, { from, end: BigInt(from) > BigInt(high) ? from : high });
  }
  return out;
}

export async function measureBacklog(
  admin: Admin,
  wire: Wire,
  topic: string,
  groupId: string,
  deadline: number,
  maxRecords = 100_000,
): Promise<Backlog> {
  const [ends, committed] = await Promise.all([
    admin.fetchTopicOffsets(topic),
    committedOffsets(admin, groupId, topic),
  ]);
  const positions = offsetGaps(ends, committed);
  let offsetGap = 0n;
  const todo = new Map<number, string>();
  for (const [p, { from, end }] of positions) {
    offsetGap += BigInt(end) - BigInt(from);
    if (BigInt(from) < BigInt(end)) todo.set(p, from);
  }
  let records = 0;
  while (todo.size > 0 && records < maxRecords && Date.now() < deadline) {
    const reads = await wire.read(topic, todo);
    let progressed = false;
    for (const read of reads) {
      const end = BigInt(positions.get(read.partition)?.end ?? '0');
      records += read.records.filter((r) => BigInt(r.offset) < end).length;
      if (read.nextOffset !== todo.get(read.partition)) progressed = true;
      if (BigInt(read.nextOffset) >= end) todo.delete(read.partition);
      else todo.set(read.partition, read.nextOffset);
    }
    // No progress: the rest lies beyond the last stable offset (an open transaction).
    if (!progressed) break;
  }
  return { records, exact: todo.size === 0, offsetGap, positions };
}
