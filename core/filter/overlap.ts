// Whether two filters overlap — some message satisfies both — decided exactly (docs/design.md §4
// "Overlap"). Filters are ORs of clauses, so two overlap iff some pair of clauses does. Two clauses
// overlap iff every key can take one value (or be absent) that both accept: keys vary
// independently, so this is a per-key intersection of regular languages, done on automata
// (refa). The answer "overlap" always comes with a witness message built from those values and
// checked by the matcher against both filters; "disjoint" is exact because each key's languages
// really are disjoint. Where keys read the same part of a message (the raw baggage header and a
// member; a body field and its own sub-field) the independence does not hold, and a pair that is
// not disjoint on the independent keys is "undecided" — refused, with the reason.
import { formatBaggage } from './baggage';
import { buildBody } from './body';
import { clauseMatches, compileFilter, type CompiledClause } from './compile';
import { BAGGAGE_HEADER, keysDependent, type BodySegment } from './keys';
import { commonWord, type KeyCondition } from './language';
import { MessageView } from './messageView';
import type { RouteFilter } from './model';

/** A message that matches both filters: what the error shows, and what Send Test Message sends. */
export interface Witness {
  readonly headers: readonly (readonly [string, string])[];
  /** JSON text, when a filter reads the body. */
  readonly body: string | undefined;
}

export type OverlapDecision =
  | { kind: 'disjoint' }
  | { kind: 'overlap'; witness: Witness; clauses: readonly [number, number] }
  | { kind: 'undecided'; cause: UndecidedCause; clauses: readonly [number, number] };

/**
 * Why an overlap was not decided, as data: describeCause words it in English (the controller's and
 * the sidecar's errors), the extension in the user's language; the decision carries no text.
 */
export type UndecidedCause =
  /** Two keys read the same part of a message: a body field and its sub-field, or baggage and a member. */
  | { kind: 'sharedPart'; keys: readonly [string, string]; part: 'body' | 'baggage' }
  /** Not disjoint key by key, yet no message matching both could be built. */
  | { kind: 'noWitness' };

/** Product states one intersection may explore; the parse-time state caps keep it far below. */
const MAX_PRODUCT_NODES = 20000;

export function decideOverlap(a: RouteFilter, b: RouteFilter): OverlapDecision {
  const left = compileFilter(a).clauses;
  const right = compileFilter(b).clauses;
  let undecided: OverlapDecision | undefined;
  for (let i = 0; i < left.length; i++) {
    for (let j = 0; j < right.length; j++) {
      const decision = decideClauses(left[i]!, right[j]!, [i, j]);
      if (decision.kind === 'overlap') return decision;
      if (decision.kind === 'undecided') undecided ??= decision;
    }
  }
  return undecided ?? { kind: 'disjoint' };
}

/** True unless the filters are proven disjoint (an undecided pair counts as overlapping). */
export function filtersOverlap(a: RouteFilter, b: RouteFilter): boolean {
  return decideOverlap(a, b).kind !== 'disjoint';
}

/** A message matching the filter (its first clause that any message can satisfy). */
export function filterWitness(filter: RouteFilter): Witness | undefined {
  for (const clause of compileFilter(filter).clauses) {
    const decision = decideClauses(clause, clause, [0, 0]);
    if (decision.kind === 'overlap') return decision.witness;
  }
  return undefined;
}

