// What the filter input box says when the typed filter overlaps another live split on the same
// queues: a message that would match both (the witness of core/filter/overlap.ts) and the change
// that separates them (core/routeOverlap.ts distinguishingFix). The user's own other split is
// shown in full. A teammate's filter values are their header values and are never repeated: the
// witness keeps only the values of keys the typed filter itself constrains (and not even those
// when they would spell out one of the teammate's values), and the fix is computed from their
// filter with every value replaced by a placeholder, so their values cannot reach the text.
import {
  describeWitness,
  filterClauses,
  isAnyOf,
  MessageView,
  parseFilterKey,
  type Clause,
  type OverlapDecision,
  type Predicate,
  type RouteFilter,
  type Witness,
} from '../../core/filter';
import { distinguishingFix } from '../../core/routeOverlap';

/** Marks a value shown to nobody (the placeholder) and the two routes (their names in the fix). */
const THEIRS = '\u2063theirs\u2063';
const NEW_ROUTE = '\u2063new\u2063';
const OTHER_ROUTE = '\u2063other\u2063';

export interface OverlapTarget {
  /** The other split's filter. */
  filter: RouteFilter;
  /** True when the other split is the user's own (its values may be shown). */
  mine: boolean;
  /** How the other split is named: "your split qs-…" / "the split of bob". */
  label: string;
}

/** The sentence after "Overlaps <who> on <queues>: " — witness (or reason) and fix. */
export function overlapExplanation(
  typed: RouteFilter,
  other: OverlapTarget,
  decision: Exclude<OverlapDecision, { kind: 'disjoint' }>,
): string {
  const what =
    decision.kind === 'undecided'
      ? `${decision.reason}.`
      : other.mine
        ? `a message with ${describeWitness(decision.witness)} would match both.`
        : teammateWitness(decision.witness, typed, other.filter, decision.clauses);
  return `${what} ${separatingChange(typed, other, decision)}`;
}

/** distinguishingFix, worded for the input box and blind to a teammate's values. */
export function separatingChange(
  typed: RouteFilter,
  other: OverlapTarget,
  decision: OverlapDecision,
): string {
  const theirs = other.mine ? other.filter : redacted(other.filter);
  let fix = distinguishingFix(
    { routeId: NEW_ROUTE, filter: typed },
    { routeId: OTHER_ROUTE, filter: theirs },
    decision,
    other.mine, // a teammate's values are hidden: the change cannot be checked against them
  );
  if (!other.mine) fix = withoutTheirValues(fix);
  const route = (id: string) => new RegExp(`([Rr])oute ${JSON.stringify(id)}`, 'g');
  const named = (label: string) => (_: string, r: string) =>
    r === 'R' ? label.charAt(0).toUpperCase() + label.slice(1) : label;
  return fix
    .replace(route(NEW_ROUTE), named('your new split'))
    .replace(route(OTHER_ROUTE), named(other.label));
}

/** The same filter shape with every value replaced by the placeholder. */
function redacted(filter: RouteFilter): RouteFilter {
  if (!isAnyOf(filter)) return Object.fromEntries(Object.keys(filter).map((k) => [k, THEIRS]));
  return { anyOf: filter.anyOf.map(redactedClause) };
}

function redactedClause(clause: Clause): Clause {
  return Object.fromEntries(
    Object.entries(clause).map(([key, p]): [string, Predicate] => [
      key,
      Object.fromEntries(
        Object.entries(p).map(([field, v]) => [
          field,
          typeof v === 'string' ? THEIRS : Array.isArray(v) ? [THEIRS] : (v as unknown),
        ]),
      ) as Predicate,
    ]),
  );
}

/** The placeholder in distinguishingFix's wording, said in words. */
function withoutTheirValues(fix: string): string {
  const T = THEIRS;
  const set = `\\((?:${T}, )*${T}\\)`;
  return (
    fix
      .replaceAll(`<a value other than ${JSON.stringify(T)}>`, '<a value other than theirs>')
      .replaceAll(`a value other than ${JSON.stringify(T)}`, 'a value other than theirs')
      // An example built from their value ("e.g. team=<their value>-2") shows nothing useful now.
      .replace(new RegExp(`, e\\.g\\. [^,]*${T}[^,]*`, 'g'), '')
      // The negation of one of their predicates: pin the key to a value they do not take.
      .replace(new RegExp(`(?:!\\^=|!~=|!=)${T}| notin ${set}`, 'g'), '=<a value other than theirs>')
      // Their predicate only excludes values: require one of those.
      .replace(new RegExp(`(?:\\^=|~=|=)${T}| in ${set}`, 'g'), '=<a value their filter excludes>')
      .replaceAll(T, '<theirs>')
  );
}

/**
 * `a message with tenant="alice-0", x-queue-split-user=… would match both.` Values are shown
 * only for keys the typed filter constrains in the overlapping alternative, and only when they
 * do not contain one of the teammate's own values for that key (unless the user typed that value).
 */
export function teammateWitness(
  witness: Witness,
  typed: RouteFilter,
  theirs: RouteFilter,
  clauses: readonly [number, number],
): string {
  const mine: Clause = filterClauses(typed)[clauses[0]] ?? {};
  const their: Clause = filterClauses(theirs)[clauses[1]] ?? {};
  const view = new MessageView(new Map(witness.headers), witness.body);
  const parts: string[] = [];
  let hidden = false;
  for (const keyText of [...new Set([...Object.keys(mine), ...Object.keys(their)])].sort()) {
    const key = parseFilterKey(keyText);
    if ('problem' in key) continue;
    const value = view.value(key.key);
    if (value === undefined) continue; // absent in the witness: nothing to show
    const shown = Object.hasOwn(mine, keyText) && !spellsTheirs(value, mine[keyText]!, their[keyText]);
    if (!shown) hidden = true;
    parts.push(shown ? `${keyText}=${JSON.stringify(value)}` : `${keyText}=…`);
  }
  if (parts.length === 0) return `a message with ${describeWitness(witness)} would match both.`;
  return `a message with ${parts.join(', ')} would match both${hidden ? ' (their values are not shown)' : ''}.`;
}

/** Whether showing `value` would repeat one of their values for this key. */
function spellsTheirs(value: string, mine: Predicate, theirs: Predicate | undefined): boolean {
  if (theirs === undefined) return false;
  if (mine.equals === value || mine.in?.includes(value)) return false; // the user typed it
  const literals = [
    theirs.equals,
    ...(theirs.in ?? []),
    theirs.notEquals,
    ...(theirs.notIn ?? []),
    theirs.prefix,
    theirs.notPrefix,
  ].filter((v): v is string => v !== undefined);
  return literals.some((literal) => value.includes(literal));
}
