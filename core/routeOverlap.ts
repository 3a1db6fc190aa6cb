// Explains why two routes may not share a queue (docs/design.md §4: overlapping filters are rejected,
// never resolved by attachment order) and proposes the smallest change that separates them.
import { DEFAULT_FILTER_KEY, filterEntries, filtersOverlap, formatFilter, type HeaderFilter } from './filter';
import { joinPath } from './fieldPath';
import { fieldError, type FieldError } from './result';

export interface RouteEntry {
  routeId: string;
  filter: HeaderFilter;
}

function shown(filter: HeaderFilter): string {
  return Object.keys(filter).length > 0 ? `"${formatFilter(filter)}"` : '{} (every message)';
}

/** The error for `route` (at `path`) overlapping the already present `other`. */
export function overlapError(path: string, route: RouteEntry, other: RouteEntry): FieldError {
  const both = formatFilter({ ...other.filter, ...route.filter }) || 'any headers at all';
  return fieldError(
    path,
    `route "${route.routeId}" with filter ${shown(route.filter)} overlaps route "${other.routeId}" with filter ${shown(other.filter)}: a message carrying ${both} would match both, and which route gets it must never depend on attachment order.`,
    distinguishingFix(route, other),
  );
}

/** A change to `route` alone (the other one is usually a teammate's) that removes the overlap. */
function distinguishingFix(route: RouteEntry, other: RouteEntry): string {
  const mine = route.filter;
  const theirs = filterEntries(other.filter);
  if (theirs.length === 0) {
    return `Route "${other.routeId}" takes every message; it has to stop (or be given a filter) before another route can share the queue.`;
  }
  if (Object.keys(mine).length === 0) {
    return `Give route "${route.routeId}" a filter such as ${DEFAULT_FILTER_KEY}=<your name>; an empty filter takes every message and cannot share the queue.`;
  }
  // Prefer the conventional per-user header, then any header the other route filters on.
  const missing = theirs.filter(([key]) => !Object.hasOwn(mine, key));
  const pick = (pairs: [string, string][]) => pairs.find(([key]) => key === DEFAULT_FILTER_KEY) ?? pairs[0];
  const added = pick(missing);
  if (added) {
    const [key, value] = added;
    return `Add ${key}=<a value other than ${JSON.stringify(value)}> to route "${route.routeId}", e.g. ${key}=${key === DEFAULT_FILTER_KEY ? '<your name>' : `${value}-2`}, so the two filters disagree on a header they share.`;
  }
  const changed = pick(theirs);
  const [key, value] = changed ?? ['', ''];
  return `Route "${other.routeId}" already takes every message your filter matches; change ${key} in route "${route.routeId}" to a value other than ${JSON.stringify(value)}.`;
}

/** Every overlapping pair in `routes`, reported at the later route and naming the earlier one. */
export function overlapErrors(routes: readonly RouteEntry[], basePath = 'routes'): FieldError[] {
  const errors: FieldError[] = [];
  routes.forEach((route, index) => {
    for (const other of routes.slice(0, index)) {
      if (filtersOverlap(route.filter, other.filter)) {
        errors.push(overlapError(joinPath(joinPath(basePath, index), 'filter'), route, other));
      }
    }
  });
  return errors;
}

/** The errors a candidate route would cause next to routes already attached to the same queue. */
export function candidateOverlapErrors(
  candidate: RouteEntry,
  existing: readonly RouteEntry[],
  path = 'filter',
): FieldError[] {
  return existing
    .filter((other) => other.routeId !== candidate.routeId && filtersOverlap(candidate.filter, other.filter))
    .map((other) => overlapError(path, candidate, other));
}