function decideClauses(
  a: CompiledClause,
  b: CompiledClause,
  clauses: readonly [number, number],
): OverlapDecision {
  // Pinned keys first: most pairs of routes differ on an exact value, found without automata.
  for (const ca of a.conditions) {
    const cb = b.byKey.get(ca.keyText);
    if (
      cb?.finite &&
      ca.finite &&
      !(ca.absentOk && cb.absentOk) &&
      ![...ca.finite].some((v) => cb.finite!.has(v))
    )
      return { kind: 'disjoint' };
  }
  const values = new Map<string, { condition: KeyCondition; value: string | undefined }>();
  for (const condition of [...a.conditions, ...b.conditions]) {
    if (values.has(condition.keyText)) continue;
    const ca = a.byKey.get(condition.keyText);
    const cb = b.byKey.get(condition.keyText);
    const value = commonValue(ca, cb);
    if (value === null) return { kind: 'disjoint' };
    values.set(condition.keyText, { condition, value });
  }
  const keys = [...values.values()].map((v) => v.condition);
  for (let i = 0; i < keys.length; i++)
    for (let j = i + 1; j < keys.length; j++)
      if (keysDependent(keys[i]!.key, keys[j]!.key))
        return undecided(clauses, {
          kind: 'sharedPart',
          keys: [keys[i]!.keyText, keys[j]!.keyText],
          part: keys[i]!.key.kind === 'body' ? 'body' : 'baggage',
        });
  const witness = buildWitness([...values.values()], a.readsBody || b.readsBody);
  const message = new MessageView(new Map(witness.headers), witness.body);
  if (clauseMatches(a, message) && clauseMatches(b, message)) return { kind: 'overlap', witness, clauses };
  return undecided(clauses, { kind: 'noWitness' });
}

function undecided(clauses: readonly [number, number], cause: UndecidedCause): OverlapDecision {
  return { kind: 'undecided', clauses, cause };
}

/** The cause in English, for errors the controller and the sidecar write. */
export function describeCause(cause: UndecidedCause): string {
  return cause.kind === 'sharedPart'
    ? `one filter reads ${JSON.stringify(cause.keys[0])} and the other ${JSON.stringify(cause.keys[1])}, which are parts of the same ${cause.part === 'body' ? 'body field' : 'baggage header'}; whether one message can satisfy both is not decided exactly, so it is treated as an overlap`
    : 'no message matching both could be built, yet the predicates are not disjoint key by key; treated as an overlap';
}

/**
 * A value both conditions accept: a string, undefined for "absent", or null when there is none.
 * A key only one side mentions is unconstrained on the other.
 */
function commonValue(ca: KeyCondition | undefined, cb: KeyCondition | undefined): string | undefined | null {
  const absentOk = (ca?.absentOk ?? true) && (cb?.absentOk ?? true);
  if (absentOk) return undefined;
  if (!ca || !cb) return someValue((ca ?? cb)!);
  if (ca.finite || cb.finite) {
    const [small, other] = ca.finite ? [ca, cb] : [cb, ca];
    return [...small.finite!].sort().find((v) => other.test(v)) ?? null;
  }
  return commonWord(ca, cb, MAX_PRODUCT_NODES) ?? null;
}

function someValue(condition: KeyCondition): string | null {
  if (condition.finite) return [...condition.finite].sort()[0] ?? null;
  return commonWord(condition, undefined, MAX_PRODUCT_NODES) ?? null;
}

function buildWitness(
  values: readonly { condition: KeyCondition; value: string | undefined }[],
  readsBody: boolean,
): Witness {
  const headers: [string, string][] = [];
  const members: [string, string][] = [];
  const fields: [readonly BodySegment[], string][] = [];
  for (const { condition, value } of values) {
    if (value === undefined) continue;
    const key = condition.key;
    if (key.kind === 'header') headers.push([key.name, value]);
    else if (key.kind === 'baggage') members.push([key.member, value]);
    else fields.push([key.path, value]);
  }
  if (members.length > 0) headers.push([BAGGAGE_HEADER, formatBaggage(members)]);
  return { headers, body: readsBody ? buildBody(fields) : undefined };
}

/** The witness in words, for errors: `headers a=1, b=2; body {"x":"y"}`. */
export function describeWitness(witness: Witness): string {
  const parts: string[] = [];
  if (witness.headers.length > 0)
    parts.push(`headers ${witness.headers.map(([k, v]) => `${k}=${JSON.stringify(v)}`).join(', ')}`);
  else parts.push('no headers');
  if (witness.body !== undefined) parts.push(`body ${witness.body}`);
  return parts.join(' and ');
}
