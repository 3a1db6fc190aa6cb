// Which QueueSplit a route belongs to. A routeId is chosen by the client that creates the split
// and nothing in the API makes it unique, so a teammate may create their own split carrying
// somebody else's routeId. Read by routeId alone, the last such object would decide the route:
// its deletion would drain the other developer's route, its lease would keep it alive. A route
// is bound to the object that asked for it (its uid, kept in the state); every other object with
// that routeId is a copy, refused and never read for the route (docs/design.md §6, "Route ids").
import type { QueueSplit } from '../../core/crd/queueSplitSchema';

export interface BoundRoute {
  routeId: string;
  owner: string;
  /** The QueueSplit's metadata.uid; absent in state written before routes were bound. */
  splitUid?: string;
}

export interface RouteBinding {
  /** The splits the coordinator reads: at most one per routeId. */
  accepted: QueueSplit[];
  /** Splits whose routeId belongs to another object, with that object's name. */
  copies: { split: QueueSplit; holder: string }[];
}

/** Oldest first; ties (same second) by name, so the outcome never depends on list order. */
function age(a: QueueSplit, b: QueueSplit): number {
  const ta = String(a.metadata.creationTimestamp ?? '');
  const tb = String(b.metadata.creationTimestamp ?? '');
  if (ta !== tb) return ta < tb ? -1 : 1;
  return a.metadata.name < b.metadata.name ? -1 : a.metadata.name > b.metadata.name ? 1 : 0;
}

export function bindRoutes(routes: readonly BoundRoute[], splits: readonly QueueSplit[]): RouteBinding {
  const byRouteId = new Map<string, QueueSplit[]>();
  for (const split of splits) {
    const list = byRouteId.get(split.spec.routeId) ?? [];
    list.push(split);
    byRouteId.set(split.spec.routeId, list);
  }
  const accepted: QueueSplit[] = [];
  const copies: RouteBinding['copies'] = [];
  for (const [routeId, candidates] of byRouteId) {
    const sorted = [...candidates].sort(age);
    const route = routes.find((r) => r.routeId === routeId);
    // A route in the state keeps its object (none left: the route is deleted, and a copy
    // does not inherit it). State from before binding: the oldest object of the route's owner.
    const holder = route
      ? sorted.find((s) =>
          route.splitUid !== undefined ? s.metadata.uid === route.splitUid : s.spec.owner === route.owner,
        )
      : sorted[0];
    if (holder) accepted.push(holder);
    for (const split of sorted) {
      if (split === holder) continue;
      copies.push({ split, holder: holder?.metadata.name ?? `the route ${routeId} already in use` });
    }
  }
  return { accepted, copies };
}
