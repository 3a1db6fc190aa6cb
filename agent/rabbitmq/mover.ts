// Moves every message of one queue to another with confirms (session residue → app shadow,
// shadows → source on abort, app-shadow residue → source at handoff). A relay with a fixed
// destination: nothing is acked before its copy is confirmed, so a crash mid-move duplicates
// and never loses. Done when the queue shows no ready messages and every taken delivery is
// settled; the caller then proves emptiness with a quiesce-and-recheck.
import type { Logger } from '../log';
import { sleep } from '../engine/timing';
import { Relay } from './relay';
import { ensureRoute, type RouteNames } from './routing';
import type { Link } from './amqpConnection';

export interface MoveResult {
  readonly moved: number;
  /** False at the deadline, or when publishes to the destination keep failing. */
  readonly complete: boolean;
  readonly reason?: string;
}

export async function moveAll(
  link: Link,
  from: string,
  to: string,
  options: {
    /** The split's destinations' exchanges; `to`'s is declared and bound before the first copy. */
    readonly routes: RouteNames;
    readonly engineUser: string;
    readonly prefetch: number;
    readonly deadline: number;
    readonly consumerTag: string;
    readonly logger: Logger;
  },
): Promise<MoveResult> {
  const bound = await ensureRoute(link, options.routes, to);
  if (!bound.ok) return { moved: 0, complete: false, reason: bound.problem };
  const relay = new Relay({
    queue: from,
    routes: options.routes,
    prefetch: options.prefetch,
    consumerTag: options.consumerTag,
    engineUser: options.engineUser,
    select: () => ({ destination: to, routeId: undefined, generation: 0 }),
    retryInitialMs: 200,
    retryMaxMs: 2000,
    logger: options.logger,
  });
  await relay.start(link);
  let complete = false;
  let reason: string | undefined;
  try {
    while (Date.now() < options.deadline) {
      const problem = relay.problems()[0];
      if (problem) {
        reason = `publishes to ${problem.destination} are ${problem.outcome}`;
        break;
      }
      const ready = await link.withChannel('probe', (ch) => ch.checkQueue(from)).then((q) => q.messageCount);
      if (ready === 0 && relay.open === 0) {
        complete = true;
        break;
      }
      await sleep(100);
    }
  } finally {
    const settled = await relay.stop(Math.max(1000, options.deadline - Date.now()));
    if (!settled) complete = false;
  }
  if (!complete) reason ??= `moving ${from} to ${to} did not finish before the deadline`;
  options.logger.info('move.finished', { from, to, moved: relay.routed, complete });
  return { moved: relay.routed, complete, ...(reason && !complete ? { reason } : {}) };
}
