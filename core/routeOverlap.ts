// Explains why two routes may not share a queue (docs/design.md §4: overlapping filters are rejected,
// never resolved by attachment order): the witness message that would match both, and the smallest
// change to the new route that separates them.
import {
  compileFilter,
  DEFAULT_FILTER_KEY,
  decideOverlap,
  describeWitness,
  filterClauses,
  formatFilter,
  formatValue,
  isEmptyFilter,
  parseFilter,
  isEqualityFilter,
  type OverlapDecision,
  type Predicate,
  type RouteFilter,
} from './filter';
import { joinPath } from './fieldPath';
import { literalPrefix } from './filter/language';
import { formatKey } from './filter/text';
import { fieldError, type FieldError } from './result';

export interface RouteEntry {
  routeId: string;
  filter: RouteFilter;
}

function shown(filter: RouteFilter): string {
  return isEmptyFilter(filter) ? '{} (every message)' : `"${formatFilter(filter)}"`;
}

/** The error for `route` (at `path`) overlapping the already present `other`. */
export function overlapError(
  path: string,
  route: RouteEntry,
  other: RouteEntry,
  decision: OverlapDecision = decideOverlap(route.filter, other.filter),
): FieldError {
  const head = `route "${route.routeId}" with filter ${shown(route.filter)}`;
  const them = `route "${other.routeId}" with filter ${shown(other.filter)}`;
  const problem =
    decision.kind === 'undecided'
      ? `${head} may overlap ${them}: ${decision.reason}, and which route gets a message must never depend on attachment order.`
      : `${head} overlaps ${them}: a message with ${decision.kind === 'overlap' ? describeWitness(decision.witness) : 'any headers at all'} would match both, and which route gets it must never depend on attachment order.`;
  return fieldError(path, problem, distinguishingFix(route, other, decision));
}

/** A change to `route` alone (the other one is usually a teammate's) that removes the overlap. */
export function distinguishingFix(
  route: RouteEntry,
  other: RouteEntry,
  decision: OverlapDecision,
  /** false: propose the likeliest term unchecked (the other filter's values are not known, only its shape). */
  verify = true,
): string {
  if (isEmptyFilter(other.filter))
    return `Route "${other.routeId}" takes every message; it has to stop (or be given a filter) before another route can share the queue.`;
  if (isEmptyFilter(route.filter))
    return `Give route "${route.routeId}" a filter such as ${DEFAULT_FILTER_KEY}=<your name>; an empty filter takes every message and cannot share the queue.`;
  if (isEqualityFilter(route.filter) && isEqualityFilter(other.filter)) return equalityFix(route, other);
  const theirs = filterClauses(other.filter)[decision.kind === 'disjoint' ? 0 : decision.clauses[1]] ?? {};
  // The first candidate term that, added to every clause of this route, leaves a filter that
  // parses (some message can still match it) and is disjoint from the other one.
  const terms = separatingTerms(theirs);
  const each = filterClauses(route.filter).length > 1 ? ' (to each of its alternatives)' : '';
  if (!verify && decision.kind === 'overlap' && terms[0] !== undefined)
    return `Add ${terms[0]} to route "${route.routeId}"${each}, so that no message can match both.`;
  for (const term of terms.slice(0, MAX_FIX_ATTEMPTS)) {
    const changed = parseFilter(
      filterClauses(route.filter)
        .map((clause) => [formatFilter({ anyOf: [clause] }), term].filter((t) => t !== '').join(','))
        .join(' or '),
    );
    if (changed.ok && decideOverlap(changed.value, other.filter).kind === 'disjoint')
      return `Add ${term} to route "${route.routeId}"${each}, so that no message can match both.`;
  }
  return `No term added to route "${route.routeId}" on the keys route "${other.routeId}" reads separates them (${decision.kind === 'undecided' ? 'the two read the same part of the message differently' : 'every message yours can match, theirs can match too'}): filter on what tells your messages apart (e.g. ${DEFAULT_FILTER_KEY}=<your name> on the messages you produce), or have route "${other.routeId}" narrowed.`;
}

/** Candidate changes are each checked with the decision; a handful covers every key they read. */
const MAX_FIX_ATTEMPTS = 8;

