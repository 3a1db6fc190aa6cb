// Live reads of a queue's state, combining AMQP and the management API. AMQP (passive
// declare) answers from the queue itself for ready messages and consumers (on quorum queues
// a cancel shows after the command applies, milliseconds later). The management API is the
// only source for unacknowledged messages, and its statistics lag by seconds (5 s seen with a
// 1 s interval on classic queues; quorum queues report on a 5 s tick). A count it has not
// computed yet is unknown, and unknown is never taken for zero.
import { replyCode, ReplyCode } from './amqpErrors';
import type { ManagementClient } from './management';
import type { Link } from './amqpConnection';
import { sleep } from '../engine/timing';

export interface QueueCounts {
  readonly exists: boolean;
  /** Ready messages (AMQP). */
  readonly ready: number;
  /** Consumers (AMQP): a live fact, not a statistic. */
  readonly consumers: number;
  /** Management figures; undefined while the broker has not computed them. */
  readonly mgmtReady: number | undefined;
  readonly unacked: number | undefined;
}

const missing: QueueCounts = {
  exists: false,
  ready: 0,
  consumers: 0,
  mgmtReady: 0,
  unacked: 0,
};

export async function readCounts(
  link: Link,
  management: ManagementClient,
  queue: string,
): Promise<QueueCounts> {
  let amqp: { messageCount: number; consumerCount: number };
  try {
    amqp = await link.withChannel('probe', (ch) => ch.checkQueue(queue));
  } catch (err) {
    if (replyCode(err) === ReplyCode.NOT_FOUND) return missing;
    throw err;
  }
  const info = await management.getQueue(queue);
  if (!info) return missing; // deleted between the two reads
  return {
    exists: true,
    ready: amqp.messageCount,
    consumers: amqp.consumerCount,
    mgmtReady: info.messages_ready,
    unacked: info.messages_unacknowledged,
  };
}

export function describeCounts(queue: string, c: QueueCounts): string {
  if (!c.exists) return `${queue} does not exist`;
  const unknown = (n: number | undefined) => (n === undefined ? 'unknown' : String(n));
  return `${queue}: ${c.ready} ready (management ${unknown(c.mgmtReady)}), ${unknown(c.unacked)} unacked, ${c.consumers} consumers`;
}

/** A proof: what must hold, and what makes waiting pointless (a live AMQP fact that only
 * somebody else's action changes), so the step answers `pending` at once instead of at its
 * deadline. Statistics never make a proof hopeless: they may be stale. */
export interface Expectation {
  readonly holds: (c: QueueCounts) => boolean;
  readonly hopeless: (c: QueueCounts) => boolean;
}

/** No backlog: nothing ready and nothing unacknowledged, by both sources. */
export const noBacklog: Expectation = {
  holds: (c) => c.ready === 0 && c.mgmtReady === 0 && c.unacked === 0,
  hopeless: (c) => c.ready > 0 && c.consumers === 0,
};

/** Empty and unused: the precondition for deleting or retaining a shadow. */
export const idle: Expectation = {
  holds: (c) => noBacklog.holds(c) && c.consumers === 0,
  // Not consumers: our own mover's consumer may still show for a moment after its cancel.
  hopeless: (c) => c.ready > 0,
};

export const noConsumers: Expectation = {
  holds: (c) => c.consumers === 0,
  hopeless: (c) => c.consumers > 0,
};

export type Proof = { ok: true; counts: QueueCounts } | { ok: false; reason: string };

/**
 * Quiesce-and-recheck: the expectation must hold, then hold again after `quiesceMs` (longer
 * than the management statistics interval), so a delivery requeued in between, or a count
 * the statistics had not caught up with, is seen. Polls until `deadline` (epoch ms), or until
 * a read shows the expectation hopeless.
 */
export async function prove(
  read: () => Promise<QueueCounts>,
  queue: string,
  expect: Expectation,
  timing: { deadline: number; pollIntervalMs: number; quiesceMs: number },
): Promise<Proof> {
  let last: QueueCounts | undefined;
  let error: unknown;
  let heldSince: number | undefined;
  for (;;) {
    try {
      last = await read();
      error = undefined;
      if (!last.exists) return { ok: true, counts: last };
      if (expect.holds(last)) {
        heldSince ??= Date.now();
        if (Date.now() - heldSince >= timing.quiesceMs) return { ok: true, counts: last };
      } else {
        heldSince = undefined;
        if (expect.hopeless(last)) return { ok: false, reason: describeCounts(queue, last) };
      }
    } catch (err) {
      error = err;
      heldSince = undefined;
    }
    const wait =
      heldSince === undefined ? timing.pollIntervalMs : timing.quiesceMs - (Date.now() - heldSince);
    if (Date.now() + wait > timing.deadline) {
      return { ok: false, reason: last ? describeCounts(queue, last) : `${queue}: ${String(error)}` };
    }
    await sleep(Math.max(0, wait));
  }
}
