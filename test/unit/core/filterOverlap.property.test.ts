// Properties of the predicate filter engine (core/filter/*) over generated filters on a small
// alphabet (fast-check): the overlap decision is symmetric, every "disjoint" holds up under an
// exhaustive search of the small message domain, every "overlap" carries a witness the matcher
// accepts on both sides, "undecided" appears only for keys that read the same part of a message,
// the route index agrees with a linear scan, and the text form round-trips.
import assert from 'node:assert/strict';
import { test } from 'node:test';
import fc from 'fast-check';
import {
  compileFilter,
  decideOverlap,
  describeCause,
  filterClauses,
  filterKeys,
  filterWitness,
  formatBaggage,
  formatFilter,
  matches,
  MessageView,
  parseFilter,
  type OverlapDecision,
  type Predicate,
  type RouteFilter,
} from '../../../core/filter';
import { RouteIndex } from '../../../core/routeIndex';

// ---- the small domain ----------------------------------------------------------------------

/** Independent keys: two headers, one baggage member, two sibling body fields. */
const KEYS = ['u', 't', 'baggage:m', 'body:$.x', 'body:$.y'] as const;
/** Keys that read the same part of a message as another key here: the raw baggage header (vs
 * `baggage:m`) and a sub-field of `body:$.x`. */
const DEPENDENT_KEYS = ['u', 'baggage', 'baggage:m', 'body:$.x', 'body:$.x.z'] as const;
const DEPENDENT_PAIRS: readonly (readonly [string, string])[] = [
  ['baggage', 'baggage:m'],
  ['body:$.x', 'body:$.x.z'],
];

/** Strings over {a,b} of length ≤ n, shortest first. */
function strings(n: number): string[] {
  const out = [''];
  for (let i = 0, len = 0; len < n; len++) {
    const end = out.length;
    for (; i < end; i++) out.push(`${out[i]}a`, `${out[i]}b`);
  }
  return out;
}
const VALUES = strings(2); // values and prefixes in filters
const REGEXES = ['a*', '(a|b)b', '[ab]?', 'b+a?', '.*b'];
const UNREADABLE_BODY = 'not json {';

// ---- generators ----------------------------------------------------------------------------

const valueArb = fc.constantFrom(...VALUES);
const setArb = fc.uniqueArray(valueArb, { minLength: 1, maxLength: 3 });
const regexArb = fc.constantFrom(...REGEXES);
const FIELD_ARBS: Record<keyof Predicate, fc.Arbitrary<unknown>> = {
  equals: valueArb,
  in: setArb,
  prefix: valueArb,
  regex: regexArb,
  exists: fc.boolean(),
  notEquals: valueArb,
  notIn: setArb,
  notPrefix: valueArb,
  notRegex: regexArb,
};
const FIELDS = Object.keys(FIELD_ARBS) as (keyof Predicate)[];

/** One to two predicate fields (more are mostly contradictions, which parseFilter refuses). */
const predicateArb: fc.Arbitrary<Record<string, unknown>> = fc
  .uniqueArray(fc.constantFrom(...FIELDS), { minLength: 1, maxLength: 2 })
  .chain((fields) =>
    fc
      .tuple(...fields.map((f) => FIELD_ARBS[f]))
      .map((vs) => Object.fromEntries(fields.map((f, i) => [f, vs[i]]))),
  );

function clauseArb(keys: readonly string[]): fc.Arbitrary<Record<string, unknown>> {
  return fc
    .uniqueArray(fc.constantFrom(...keys), { minLength: 1, maxLength: Math.min(3, keys.length) })
    .chain((ks) =>
      fc.tuple(...ks.map(() => predicateArb)).map((ps) => Object.fromEntries(ks.map((k, i) => [k, ps[i]]))),
    );
}

/** A filter parseFilter accepts (1–3 clauses of 1–3 keys), in its canonical form. */
function filterArb(keys: readonly string[], maxClauses = 3): fc.Arbitrary<RouteFilter> {
  return fc
    .array(clauseArb(keys), { minLength: 1, maxLength: maxClauses })
    .map((anyOf) => parseFilter({ anyOf }))
    .filter((r) => r.ok)
    .map((r) => (r.ok ? r.value : {}));
}