/** Negations of the other clause's predicates, one term each, the likeliest first. */
function separatingTerms(clause: Readonly<Record<string, Predicate>>): string[] {
  const keys = Object.keys(clause).sort((a, b) => rank(clause, a) - rank(clause, b));
  const terms: string[] = [];
  const list = (values: readonly string[]) => `(${values.map(formatValue).join(', ')})`;
  for (const raw of keys) {
    const p = clause[raw]!;
    const key = formatKey(raw);
    if (p.equals !== undefined) terms.push(`${key}!=${formatValue(p.equals)}`);
    if (p.in !== undefined) terms.push(`${key} notin ${list(p.in)}`);
    if (p.prefix !== undefined) terms.push(`${key}!^=${formatValue(p.prefix)}`);
    if (p.regex !== undefined) terms.push(`${key}!~=${formatValue(p.regex)}`);
    if (p.exists === true) terms.push(`!has(${key})`);
    // Their predicate excludes values (or requires absence): require what it excludes.
    if (p.notEquals !== undefined) terms.push(`${key}=${formatValue(p.notEquals)}`);
    if (p.notIn !== undefined) terms.push(`${key} in ${list(p.notIn)}`);
    if (p.notPrefix !== undefined) terms.push(`${key}^=${formatValue(p.notPrefix)}`);
    if (p.notRegex !== undefined) terms.push(`${key}~=${formatValue(p.notRegex)}`);
    if (p.exists === false) terms.push(`has(${key})`);
  }
  return terms;
}

/** The per-user header first, then exact values, then the rest. */
function rank(clause: Readonly<Record<string, Predicate>>, key: string): number {
  const p = clause[key]!;
  if (key === DEFAULT_FILTER_KEY) return 0;
  if (p.equals !== undefined || p.in !== undefined) return 1;
  if (p.prefix !== undefined || p.exists === true) return 2;
  return p.regex !== undefined ? 3 : 4;
}

function equalityFix(route: RouteEntry, other: RouteEntry): string {
  const mine = route.filter as Readonly<Record<string, string>>;
  const theirs = Object.entries(other.filter as Readonly<Record<string, string>>).sort(([a], [b]) =>
    a < b ? -1 : 1,
  );
  // Prefer the conventional per-user header, then any header the other route filters on.
  const missing = theirs.filter(([key]) => !Object.hasOwn(mine, key));
  const pick = (pairs: [string, string][]) => pairs.find(([key]) => key === DEFAULT_FILTER_KEY) ?? pairs[0];
  const added = pick(missing);
  if (added) {
    const [key, value] = added;
    return `Add ${key}=<a value other than ${JSON.stringify(value)}> to route "${route.routeId}", e.g. ${key}=${key === DEFAULT_FILTER_KEY ? '<your name>' : `${value}-2`}, so the two filters disagree on a header they share.`;
  }
  const [key, value] = pick(theirs) ?? ['', ''];
  return `Route "${other.routeId}" already takes every message your filter matches; change ${key} in route "${route.routeId}" to a value other than ${JSON.stringify(value)}.`;
}

/** Every overlapping pair in `routes`, reported at the later route and naming the earlier one. */
export function overlapErrors(routes: readonly RouteEntry[], basePath = 'routes'): FieldError[] {
  const errors: FieldError[] = [];
  for (const [index, otherIndex] of candidatePairs(routes)) {
    const route = routes[index]!;
    const other = routes[otherIndex]!;
    const decision = decideOverlap(route.filter, other.filter);
    if (decision.kind !== 'disjoint')
      errors.push(overlapError(joinPath(joinPath(basePath, index), 'filter'), route, other, decision));
  }
  return errors;
}

/**
 * The pairs (later, earlier) that can overlap at all, in order. Every value a route accepts for
 * the key most routes require starts with one of its literal prefixes (an exact value, a set's
 * values, a prefix, a regex's fixed start); two routes can overlap only if a prefix of one starts
 * with a prefix of the other, or one of them does not require the key. A thousand per-user or
 * per-tenant routes cost a few thousand lookups, not half a million decisions.
 */
