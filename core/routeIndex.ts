// Finds the one route whose filter a message matches without scanning every route (docs/design.md §4).
//
// The index is a decision tree over filter keys, built from clause entries (a route's filter is an
// OR of clauses; each clause is one entry). A node picks the key K that most of its entries pin to
// a finite set of values (equals / in); an entry pinning K=v goes to the child for each of its
// values, entries without such a pin go to `rest`. Matching looks up the message's value of K (one
// hash lookup), searches that child, and falls back to `rest`. Each level consumes one key, so a
// match visits a handful of nodes and verifies the entries of one leaf — independent of the number
// of routes when routes pin values, as per-user routes do. Predicates the index cannot pin
// (prefix, regex, negations, baggage and body fields not pinned) are verified at the leaf with
// automata compiled once per route generation (core/filter/compile.ts). Non-overlap is what makes
// the first match the answer: build() rejects any two routes some message could match both.
import { compileFilter, MessageView, type FilterKey, type MessageHeaders } from './filter';
import { clauseMatches, type CompiledClause } from './filter/compile';
import { literalPrefix } from './filter/language';
import { joinPath } from './fieldPath';
import { fail, fieldError, ok, type FieldError, type Result } from './result';
import { overlapErrors, type RouteEntry } from './routeOverlap';

export type { RouteEntry } from './routeOverlap';

interface ClauseEntry {
  readonly route: RouteEntry;
  readonly clause: CompiledClause;
}

type IndexNode =
  | { kind: 'leaf'; entries: readonly ClauseEntry[] }
  | {
      kind: 'split';
      keyText: string;
      key: FilterKey;
      byValue: Map<string, IndexNode>;
      /** Entries whose values on the key all start with a literal prefix (a prefix, a regex's fixed start). */
      byPrefix: Map<string, IndexNode>;
      longestPrefix: number;
      rest: IndexNode;
    };

/** Entries at which a node stops splitting and verifies each one. */
const LEAF_SIZE = 2;

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
    const entries = routes.flatMap((route) =>
      compileFilter(route.filter).clauses.map((clause) => ({ route, clause })),
    );
    return ok(new RouteIndex(buildNode(entries, new Set()), routes.length));
  }

  /** The id of the one route the message matches, or undefined (the application shadow's). */
  match(message: MessageView | MessageHeaders): string | undefined {
    return search(this.root, view(message), { visited: 0 })?.routeId;
  }

  /** How many index nodes a match of these headers visits; for tests of the cost claim. */
  cost(message: MessageView | MessageHeaders): number {
    const counter = { visited: 0 };
    search(this.root, view(message), counter);
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

function view(message: MessageView | MessageHeaders): MessageView {
  return message instanceof MessageView ? message : new MessageView(message);
}

function buildNode(
  entries: readonly ClauseEntry[],
  usedKeys: ReadonlySet<string>,
  exclude?: string,
): IndexNode {
  if (entries.length <= LEAF_SIZE) return { kind: 'leaf', entries };
  const keyText = mostPinnedKey(entries, exclude === undefined ? usedKeys : new Set(usedKeys).add(exclude));
  if (keyText === undefined) return { kind: 'leaf', entries };
  const groups = new Map<string, ClauseEntry[]>();
  const prefixed = new Map<string, ClauseEntry[]>();
  const rest: ClauseEntry[] = [];
  let key: FilterKey | undefined;
  const push = (map: Map<string, ClauseEntry[]>, at: string, entry: ClauseEntry) => {
    const group = map.get(at);
    if (group) group.push(entry);
    else map.set(at, [entry]);
  };
  for (const entry of entries) {
    const condition = entry.clause.byKey.get(keyText);
    const prefix =
      condition && !condition.absentOk && !condition.finite ? literalPrefix(condition.dfa()) : '';
    if (condition?.finite && !condition.absentOk) {
      key = condition.key;
      for (const value of condition.finite) push(groups, value, entry);
    } else if (prefix !== '') {
      push(prefixed, prefix, entry);
    } else {
      rest.push(entry);
    }
  }
  const used = new Set(usedKeys).add(keyText);
  const byValue = new Map<string, IndexNode>();
  for (const [value, group] of groups) byValue.set(value, buildNode(group, used));
  // Prefixed entries keep the key usable below: their values vary after the prefix.
  const byPrefix = new Map<string, IndexNode>();
  for (const [prefix, group] of prefixed) byPrefix.set(prefix, buildNode(group, usedKeys, keyText));
  const longestPrefix = Math.max(0, ...[...prefixed.keys()].map((p) => p.length));
  key ??= entries.map((e) => e.clause.byKey.get(keyText)?.key).find((k) => k !== undefined);
  return { kind: 'split', keyText, key: key!, byValue, byPrefix, longestPrefix, rest: buildNode(rest, used) };
}

function mostPinnedKey(entries: readonly ClauseEntry[], usedKeys: ReadonlySet<string>): string | undefined {
  const counts = new Map<string, number>();
  for (const entry of entries) {
    for (const condition of entry.clause.conditions) {
      if (condition.absentOk || usedKeys.has(condition.keyText)) continue;
      if (condition.finite === undefined && literalPrefix(condition.dfa()) === '') continue;
      counts.set(condition.keyText, (counts.get(condition.keyText) ?? 0) + 1);
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

function search(node: IndexNode, message: MessageView, counter: { visited: number }): RouteEntry | undefined {
  counter.visited++;
  if (node.kind === 'leaf') {
    for (const entry of node.entries) if (clauseMatches(entry.clause, message)) return entry.route;
    return undefined;
  }
  const value = message.value(node.key);
  const child = value === undefined ? undefined : node.byValue.get(value);
  const exact = child && search(child, message, counter);
  if (exact) return exact;
  if (value !== undefined)
    for (let end = Math.min(value.length, node.longestPrefix); end > 0; end--) {
      const below = node.byPrefix.get(value.slice(0, end));
      const found = below && search(below, message, counter);
      if (found) return found;
    }
  return search(node.rest, message, counter);
}