/** Two filters over the same 1–3 keys, so that the exhaustive domain of the pair stays small;
 * single clauses half the time (alternatives make most pairs overlap). */
const pairArb = fc
  .tuple(fc.subarray([...KEYS], { minLength: 1, maxLength: 3 }), fc.constantFrom(1, 3))
  .chain(([keys, clauses]) => fc.tuple(filterArb(keys, clauses), filterArb(keys, clauses)));

// ---- exhaustive messages -------------------------------------------------------------------

interface Message {
  readonly headers: ReadonlyMap<string, string>;
  readonly body: string | undefined;
}

/** Every message over the keys (each absent or one of `values`); the body, when a key reads it,
 * is unreadable or a JSON object with the chosen fields. */
function domain(keys: readonly string[], values: readonly string[]): Message[] {
  const opt = [undefined, ...values];
  const reads = (k: string) => keys.includes(k);
  const u = reads('u') ? opt : [undefined];
  const t = reads('t') ? opt : [undefined];
  const baggage: (string | undefined)[] = [undefined];
  if (reads('baggage')) baggage.push(...values);
  if (reads('baggage:m')) baggage.push(...values.map((v) => formatBaggage([['m', v]])));
  const xs: unknown[] = [undefined];
  if (reads('body:$.x')) xs.push(...values);
  if (reads('body:$.x.z')) xs.push({}, ...values.map((z) => ({ z })));
  const ys = reads('body:$.y') ? opt : [undefined];
  const bodies: (string | undefined)[] = [];
  if (keys.some((k) => k.startsWith('body:'))) {
    bodies.push(UNREADABLE_BODY);
    for (const x of xs) for (const y of ys) bodies.push(JSON.stringify({ x, y })); // undefined fields drop out
  } else bodies.push(undefined);
  const out: Message[] = [];
  for (const uv of u)
    for (const tv of t)
      for (const bv of baggage)
        for (const body of bodies) {
          const headers = new Map<string, string>();
          if (uv !== undefined) headers.set('u', uv);
          if (tv !== undefined) headers.set('t', tv);
          if (bv !== undefined) headers.set('baggage', bv);
          out.push({ headers, body });
        }
  return out;
}

/** Views per domain, built once: a view parses its body once, and is immutable. */
const views = new Map<string, MessageView[]>();
function domainViews(keys: readonly string[], values: readonly string[]): MessageView[] {
  const id = JSON.stringify([[...keys].sort(), values]);
  let list = views.get(id);
  if (!list) {
    list = domain(keys, values).map((m) => new MessageView(m.headers, m.body));
    views.set(id, list);
  }
  return list;
}

function unionKeys(a: RouteFilter, b: RouteFilter): string[] {
  return [...new Set([...filterKeys(a), ...filterKeys(b)])];
}

/** A message of the domain matching both, if any (the compiled matcher is what `matches` runs). */
function commonMessage(a: RouteFilter, b: RouteFilter, values: readonly string[]): MessageView | undefined {
  const ma = compileFilter(a);
  const mb = compileFilter(b);
  return domainViews(unionKeys(a, b), values).find((m) => ma.matches(m) && mb.matches(m));
}

function shownMessage(m: MessageView | undefined): string {
  if (!m) return 'none';
  return JSON.stringify({ headers: [...m.headers], body: (m as unknown as { body?: string }).body });
}

function witnessMatchesBoth(a: RouteFilter, b: RouteFilter, decision: OverlapDecision): void {
  if (decision.kind !== 'overlap') return;
  const view = new MessageView(new Map(decision.witness.headers), decision.witness.body);
  assert.ok(
    matches(a, view),
    `witness ${JSON.stringify(decision.witness)} does not match ${formatFilter(a)}`,
  );
  assert.ok(
    matches(b, view),
    `witness ${JSON.stringify(decision.witness)} does not match ${formatFilter(b)}`,
  );
}

const shown = (a: RouteFilter, b: RouteFilter) => `"${formatFilter(a)}" vs "${formatFilter(b)}"`;

