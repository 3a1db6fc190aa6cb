// Shadow queues: declared durable with the source's queue type and the arguments that reproduce
// its rules (shadowArguments.ts); removed only loss-proof.
//
// Proving a shadow empty before removing it needs the count of unacknowledged messages (a
// message fetched with basic.get, or held by a channel that cancelled its consumer, is
// invisible to if-empty, to if-unused and to AMQP's passive declare). Only the management API
// counts them, and its statistics lag by seconds (5 s seen with a 1 s statistics interval;
// quorum queues report on a 5 s tick), so a recent "0 unacked" proves nothing. Nor does a
// record that names a consumer attached after the last delivery: the broker collects a queue's
// counts apart from its consumer details, so that record's counts may be older than the
// consumer (a CI run deleted a shadow holding an unacknowledged message that way). Removal
// therefore runs behind a freshness barrier, the same for both queue types:
// 1. no copy can arrive any more: the caller's `NoPublisher` (noPublisher.ts, docs/design.md §5.4);
// 2. no consumer, by live AMQP (passive declare), not only by statistics: the engine consumes the
//    shadow itself with a fresh tag (exclusively on classic queues) and waits for a record that
//    shows that consumer (classic: names its tag and counts one; quorum: counts exactly one after
//    the statistics counted none). On a classic queue the exclusive consume is itself the proof
//    that nobody else consumes, and the tag names the record as newer than it, so the statistics
//    need not first show the last consumer gone (they trail its departure by the lag, which the
//    session's drain and every cleanup used to wait out before the proof began);
// 3. nothing ready or unacked in that record and in a second one taken at least `sampleGapMs`
//    later and at least `statisticsLagMs` after the consume, so its counts are newer than the
//    consume by the bound the engine is configured with; classic: it still names our exclusive
//    consumer (nobody else could attach); quorum: our consumer has left and it counts none;
// 4. live AMQP once more (no consumer attached meanwhile, nothing ready), then the delete on the
//    fenced connection: classic with if-empty and if-unused; quorum unconditionally (it rejects
//    the conditional delete with 540 NOT_IMPLEMENTED, which closes the whole connection).
// Any step that fails keeps the shadow and says which.
import { randomUUID } from 'node:crypto';
import { pollUntil } from '../engine/timing';
import { replyCode, ReplyCode } from './amqpErrors';
import type { ManagementClient, ManagementQueue } from './management';
import type { SourceType } from './sourceCheck';
import type { NoPublisher } from './noPublisher';
import { ensureRoute, type RouteNames } from './routing';
import { describeArguments, type ShadowArguments } from './shadowArguments';
import type { Link } from './amqpConnection';

export type DeclareResult = { ok: true } | { ok: false; problem: string };

/** Declares the shadow, and its exchange bound to it (routing.ts). */
export async function declareShadow(
  link: Link,
  name: string,
  args: ShadowArguments,
  routes: RouteNames,
): Promise<DeclareResult> {
  try {
    await link.withChannel('declare', (ch) =>
      ch.assertQueue(name, { durable: true, arguments: { ...args } }),
    );
    return await ensureRoute(link, routes, name);
  } catch (err) {
    const code = replyCode(err);
    if (code === ReplyCode.PRECONDITION_FAILED) {
      return {
        ok: false,
        problem: `queue ${name} already exists with a different declaration (not a durable queue with ${describeArguments(args)} as the source has them)`,
      };
    }
    const dlx = args['x-dead-letter-exchange'];
    if (code === ReplyCode.ACCESS_REFUSED && typeof dlx === 'string') {
      // RabbitMQ checks write permission on a queue's dead-letter exchange when it is declared.
      return {
        ok: false,
        problem: `the broker refused to declare ${name} with the source's dead-letter exchange ${dlx === '' ? '(the default exchange)' : dlx}: the queue-agent's user needs write permission on it, as the application's dead-lettering has`,
      };
    }
    throw err;
  }
}

export type RemoveResult = { kind: 'deleted' } | { kind: 'refused'; problem: string };

