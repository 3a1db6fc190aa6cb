// A route's lease as its QueueSplit says: renewed when the expiry moved, expired once it ran out.
import type { QueueSplit } from '../../core/crd/queueSplitSchema';
import { leaseExpiry as leaseExpiryMs } from '../../core/crd/validateQueueSplit';
import type { SplitEvent } from '../../core/state/events';
import type { RouteState } from '../../core/state/stateDocument';

/** The lease expiry as the state document records it (ISO time). */
export function leaseExpiry(split: QueueSplit): string {
  return new Date(leaseExpiryMs(split.spec)).toISOString();
}

/** Whether `split`'s lease had run out at `at` (ms since the epoch). */
export function leaseRanOut(split: QueueSplit, at: number): boolean {
  return Date.parse(leaseExpiry(split)) < at;
}

/**
 * The lease events of a route in the state, from `split` as listed at `listedAt`. Expiry is
 * judged at the time of the list, not of the pass: a round passes its due workloads 16 at a time
 * from one list, so a pass may run seconds after it, and a renewal made since is in the next
 * list only. A lease that had not run out when listed is left for the next pass to judge.
 */
export function leaseEvents(route: RouteState, split: QueueSplit, listedAt: number): SplitEvent[] {
  const events: SplitEvent[] = [];
  const expires = leaseExpiry(split);
  if (expires !== route.leaseExpiresAt)
    events.push({ type: 'leaseRenewed', routeId: route.routeId, expiresAt: expires });
  if (leaseRanOut(split, listedAt) && route.phase !== 'DRAINING')
    events.push({ type: 'leaseExpired', routeId: route.routeId });
  return events;
}
