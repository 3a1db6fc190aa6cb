// Finds the one route whose filter a message matches without scanning every route (docs/design.md §4).
//
// The index is a decision tree over header keys. A node picks the key K that most of its routes
// filter on; routes with K=v go to the child for v, routes without K go to `rest`. Matching looks
// up the message's value of K (one hash lookup), searches that child, and falls back to `rest`.
// Each level consumes one key, so with d distinct filter keys a match visits at most
// min(2^d, nodes) nodes and verifies one filter — independent of the number of routes. In the
// usual shape (every route filters on x-queue-split-user) it is one lookup plus one verification.
// Non-overlap is what makes this exact: two routes that reach the same leaf would agree on every
// key they share, i.e. overlap, which build() rejects.
import { matches, type HeaderFilter, type MessageHeaders } from './filter';
import { joinPath } from './fieldPath';
import { fail, fieldError, ok, type FieldError, type Result } from './result';
import { overlapErrors, type RouteEntry } from './routeOverlap';

export type { RouteEntry } from './routeOverlap';

type IndexNode =
  | { kind: 'leaf'; entry: RouteEntry | undefined }
  | { kind: 'split'; key: string; byValue: Map<string, IndexNode>; rest: IndexNode };

export class RouteIndex {
  readonly size: number;

  private constructor(
    private readonly root: IndexNode,
    size: number,
  ) {
    this.size = size;
  }

  /** Rejects duplicate route ids and every overlapping pair (naming both routes and filters). */
  static build(routes: readonly RouteEntry[]): Result<RouteIndex> {
    const errors: FieldError[] = [...duplicateIdErrors(routes), ...overlapErrors(routes)];
    if (errors.length > 0) return fail(errors);
    return ok(new RouteIndex(buildNode(routes, new Set()), routes.length));
  }

  /** The id of the one route the message matches, or undefined (the application shadow's). */
  match(headers: MessageHeaders): string | undefined {
    return search(this.root, headers, { visited: 0 })?.routeId;
  }

  /** How many index nodes a match of these headers visits; for tests of the cost claim. */
  cost(headers: MessageHeaders): number {
    const counter = { visited: 0 };
    search(this.root, headers, counter);
    return counter.visited;
  }
}

function duplicateIdErrors(routes: readonly RouteEntry[]): FieldError[] {
  const seen = new Set<string>();
  const errors: FieldError[] = [];
  routes.forEach((route, index) => {
    if (seen.has(route.routeId)) {
      errors.push(
        fieldError(
          joinPath(joinPath('routes', index), 'routeId'),
          `route id "${route.routeId}" is used twice.`,
          'Give every route its own id (route ids are random and stable per split).',
        ),
      );
    }
    seen.add(route.routeId);
  });
  return errors;
}

function buildNode(routes: readonly RouteEntry[], usedKeys: ReadonlySet<string>): IndexNode {
  if (routes.length <= 1) return { kind: 'leaf', entry: routes[0] };
  const key = mostCommonKey(routes, usedKeys);
  // Unreachable for non-overlapping routes (two of them always differ on an unused key).
  if (key === undefined) return { kind: 'leaf', entry: routes[0] };
  const groups = new Map<string, RouteEntry[]>();
  const rest: RouteEntry[] = [];
  for (const route of routes) {
    const value = valueOf(route.filter, key);
    if (value === undefined) rest.push(route);
    else {
      const group = groups.get(value);
      if (group) group.push(route);
      else groups.set(value, [route]);
    }
  }
  const used = new Set(usedKeys).add(key);
  const byValue = new Map<string, IndexNode>();
  for (const [value, group] of groups) byValue.set(value, buildNode(group, used));
  return { kind: 'split', key, byValue, rest: buildNode(rest, used) };
}

function mostCommonKey(routes: readonly RouteEntry[], usedKeys: ReadonlySet<string>): string | undefined {
  const counts = new Map<string, number>();
  for (const route of routes) {
    for (const key of Object.keys(route.filter)) {
      if (!usedKeys.has(key)) counts.set(key, (counts.get(key) ?? 0) + 1);
    }
  }
  let best: string | undefined;
  let bestCount = 0;
  for (const [key, count] of counts) {
    // Ties broken by key so the same routes always build the same tree.
    if (count > bestCount || (count === bestCount && best !== undefined && key < best)) {
      best = key;
      bestCount = count;
    }
  }
  return best;
}

function valueOf(filter: HeaderFilter, key: string): string | undefined {
  return Object.hasOwn(filter, key) ? filter[key] : undefined;
}

function search(
  node: IndexNode,
  headers: MessageHeaders,
  counter: { visited: number },
): RouteEntry | undefined {
  counter.visited++;
  if (node.kind === 'leaf') {
    return node.entry !== undefined && matches(node.entry.filter, headers) ? node.entry : undefined;
  }
  const value = headers.get(node.key);
  const child = value === undefined ? undefined : node.byValue.get(value);
  return (child && search(child, headers, counter)) ?? search(node.rest, headers, counter);
}
