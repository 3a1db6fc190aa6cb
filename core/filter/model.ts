// What a route filter is (docs/design.md §4 "Filters"): an OR (`anyOf`) of clauses; a clause is
// an AND over keys; each key carries one predicate object whose fields are AND-ed. A key is a
// message header, a W3C baggage member (`baggage:user`) or a JSON body field (`body:$.a.b`).
// The stored form is canonical, so two equal filters are equal JSON: the equality-only, one-clause
// filter keeps the original `{key: value}` shape (every document written before predicates
// existed still reads the same), anything else is `{anyOf: [...]}`.

/** The predicate on one key. Fields AND-ed; the `not*` fields are also satisfied by an absent key. */
export interface Predicate {
  readonly equals?: string;
  readonly in?: readonly string[];
  readonly prefix?: string;
  /** Matches the whole value; the dialect is core/filter/regexDialect.ts. */
  readonly regex?: string;
  /** true: the key is present (any value); false: the key is absent. */
  readonly exists?: boolean;
  readonly notEquals?: string;
  readonly notIn?: readonly string[];
  readonly notPrefix?: string;
  readonly notRegex?: string;
}

export const PREDICATE_FIELDS = [
  'equals',
  'in',
  'prefix',
  'regex',
  'exists',
  'notEquals',
  'notIn',
  'notPrefix',
  'notRegex',
] as const satisfies readonly (keyof Predicate)[];
export type PredicateField = (typeof PREDICATE_FIELDS)[number];

/** AND over keys; `{}` matches every message. */
export type Clause = Readonly<Record<string, Predicate>>;

/** AND of exact header values: the original filter, still the stored form when it suffices. */
export type EqualityFilter = Readonly<Record<string, string>>;
export interface AnyOfFilter {
  readonly anyOf: readonly Clause[];
}
/** A route's filter as stored and exchanged; `{}` takes every message. */
export type RouteFilter = EqualityFilter | AnyOfFilter;

/**
 * A message's headers as a filter sees them: name → text. Which values read as text, and which
 * of a repeated name's values counts, is its provider's (core/providers/<provider>/message.ts).
 */
export type MessageHeaders = ReadonlyMap<string, string>;

/** The header the extension proposes by default: `x-queue-split-user=<username>`. */
export const DEFAULT_FILTER_KEY = 'x-queue-split-user';
/** The baggage member the extension proposes for "my OpenTelemetry routing key". */
export const DEFAULT_BAGGAGE_MEMBER = 'queue-split-user';

// Limits. Each keeps a filter small enough that matching is cheap and that the overlap decision
// (core/filter/overlap.ts) stays within its time bound for any pair the schema accepts.
/** Keys in one clause. */
export const MAX_FILTER_PAIRS = 32;
/** Clauses in an anyOf. */
export const MAX_FILTER_CLAUSES = 8;
/** Values in one `in`/`notIn`. */
export const MAX_IN_VALUES = 64;
/** Header values longer than this are payload, not routing data. */
export const MAX_FILTER_VALUE_LENGTH = 1024;
/** A regex longer than this is a program, not a routing rule. */
export const MAX_REGEX_LENGTH = 256;
/** Automaton states one regex (or one key's predicates together) may need. */
export const MAX_KEY_STATES = 64;
/** Automaton states of a whole filter (the pair decision is at most the product of two). */
export const MAX_FILTER_STATES = 128;
/** The longest header name every broker carries (some keep names as short strings, ≤ 255 bytes). */
export const MAX_FILTER_KEY_BYTES = 255;
/**
 * The whole filter as JSON, in bytes. A filter is stored in the state and desired documents of
 * every route, which share one ConfigMap (1 MiB): this bound, with MAX_ROUTES_PER_WORKLOAD
 * (core/state/limits.ts), keeps the documents of a fully used workload inside it.
 */
export const MAX_FILTER_BYTES = 4096;

export function isAnyOf(filter: RouteFilter): filter is AnyOfFilter {
  return Object.hasOwn(filter, 'anyOf') && Array.isArray((filter as { anyOf?: unknown }).anyOf);
}

/** The filter's clauses; an equality filter is one clause of `equals`. */
export function filterClauses(filter: RouteFilter): readonly Clause[] {
  if (isAnyOf(filter)) return filter.anyOf;
  const clause: Record<string, Predicate> = {};
  for (const [key, value] of Object.entries(filter)) clause[key] = { equals: value };
  return [clause];
}

export function isEmptyFilter(filter: RouteFilter): boolean {
  return filterClauses(filter).some((clause) => Object.keys(clause).length === 0);
}

/** Every key the filter looks at, sorted (for display without values). */
export function filterKeys(filter: RouteFilter): string[] {
  const keys = new Set<string>();
  for (const clause of filterClauses(filter)) for (const key of Object.keys(clause)) keys.add(key);
  return [...keys].sort();
}

/** True when the filter compares exact header values only (the original form). */
export function isEqualityFilter(filter: RouteFilter): filter is EqualityFilter {
  return !isAnyOf(filter);
}

/** Whether two filters are the same filter (keys and fields in any order). */
export function sameFilter(a: RouteFilter, b: RouteFilter): boolean {
  return filterIdentity(a) === filterIdentity(b);
}

/** One string per filter, equal exactly for the same filter: JSON with keys sorted at every level. */
export function filterIdentity(filter: RouteFilter): string {
  const clauses = filterClauses(filter).map((clause) => sortedJson(clause));
  return clauses.some((c) => c === '{}') ? '{}' : [...new Set(clauses)].sort().join(' or ');
}

function sortedJson(value: unknown): string {
  if (Array.isArray(value)) return `[${[...value].map(sortedJson).sort().join(',')}]`;
  if (typeof value === 'object' && value !== null)
    return `{${Object.keys(value)
      .sort()
      .map((k) => `${JSON.stringify(k)}:${sortedJson((value as Record<string, unknown>)[k])}`)
      .join(',')}}`;
  return JSON.stringify(value);
}