// ---- properties ----------------------------------------------------------------------------

test('(a) the decision is symmetric in kind, and a filter overlaps itself', () => {
  fc.assert(
    fc.property(pairArb, ([a, b]) => {
      assert.equal(decideOverlap(a, b).kind, decideOverlap(b, a).kind, shown(a, b));
      assert.equal(decideOverlap(a, a).kind, 'overlap', formatFilter(a));
      const witness = filterWitness(a);
      assert.ok(
        witness && matches(a, new MessageView(new Map(witness.headers), witness.body)),
        formatFilter(a),
      );
    }),
    { numRuns: 300 },
  );
});

test('(b)(c)(d) disjoint is exhaustively true, overlap has a witness matching both, never undecided for independent keys', () => {
  const domainValues = strings(3);
  const kinds = { disjoint: 0, overlap: 0, undecided: 0 };
  fc.assert(
    fc.property(pairArb, ([a, b]) => {
      const decision = decideOverlap(a, b);
      kinds[decision.kind]++;
      assert.notEqual(decision.kind, 'undecided', `${shown(a, b)}: ${JSON.stringify(decision)}`);
      witnessMatchesBoth(a, b, decision);
      const common = commonMessage(a, b, domainValues);
      if (decision.kind === 'disjoint')
        assert.equal(common, undefined, `${shown(a, b)} said disjoint; both match ${shownMessage(common)}`);
    }),
    { numRuns: 400 },
  );
  // The generator is only useful if it produces both answers often.
  assert.ok(kinds.disjoint > 40 && kinds.overlap > 40, JSON.stringify(kinds));
});

test('(b)(c) over all five keys at once (shorter values)', () => {
  const domainValues = strings(2);
  fc.assert(
    fc.property(filterArb(KEYS), filterArb(KEYS), (a, b) => {
      const decision = decideOverlap(a, b);
      assert.notEqual(decision.kind, 'undecided', shown(a, b));
      witnessMatchesBoth(a, b, decision);
      if (decision.kind === 'disjoint') {
        const common = commonMessage(a, b, domainValues);
        assert.equal(common, undefined, `${shown(a, b)} said disjoint; both match ${shownMessage(common)}`);
      }
    }),
    { numRuns: 60 },
  );
});

test('(d) undecided only when the two filters read dependent keys (raw baggage vs a member, a body field vs its sub-field)', () => {
  const domainValues = strings(2);
  const kinds = { disjoint: 0, overlap: 0, undecided: 0 };
  const pair = fc
    .subarray([...DEPENDENT_KEYS], { minLength: 1, maxLength: 3 })
    .chain((keys) => fc.tuple(filterArb(keys), filterArb(keys)));
  fc.assert(
    fc.property(pair, ([a, b]) => {
      const decision = decideOverlap(a, b);
      kinds[decision.kind]++;
      assert.equal(decision.kind, decideOverlap(b, a).kind, shown(a, b));
      witnessMatchesBoth(a, b, decision);
      if (decision.kind === 'undecided') {
        const left = Object.keys(filterClauses(a)[decision.clauses[0]]!);
        const right = Object.keys(filterClauses(b)[decision.clauses[1]]!);
        const dependent = DEPENDENT_PAIRS.find(
          ([p, q]) => (left.includes(p) && right.includes(q)) || (left.includes(q) && right.includes(p)),
        );
        const reason = describeCause(decision.cause);
        assert.ok(dependent, `${shown(a, b)} undecided without dependent keys: ${reason}`);
        // The cause names the two keys as data (the extension words them), and so does its English.
        assert.equal(decision.cause.kind, 'sharedPart', reason);
        if (decision.cause.kind === 'sharedPart')
          assert.deepEqual([...decision.cause.keys].sort(), [...dependent].sort(), reason);
        assert.ok(
          reason.includes(JSON.stringify(dependent[0])) && reason.includes(JSON.stringify(dependent[1])),
          reason,
        );
      } else if (decision.kind === 'disjoint') {
        const common = commonMessage(a, b, domainValues);
        assert.equal(common, undefined, `${shown(a, b)} said disjoint; both match ${shownMessage(common)}`);
      }
    }),
    { numRuns: 300 },
  );
  assert.ok(kinds.undecided > 0, JSON.stringify(kinds));
});

