// Shadow queues: declared durable with the source's queue type and nothing else; removed only
// loss-proof.
//
// Proving a shadow empty before removing it needs the count of unacknowledged messages (a
// message fetched with basic.get, or held by a channel that cancelled its consumer, is
// invisible to if-empty, to if-unused and to AMQP's passive declare). Only the management API
// counts them, and its statistics lag by seconds (5 s seen with a 1 s statistics interval;
// quorum queues report on a 5 s tick), so a recent "0 unacked" proves nothing. Removal
// therefore runs behind a freshness barrier: with nobody consuming, the engine consumes the
// shadow itself with a fresh tag (exclusively on classic queues), waits for a statistics
// record that shows that consumer (classic: names its tag as the exclusive consumer; quorum:
// counts exactly one consumer after counting none), so the record was emitted after the
// consume, and requires that very record to show nothing ready or unacked.
//
// Then classic shadows are deleted at once with if-empty and if-unused. Quorum queues reject
// the conditional delete (540 NOT_IMPLEMENTED, which closes the whole connection), so a quorum
// shadow proven empty is retained as cleanup-pending, never deleted.
import { randomUUID } from 'node:crypto';
import type { RetainedResource } from '../engine/contract';
import { pollUntil } from '../engine/timing';
import { replyCode, ReplyCode } from './amqpErrors';
import type { ManagementClient, ManagementQueue } from './management';
import type { SourceType } from './preflight';
import type { Link } from './session';

export type DeclareResult = { ok: true } | { ok: false; problem: string };

export async function declareShadow(link: Link, name: string, type: SourceType): Promise<DeclareResult> {
  try {
    await link.withChannel('declare', (ch) =>
      ch.assertQueue(name, { durable: true, arguments: { 'x-queue-type': type } }),
    );
    return { ok: true };
  } catch (err) {
    if (replyCode(err) === ReplyCode.PRECONDITION_FAILED) {
      return {
        ok: false,
        problem: `queue ${name} already exists with a different declaration (not a durable ${type} queue)`,
      };
    }
    throw err;
  }
}

export type RemoveResult =
  | { kind: 'deleted' }
  | { kind: 'retained'; retained: RetainedResource }
  | { kind: 'refused'; problem: string };

/** Call when live AMQP shows the shadow idle; this proves it against fresh statistics. */
export async function removeShadow(
  link: Link,
  management: ManagementClient,
  shadow: { name: string; type: SourceType; routeId: string | undefined },
  timing: { deadline: number; pollIntervalMs: number },
): Promise<RemoveResult> {
  const { name, type } = shadow;
  const stats = () => management.getQueue(name);
  // The statistics must first agree that nobody consumes, so the consumer they show next is ours.
  const quiet = await pollUntil(
    timing.deadline,
    timing.pollIntervalMs,
    stats,
    (q) => !q || q.consumers === 0,
  );
  if (!quiet.ok) return refused(name, 'the statistics still show a consumer');
  if (!quiet.value) return { kind: 'deleted' };
  const tag = `queue-split-delete-proof-${randomUUID().slice(0, 8)}`;
  const ch = await link.channel('delete-proof');
  let delivered = false;
  try {
    await ch.prefetch(1);
    try {
      // A delivery proves a message; it stays unacked and goes back when the channel closes.
      const hold = (msg: unknown) => (delivered ||= msg !== null);
      await ch.consume(name, hold, { exclusive: type === 'classic', consumerTag: tag });
    } catch (err) {
      if (replyCode(err) === ReplyCode.NOT_FOUND) return { kind: 'deleted' };
      if (replyCode(err) === ReplyCode.ACCESS_REFUSED) return refused(name, 'it has a consumer');
      throw err;
    }
    const dated = (q: ManagementQueue | undefined) =>
      delivered || !q || (type === 'classic' ? q.exclusive_consumer_tag === tag : q.consumers === 1);
    const fresh = await pollUntil(timing.deadline, timing.pollIntervalMs, stats, dated);
    if (!fresh.ok) return refused(name, 'the broker statistics did not catch up before the deadline');
    const info = fresh.value;
    if (!info) return { kind: 'deleted' };
    const live = await link.withChannel('probe', (probe) => probe.checkQueue(name));
    if (delivered || !emptyRecord(info) || live.consumerCount > 1 || live.messageCount !== 0) {
      const counts = `${info.messages_ready ?? '?'} ready, ${info.messages_unacknowledged ?? '?'} unacked`;
      return refused(name, `it holds messages or has another consumer (${counts})`);
    }
    await ch.cancel(tag);
    if (type === 'quorum') {
      return {
        kind: 'retained',
        retained: {
          kind: 'shadow',
          name,
          ...(shadow.routeId === undefined ? {} : { routeId: shadow.routeId }),
          reason:
            'quorum queues have no conditional delete; verified empty and unused, kept as cleanup-pending',
          verifiedEmptyAt: new Date().toISOString(),
        },
      };
    }
    await link.withChannel('delete', (del) => del.deleteQueue(name, { ifEmpty: true, ifUnused: true }));
    return { kind: 'deleted' };
  } catch (err) {
    const code = replyCode(err);
    if (code === ReplyCode.NOT_FOUND) return { kind: 'deleted' };
    if (code === ReplyCode.PRECONDITION_FAILED) return refused(name, 'it is not empty or has a consumer');
    throw err;
  } finally {
    await ch.close().catch(() => undefined);
  }
}

function emptyRecord(info: ManagementQueue): boolean {
  return info.messages_ready === 0 && info.messages_unacknowledged === 0 && info.consumers === 1;
}

function refused(name: string, why: string): RemoveResult {
  return { kind: 'refused', problem: `${name} is kept: ${why}` };
}
