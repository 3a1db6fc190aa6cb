// A QueueSplit's filter between its two spec fields: `filter` (exact header values, the original
// form) and `match` (anyOf clauses), exactly one set (docs/design.md §4). Kept free of the schema
// library, so the extension's activation bundle can read filters without loading it.
import { isAnyOf, type RouteFilter } from '../filter/model';
import type { QueueSplitSpec } from './queueSplitSchema';

/** The spec fields that carry a filter: `filter` for exact header values, `match` otherwise. */
export function filterSpecFields(filter: RouteFilter): Pick<QueueSplitSpec, 'filter' | 'match'> {
  if (isAnyOf(filter))
    return { match: { anyOf: filter.anyOf.map((c) => structuredClone(c) as Record<string, never>) } };
  return { filter: { ...filter } };
}

/** The filter a spec carries, unchecked (for display; the controller checks it with validateQueueSplitSpec). */
export function specFilter(spec: Pick<QueueSplitSpec, 'filter' | 'match'>): RouteFilter {
  return (spec.match as RouteFilter | undefined) ?? spec.filter ?? {};
}