/** Filters for a route set: half the time every clause also pins `u`, which makes disjoint sets
 * (and index splits on `u`) common. */
const routeFilterArb = fc.oneof(
  filterArb(KEYS),
  fc
    .tuple(
      fc.array(clauseArb(['t', 'baggage:m', 'body:$.x', 'body:$.y']), { minLength: 1, maxLength: 3 }),
      fc.array(valueArb, { minLength: 3, maxLength: 3 }),
    )
    .map(([clauses, pins]) =>
      parseFilter({
        anyOf: clauses.map((c, i) => ({ ...c, u: i % 2 ? { in: [pins[i]!, 'bb'] } : { equals: pins[i]! } })),
      }),
    )
    .filter((r) => r.ok)
    .map((r) => (r.ok ? r.value : {})),
);

const messageArb: fc.Arbitrary<MessageView> = fc
  .record({
    u: fc.option(fc.constantFrom(...strings(3)), { nil: undefined }),
    t: fc.option(fc.constantFrom(...strings(3)), { nil: undefined }),
    m: fc.option(fc.constantFrom(...strings(3)), { nil: undefined }),
    x: fc.option(fc.constantFrom(...strings(3)), { nil: undefined }),
    y: fc.option(fc.constantFrom(...strings(3)), { nil: undefined }),
    readable: fc.boolean(),
  })
  .map(({ u, t, m, x, y, readable }) => {
    const headers = new Map<string, string>();
    if (u !== undefined) headers.set('u', u);
    if (t !== undefined) headers.set('t', t);
    if (m !== undefined) headers.set('baggage', formatBaggage([['m', m]]));
    return new MessageView(headers, readable ? JSON.stringify({ x, y }) : UNREADABLE_BODY);
  });

test('(e) RouteIndex accepts exactly the pairwise disjoint sets, and matches like a linear scan', () => {
  let built = 0;
  fc.assert(
    fc.property(
      fc.array(routeFilterArb, { minLength: 1, maxLength: 10 }),
      fc.array(messageArb, { maxLength: 30 }),
      (filters, messages) => {
        const all = filters.map((filter, i) => ({ routeId: `r${i}`, filter }));
        const disjoint = (x: RouteFilter, y: RouteFilter) => decideOverlap(x, y).kind === 'disjoint';
        const pairwise = all.every((r, i) => all.slice(0, i).every((s) => disjoint(r.filter, s.filter)));
        assert.equal(RouteIndex.build(all).ok, pairwise);
        // The largest set greedily kept disjoint is the one tested.
        const routes: typeof all = [];
        for (const route of all)
          if (routes.every((r) => disjoint(r.filter, route.filter))) routes.push(route);
        const index = RouteIndex.build(routes);
        assert.ok(index.ok, JSON.stringify(index));
        built++;
        const witnesses = routes
          .map((r) => filterWitness(r.filter)!)
          .map((w) => new MessageView(new Map(w.headers), w.body));
        for (const message of [...messages, ...witnesses]) {
          const linear = routes.find((r) => matches(r.filter, message))?.routeId;
          assert.equal(
            index.value.match(message),
            linear,
            `${shownMessage(message)} over ${routes.map((r) => formatFilter(r.filter)).join(' | ')}`,
          );
        }
      },
    ),
    { numRuns: 150 },
  );
  assert.ok(built > 0);
});

test('(f) formatFilter reads back to the same canonical filter, and the canonical form is a fixed point', () => {
  fc.assert(
    fc.property(filterArb([...KEYS, 'baggage', 'body:$.x.z']), (filter) => {
      const text = formatFilter(filter);
      const round = parseFilter(text);
      assert.ok(round.ok, `${text}: ${JSON.stringify(round)}`);
      assert.deepEqual(round.value, filter, text);
      const again = parseFilter(filter);
      assert.ok(again.ok);
      assert.deepEqual(again.value, filter);
    }),
    { numRuns: 400 },
  );
});