function candidatePairs(routes: readonly RouteEntry[]): [number, number][] {
  const pins = routes.map((route) => requiredPins(route.filter));
  // Per key: who pins it to which prefixes, who requires it absent, who leaves it open.
  const byKey = new Map<string, { prefixes: Map<string, number[]>; absent: number[]; open: number[] }>();
  pins.forEach((own, i) => {
    for (const [key, pin] of own) {
      const slot = byKey.get(key) ?? { prefixes: new Map<string, number[]>(), absent: [], open: [] };
      byKey.set(key, slot);
      if (pin === ABSENT) slot.absent.push(i);
      else for (const p of pin) slot.prefixes.set(p, [...(slot.prefixes.get(p) ?? []), i]);
    }
  });
  for (const [key, slot] of byKey) pins.forEach((own, i) => (own.has(key) ? undefined : slot.open.push(i)));
  const sorted = new Map([...byKey].map(([key, slot]) => [key, [...slot.prefixes.keys()].sort()]));
  const pairs = new Set<number>();
  const add = (a: number, b: number) => {
    if (a !== b) pairs.add(Math.max(a, b) * routes.length + Math.min(a, b));
  };
  pins.forEach((own, i) => {
    // The key the fewest routes leave open: those routes, and the ones whose pins on it are
    // compatible, are all the routes this one can overlap.
    const best = [...own.keys()].sort((a, b) => byKey.get(a)!.open.length - byKey.get(b)!.open.length)[0];
    if (best === undefined) {
      for (let j = 0; j < routes.length; j++) add(i, j);
      return;
    }
    const slot = byKey.get(best)!;
    for (const j of slot.open) add(i, j);
    const pin = own.get(best)!;
    if (pin === ABSENT) for (const j of slot.absent) add(i, j);
    else
      for (const p of pin) {
        // Prefixes p starts with, and prefixes that start with p (a sorted run from p on).
        for (let end = 1; end <= p.length; end++)
          for (const j of slot.prefixes.get(p.slice(0, end)) ?? []) add(i, j);
        const keys = sorted.get(best)!;
        for (let at = lowerBound(keys, p); at < keys.length && keys[at]!.startsWith(p); at++)
          for (const j of slot.prefixes.get(keys[at]!) ?? []) add(i, j);
      }
  });
  return [...pairs].sort((x, y) => x - y).map((p) => [Math.floor(p / routes.length), p % routes.length]);
}

function lowerBound(sorted: readonly string[], value: string): number {
  let lo = 0;
  let hi = sorted.length;
  while (lo < hi) {
    const mid = (lo + hi) >> 1;
    if (sorted[mid]! < value) lo = mid + 1;
    else hi = mid;
  }
  return lo;
}

const ABSENT = Symbol('absent');

/**
 * Keys every clause of the filter pins: to the non-empty literal prefixes all accepted values
 * start with (an exact value, a set's values, a prefix, a regex's fixed start), or to absence.
 */
function requiredPins(filter: RouteFilter): Map<string, string[] | typeof ABSENT> {
  const clauses = compileFilter(filter).clauses;
  const out = new Map<string, string[] | typeof ABSENT>();
  for (const condition of clauses[0]?.conditions ?? []) {
    const all: string[] = [];
    let absent = 0;
    const everywhere = clauses.every((clause) => {
      const c = clause.byKey.get(condition.keyText);
      if (!c) return false;
      if (c.absentOk) {
        absent++;
        return c.finite?.size === 0; // exists: false
      }
      const own = c.finite ? [...c.finite] : [literalPrefix(c.dfa())];
      all.push(...own);
      return own.every((p) => p !== '');
    });
    if (!everywhere) continue;
    if (absent === clauses.length) out.set(condition.keyText, ABSENT);
    else if (absent === 0 && all.length > 0) out.set(condition.keyText, all);
  }
  return out;
}

/** The errors a candidate route would cause next to routes already attached to the same queue. */
export function candidateOverlapErrors(
  candidate: RouteEntry,
  existing: readonly RouteEntry[],
  path = 'filter',
): FieldError[] {
  const errors: FieldError[] = [];
  for (const other of existing) {
    if (other.routeId === candidate.routeId) continue;
    const decision = decideOverlap(candidate.filter, other.filter);
    if (decision.kind !== 'disjoint') errors.push(overlapError(path, candidate, other, decision));
  }
  return errors;
}