/** Call when live AMQP shows the shadow idle; this proves it against fresh statistics. */
export async function removeShadow(
  noPublisher: NoPublisher,
  management: ManagementClient,
  shadow: { name: string; type: SourceType; routeId: string | undefined },
  timing: {
    deadline: number;
    pollIntervalMs: number;
    sampleGapMs: number;
    /** How long a statistics record may take to show a change. */
    statisticsLagMs: number;
    beforeDelete?: (shadow: string) => Promise<void> | void;
  },
): Promise<RemoveResult> {
  const { name, type } = shadow;
  const link = noPublisher.link;
  if (noPublisher.shadow !== name)
    throw new Error(`removeShadow: the proof is for ${noPublisher.shadow}, not ${name}`);
  const stats = () => management.getQueue(name);
  if (type === 'quorum') {
    // No exclusive consume and no tag in the record: the statistics must first agree that nobody
    // consumes, so the one consumer they count next is ours.
    const quiet = await pollUntil(
      timing.deadline,
      timing.pollIntervalMs,
      stats,
      (q) => !q || q.consumers === 0,
    );
    if (!quiet.ok) return refused(name, 'the statistics still show a consumer');
    if (!quiet.value) return { kind: 'deleted' };
  }
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
    const consumedAt = Date.now();
    // Classic: the record names our exclusive consumer and no longer counts one that left.
    const ours = (q: ManagementQueue) =>
      type === 'classic' ? q.exclusive_consumer_tag === tag && q.consumers === 1 : q.consumers === 1;
    // Its own deadline too: waiting for `quiet` may have used most of the caller's.
    const firstBy = Math.max(timing.deadline, consumedAt + 2 * timing.statisticsLagMs);
    const fresh = await pollUntil(firstBy, timing.pollIntervalMs, stats, (q) => delivered || !q || ours(q));
    if (!fresh.ok) return refused(name, 'the broker statistics did not catch up before the deadline');
    const info = fresh.value;
    if (!info) return { kind: 'deleted' };
    const live = await link.withChannel('probe', (probe) => probe.checkQueue(name));
    if (delivered || !emptyRecord(info) || live.consumerCount > 1 || live.messageCount !== 0) {
      return refused(name, `it holds messages or has another consumer (${describeRecord(info)})`);
    }
    // The exclusive consumer keeps every other consumer out of a classic shadow until the second
    // sample; a quorum shadow has no exclusive consumers, so ours leaves and the second sample
    // must show none (a consumer that attached meanwhile keeps the count above zero).
    if (type === 'quorum') await ch.cancel(tag);
    const firstAt = Date.now();
    // Its own deadline, room for two statistics lags after the gap: on a quorum queue this is the
    // third record waited for, and a loaded broker's quorum ticks come late (a CI run's cancel
    // had not shown 7 s after it, attempt after attempt).
    const secondBy = Math.max(
      timing.deadline,
      firstAt + timing.sampleGapMs + 2 * timing.statisticsLagMs,
      consumedAt + 2 * timing.statisticsLagMs,
    );
    const second = await pollUntil(secondBy, timing.pollIntervalMs, stats, (q) => {
      if (!q || delivered) return true;
      const late =
        Date.now() - firstAt >= timing.sampleGapMs && Date.now() - consumedAt >= timing.statisticsLagMs;
      return late && (type === 'classic' ? ours(q) : q.consumers === 0);
    });
    if (!second.ok) {
      const attached = type === 'quorum' && (second.last?.consumers ?? 0) > 0;
      return refused(
        name,
        attached
          ? 'a consumer attached between the checks'
          : 'the broker statistics did not catch up before the deadline',
      );
    }
    if (!second.value) return { kind: 'deleted' };
    if (delivered || !emptyRecord(second.value, type === 'classic' ? 1 : 0)) {
      return refused(name, `the second sample shows messages (${describeRecord(second.value)})`);
    }
    if (type === 'classic') await ch.cancel(tag);
    await timing.beforeDelete?.(name);
    const last = await link.withChannel('probe', (probe) => probe.checkQueue(name));
    if (last.consumerCount > 0) return refused(name, 'a consumer attached between the checks');
    if (last.messageCount > 0)
      return refused(name, `${last.messageCount} messages arrived between the checks`);
    if (!link.alive) return refused(name, 'the fence was lost before the delete');
    if (type === 'quorum') {
      // Unconditional: quorum queues have no if-empty; the checks above are the condition.
      await link.withChannel('delete', (del) => del.deleteQueue(name));
      return { kind: 'deleted' };
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

function emptyRecord(info: ManagementQueue, consumers = 1): boolean {
  return info.messages_ready === 0 && info.messages_unacknowledged === 0 && info.consumers === consumers;
}

function describeRecord(info: ManagementQueue): string {
  return `${info.messages_ready ?? '?'} ready, ${info.messages_unacknowledged ?? '?'} unacked, ${info.consumers ?? '?'} consumers`;
}

function refused(name: string, why: string): RemoveResult {
  return { kind: 'refused', problem: `${name} is kept: ${why}` };
}
