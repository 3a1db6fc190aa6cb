// Explains why two routes may not share a queue (docs/design.md §4: overlapping filters are rejected,
// never resolved by attachment order): the witness message that would match both, and the smallest
// change to the new route that separates them.
import {
  compileFilter,
  DEFAULT_FILTER_KEY,
  decideOverlap,
  describeCause,
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

/**
 * Why `route` may not share a queue with `other`, as data: which two filters, the decision (the
 * witness message that matches both, or why that is not decided) and the change to `route` that
 * separates them. describeOverlap words it in English for the controller's and the sidecar's
 * errors; the extension words the same structure in the user's language
 * (extension/model/filterOverlap.ts).
 */
export interface OverlapExplanation {
  route: RouteEntry;
  other: RouteEntry;
  decision: Exclude<OverlapDecision, { kind: 'disjoint' }>;
  fix: SeparatingFix;
}

/** The explanation of an overlap; undefined when the two are disjoint. */
export function explainOverlap(
  route: RouteEntry,
  other: RouteEntry,
  decision: OverlapDecision = decideOverlap(route.filter, other.filter),
  /** false: the fix is proposed unchecked (only the other filter's shape is known). */
  verify = true,
): OverlapExplanation | undefined {
  if (decision.kind === 'disjoint') return undefined;
  return { route, other, decision, fix: separatingFix(route, other, decision, verify) };
}

/** The explanation in English: the problem and the fix of a field error. */
export function describeOverlap(explanation: OverlapExplanation): { problem: string; fix: string } {
  const { route, other, decision } = explanation;
  const head = `route "${route.routeId}" with filter ${shown(route.filter)}`;
  const them = `route "${other.routeId}" with filter ${shown(other.filter)}`;
  const problem =
    decision.kind === 'undecided'
      ? `${head} may overlap ${them}: ${describeCause(decision.cause)}, and which route gets a message must never depend on attachment order.`
      : `${head} overlaps ${them}: a message with ${describeWitness(decision.witness)} would match both, and which route gets it must never depend on attachment order.`;
  return { problem, fix: describeFix(explanation.fix) };
}

/** The error for `route` (at `path`) overlapping the already present `other`. */
export function overlapError(
  path: string,
  route: RouteEntry,
  other: RouteEntry,
  decision: OverlapDecision = decideOverlap(route.filter, other.filter),
): FieldError {
  const explanation = explainOverlap(route, other, decision);
  if (explanation === undefined)
    return fieldError(path, `route "${route.routeId}" does not overlap route "${other.routeId}"`, '');
  const { problem, fix } = describeOverlap(explanation);
  return fieldError(path, problem, fix);
}

/** One filter term as data: `key<op>values` (formatTerm writes the filter language). */
export interface FilterTerm {
  key: string;
  op:
    | 'equals'
    | 'in'
    | 'prefix'
    | 'regex'
    | 'exists'
    | 'notEquals'
    | 'notIn'
    | 'notPrefix'
    | 'notRegex'
    | 'absent';
  values: readonly string[];
}

/** A term in the filter language: `team!="blue"`, `tenant notin ("a", "b")`, `!has(x)`. */
export function formatTerm(term: FilterTerm): string {
  const key = formatKey(term.key);
  const value = formatValue(term.values[0] ?? '');
  const list = `(${term.values.map(formatValue).join(', ')})`;
  switch (term.op) {
    case 'equals':
      return `${key}=${value}`;
    case 'notEquals':
      return `${key}!=${value}`;
    case 'in':
      return `${key} in ${list}`;
    case 'notIn':
      return `${key} notin ${list}`;
    case 'prefix':
      return `${key}^=${value}`;
    case 'notPrefix':
      return `${key}!^=${value}`;
    case 'regex':
      return `${key}~=${value}`;
    case 'notRegex':
      return `${key}!~=${value}`;
    case 'exists':
      return `has(${key})`;
    case 'absent':
      return `!has(${key})`;
  }
}

/**
 * The change to `route` alone that removes its overlap with `other`, as data: describeFix words
 * it in English for the controller's and the sidecar's errors; the extension words it in the
 * user's language (and without a teammate's values).
 */
export type SeparatingFix =
  /** The other route has no filter: it must stop or get one. */
  | { kind: 'otherTakesAll'; other: string }
  /** This route has no filter: it needs one. */
  | { kind: 'giveFilter'; route: string; key: string }
  /** Adding `term` (to each alternative) makes the two disjoint. */
  | { kind: 'addTerm'; route: string; term: FilterTerm; eachAlternative: boolean }
  /** Equality filters: add a header the other one pins, with another value. */
  | { kind: 'addHeader'; route: string; key: string; notValue: string }
  /** Equality filters: the other already takes every message this one matches. */
  | { kind: 'changeValue'; route: string; other: string; key: string; notValue: string }
  /** No single term on the other's keys separates them. */
  | { kind: 'noTerm'; route: string; other: string; why: 'undecided' | 'covers'; key: string };

/** A change to `route` alone (the other one is usually a teammate's) that removes the overlap. */
export function distinguishingFix(
  route: RouteEntry,
  other: RouteEntry,
  decision: OverlapDecision,
  /** false: propose the likeliest term unchecked (the other filter's values are not known, only its shape). */
  verify = true,
): string {
  return describeFix(separatingFix(route, other, decision, verify));
}

/** distinguishingFix as data. */
export function separatingFix(
  route: RouteEntry,
  other: RouteEntry,
  decision: OverlapDecision,
  verify = true,
): SeparatingFix {
  if (isEmptyFilter(other.filter)) return { kind: 'otherTakesAll', other: other.routeId };
  if (isEmptyFilter(route.filter))
    return { kind: 'giveFilter', route: route.routeId, key: DEFAULT_FILTER_KEY };
  if (isEqualityFilter(route.filter) && isEqualityFilter(other.filter)) return equalityFix(route, other);
  const theirs = filterClauses(other.filter)[decision.kind === 'disjoint' ? 0 : decision.clauses[1]] ?? {};
  // The first candidate term that, added to every clause of this route, leaves a filter that
  // parses (some message can still match it) and is disjoint from the other one.
  const terms = separatingTerms(theirs);
  const eachAlternative = filterClauses(route.filter).length > 1;
  const add = (term: FilterTerm): SeparatingFix => ({
    kind: 'addTerm',
    route: route.routeId,
    term,
    eachAlternative,
  });
  if (!verify && decision.kind === 'overlap' && terms[0] !== undefined) return add(terms[0]);
  for (const term of terms.slice(0, MAX_FIX_ATTEMPTS)) {
    const changed = parseFilter(
      filterClauses(route.filter)
        .map((clause) =>
          [formatFilter({ anyOf: [clause] }), formatTerm(term)].filter((t) => t !== '').join(','),
        )
        .join(' or '),
    );
    if (changed.ok && decideOverlap(changed.value, other.filter).kind === 'disjoint') return add(term);
  }
  return {
    kind: 'noTerm',
    route: route.routeId,
    other: other.routeId,
    why: decision.kind === 'undecided' ? 'undecided' : 'covers',
    key: DEFAULT_FILTER_KEY,
  };
}

/** The fix in English (the controller's and the sidecar's errors). */
export function describeFix(fix: SeparatingFix): string {
  switch (fix.kind) {
    case 'otherTakesAll':
      return `Route "${fix.other}" takes every message; it has to stop (or be given a filter) before another route can share the queue.`;
    case 'giveFilter':
      return `Give route "${fix.route}" a filter such as ${fix.key}=<your name>; an empty filter takes every message and cannot share the queue.`;
    case 'addTerm':
      return `Add ${formatTerm(fix.term)} to route "${fix.route}"${fix.eachAlternative ? ' (to each of its alternatives)' : ''}, so that no message can match both.`;
    case 'addHeader':
      return `Add ${fix.key}=<a value other than ${JSON.stringify(fix.notValue)}> to route "${fix.route}", e.g. ${fix.key}=${fix.key === DEFAULT_FILTER_KEY ? '<your name>' : `${fix.notValue}-2`}, so the two filters disagree on a header they share.`;
    case 'changeValue':
      return `Route "${fix.other}" already takes every message your filter matches; change ${fix.key} in route "${fix.route}" to a value other than ${JSON.stringify(fix.notValue)}.`;
    case 'noTerm':
      return `No term added to route "${fix.route}" on the keys route "${fix.other}" reads separates them (${fix.why === 'undecided' ? 'the two read the same part of the message differently' : 'every message yours can match, theirs can match too'}): filter on what tells your messages apart (e.g. ${fix.key}=<your name> on the messages you produce), or have route "${fix.other}" narrowed.`;
  }
}

/** Candidate changes are each checked with the decision; a handful covers every key they read. */
const MAX_FIX_ATTEMPTS = 8;

/** Negations of the other clause's predicates, one term each, the likeliest first. */
function separatingTerms(clause: Readonly<Record<string, Predicate>>): FilterTerm[] {
  const keys = Object.keys(clause).sort((a, b) => rank(clause, a) - rank(clause, b));
  const terms: FilterTerm[] = [];
  for (const key of keys) {
    const p = clause[key]!;
    const term = (op: FilterTerm['op'], values: readonly string[] = []) => terms.push({ key, op, values });
    if (p.equals !== undefined) term('notEquals', [p.equals]);
    if (p.in !== undefined) term('notIn', p.in);
    if (p.prefix !== undefined) term('notPrefix', [p.prefix]);
    if (p.regex !== undefined) term('notRegex', [p.regex]);
    if (p.exists === true) term('absent');
    // Their predicate excludes values (or requires absence): require what it excludes.
    if (p.notEquals !== undefined) term('equals', [p.notEquals]);
    if (p.notIn !== undefined) term('in', p.notIn);
    if (p.notPrefix !== undefined) term('prefix', [p.notPrefix]);
    if (p.notRegex !== undefined) term('regex', [p.notRegex]);
    if (p.exists === false) term('exists');
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

function equalityFix(route: RouteEntry, other: RouteEntry): SeparatingFix {
  const mine = route.filter as Readonly<Record<string, string>>;
  const theirs = Object.entries(other.filter as Readonly<Record<string, string>>).sort(([a], [b]) =>
    a < b ? -1 : 1,
  );
  // Prefer the conventional per-user header, then any header the other route filters on.
  const missing = theirs.filter(([key]) => !Object.hasOwn(mine, key));
  const pick = (pairs: [string, string][]) => pairs.find(([key]) => key === DEFAULT_FILTER_KEY) ?? pairs[0];
  const added = pick(missing);
  if (added) return { kind: 'addHeader', route: route.routeId, key: added[0], notValue: added[1] };
  const [key, notValue] = pick(theirs) ?? ['', ''];
  return { kind: 'changeValue', route: route.routeId, other: other.routeId, key, notValue };
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
