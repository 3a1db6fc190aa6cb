// What the filter input box says when the typed filter overlaps another live split on the same
// queues: a message that would match both (the witness of core/filter/overlap.ts) and the change
// that separates them (core/routeOverlap.ts explainOverlap), worded here in the user's language. The user's own other split is
// shown in full. A teammate's filter values are their header values and are never repeated: the
// witness keeps only the values of keys the typed filter itself constrains (and not even those
// when they would spell out one of the teammate's values), and the fix is computed from their
// filter with every value replaced by a placeholder, so their values cannot reach the text.
import * as l10n from '@vscode/l10n';
import {
  DEFAULT_FILTER_KEY,
  filterClauses,
  isAnyOf,
  MessageView,
  parseFilterKey,
  type Clause,
  type OverlapDecision,
  type Predicate,
  type RouteFilter,
  type UndecidedCause,
  type Witness,
} from '../../core/filter';
import { formatKey } from '../../core/filter/text';
import { explainOverlap, formatTerm, type FilterTerm, type SeparatingFix } from '../../core/routeOverlap';

/** Stands for a teammate's value while the fix is computed: the wording below never shows it. */
const THEIRS = '\u2063theirs\u2063';

export interface OverlapTarget {
  /** The other split's filter. */
  filter: RouteFilter;
  /** True when the other split is the user's own (its values may be shown). */
  mine: boolean;
  /** How the other split is named: "your split qs-…" / "the split of bob" (already localized). */
  label: string;
}

/**
 * The sentence after "Overlaps <who> on <queues>: " — witness (or reason) and fix, worded from
 * core's explanation (core/routeOverlap.ts explainOverlap), the structure the controller's and the
 * sidecar's English errors are written from too. A teammate's filter goes in with its values
 * replaced by a placeholder: the fix cannot be checked against them, nor show them.
 */
export function overlapExplanation(
  typed: RouteFilter,
  other: OverlapTarget,
  decision: Exclude<OverlapDecision, { kind: 'disjoint' }>,
): string {
  const explanation = explainOverlap(
    { routeId: 'new', filter: typed },
    { routeId: 'other', filter: other.mine ? other.filter : redacted(other.filter) },
    decision,
    other.mine,
  );
  const what =
    decision.kind === 'undecided'
      ? causeWords(decision.cause)
      : other.mine
        ? witnessWords(decision.witness)
        : teammateWitness(decision.witness, typed, other.filter, decision.clauses);
  return explanation === undefined ? what : `${what} ${fixWords(explanation.fix, other)}`;
}

/** Why the overlap is not decided, in the user's language. */
function causeWords(cause: UndecidedCause): string {
  if (cause.kind === 'noWitness')
    return l10n.t(
      'no message matching both could be built, yet the predicates are not disjoint key by key; treated as an overlap.',
    );
  const [a, b] = cause.keys.map((k) => JSON.stringify(k));
  return cause.part === 'body'
    ? l10n.t(
        'one filter reads {0} and the other {1}, which are parts of the same body field; whether one message can satisfy both is not decided exactly, so it is treated as an overlap.',
        a!,
        b!,
      )
    : l10n.t(
        'one filter reads {0} and the other {1}, which are parts of the same baggage header; whether one message can satisfy both is not decided exactly, so it is treated as an overlap.',
        a!,
        b!,
      );
}

/** `a message with headers a="1" and body {…} would match both.` (every value shown: the user's own split). */
export function witnessWords(witness: Witness): string {
  const headers = witness.headers.map(([k, v]) => `${k}=${JSON.stringify(v)}`).join(', ');
  if (witness.body === undefined)
    return headers === ''
      ? l10n.t('a message with no headers would match both.')
      : l10n.t('a message with headers {0} would match both.', headers);
  return headers === ''
    ? l10n.t('a message with no headers and body {0} would match both.', witness.body)
    : l10n.t('a message with headers {0} and body {1} would match both.', headers, witness.body);
}

function fixWords(fix: SeparatingFix, other: OverlapTarget): string {
  const mine = l10n.t('your new split');
  const them = other.label;
  switch (fix.kind) {
    case 'otherTakesAll':
      return sentence(
        l10n.t(
          '{0} takes every message; it has to stop (or be given a filter) before another split can share the queue.',
          them,
        ),
      );
    case 'giveFilter':
      return l10n.t(
        'Give your new split a filter such as {0}=<your name>; an empty filter takes every message and cannot share the queue.',
        fix.key,
      );
    case 'addTerm':
      return fix.eachAlternative
        ? l10n.t(
            'Add {0} to {1} (to each of its alternatives), so that no message can match both.',
            termWords(fix.term, other),
            mine,
          )
        : l10n.t('Add {0} to {1}, so that no message can match both.', termWords(fix.term, other), mine);
    case 'addHeader': {
      const shown = other.mine ? JSON.stringify(fix.notValue) : undefined;
      const example =
        fix.key === DEFAULT_FILTER_KEY ? `${fix.key}=<your name>` : shown && `${fix.key}=${fix.notValue}-2`;
      const term = shown
        ? l10n.t('{0}=<a value other than {1}>', fix.key, shown)
        : l10n.t('{0}=<a value other than theirs>', fix.key);
      return example
        ? l10n.t(
            'Add {0} to {1}, e.g. {2}, so the two filters disagree on a header they share.',
            term,
            mine,
            example,
          )
        : l10n.t('Add {0} to {1}, so the two filters disagree on a header they share.', term, mine);
    }
    case 'changeValue':
      return sentence(
        other.mine
          ? l10n.t(
              '{0} already takes every message your filter matches; change {1} in {2} to a value other than {3}.',
              them,
              fix.key,
              mine,
              JSON.stringify(fix.notValue),
            )
          : l10n.t(
              '{0} already takes every message your filter matches; change {1} in {2} to a value other than theirs.',
              them,
              fix.key,
              mine,
            ),
      );
    case 'noTerm':
      return fix.why === 'undecided'
        ? l10n.t(
            'No term added to {0} on the keys {1} reads separates them (the two read the same part of the message differently): filter on what tells your messages apart (e.g. {2}=<your name> on the messages you produce), or have {1} narrowed.',
            mine,
            them,
            fix.key,
          )
        : l10n.t(
            'No term added to {0} on the keys {1} reads separates them (every message yours can match, theirs can match too): filter on what tells your messages apart (e.g. {2}=<your name> on the messages you produce), or have {1} narrowed.',
            mine,
            them,
            fix.key,
          );
  }
}

/** A term; when it was built from a teammate's (placeholder) value, that value said in words. */
function termWords(term: FilterTerm, other: OverlapTarget): string {
  if (other.mine || !term.values.includes(THEIRS)) return formatTerm(term);
  const key = formatKey(term.key);
  // The negation of one of their predicates: pin the key to a value they do not take; their
  // predicate only excludes values: require one of those.
  const negation =
    term.op === 'notEquals' || term.op === 'notIn' || term.op === 'notPrefix' || term.op === 'notRegex';
  return negation
    ? l10n.t('{0}=<a value other than theirs>', key)
    : l10n.t('{0}=<a value their filter excludes>', key);
}

function sentence(text: string): string {
  return text.charAt(0).toUpperCase() + text.slice(1);
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
  if (parts.length === 0) return witnessWords(witness);
  return hidden
    ? l10n.t('a message with {0} would match both (their values are not shown).', parts.join(', '))
    : l10n.t('a message with {0} would match both.', parts.join(', '));
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
