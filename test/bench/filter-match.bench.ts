// Route filters on the hot path (core/filter/*, core/routeIndex.ts), CPU only, in one process
// (no broker): what a queue-agent pays per message to pick a route, and what the controller pays
// to admit a route set.
//   (i)   RouteIndex.match per message, 1,000 equality routes (x-queue-split-user=user-N): the
//         baseline; 9 messages in 10 hit a route.
//   (ii)  the same for 1,000 routes of mixed predicates, 1/7 each: equality, `in`, prefix, regex,
//         anyOf (a header value or a baggage prefix), baggage member, body field — mutually
//         disjoint, so RouteIndex.build accepts them; messages hit each kind alike, and 2 in 9
//         match no route. Reported per kind and overall, and overall against the baseline.
//   (iii) one body-field route (body:$.customer.id) against one header route, per message with a
//         1 KiB and a 64 KiB JSON body (Buffers, as Kafka and RabbitMQ hand them over).
//   (iv)  RouteIndex.build for both 1,000-route sets: the first build (compiles every filter) and
//         later ones (filters compiled once per process, as a route generation finds them).
//   (v)   decideOverlap on heavy pairs within the parse limits (MAX_KEY_STATES per key,
//         MAX_FILTER_STATES per filter, MAX_FILTER_CLAUSES clauses); docs/design.md §4 allows
//         50 ms for any pair the schema accepts. Per pair: the first call, then the median and
//         maximum of the following ones.
// Every message is a new MessageView (as the engines make one per message), timed with the match.
//
//   npx tsx test/bench/filter-match.bench.ts [messages-per-run] [runs]
//
// Prints a table and one JSON line. Bounded: stops starting runs after 90 s.
import {
  compileFilter,
  decideOverlap,
  formatBaggage,
  MessageView,
  parseFilter,
  type FilterInput,
  type RouteFilter,
} from '../../core/filter';
import { RouteIndex, type RouteEntry } from '../../core/routeIndex';
import { median } from './stats';
import { benchRun } from './support/benchRun';

const perRun = Number(process.argv[2] ?? 20_000);
const runs = Number(process.argv[3] ?? 7);
const budgetMs = 90_000;
const ROUTES = 1000;
const USER = 'x-queue-split-user';
const MEMBER = 'baggage:queue-split-user';

const now = () => process.hrtime.bigint();
const msSince = (t: bigint) => Number(now() - t) / 1e6;

function filter(input: FilterInput): RouteFilter {
  const result = parseFilter(input);
  if (!result.ok) throw new Error(`${JSON.stringify(input).slice(0, 200)}: ${JSON.stringify(result.errors)}`);
  return result.value;
}

function build(routes: readonly RouteEntry[]): RouteIndex {
  const result = RouteIndex.build(routes);
  if (!result.ok) throw new Error(`RouteIndex.build refused: ${JSON.stringify(result.errors.slice(0, 3))}`);
  return result.value;
}

// ---- messages ------------------------------------------------------------------------------

interface Message {
  readonly kind: string;
  readonly headers: ReadonlyMap<string, string>;
  readonly body: Uint8Array;
  /** The route it must reach (checked once before timing), or undefined. */
  readonly expected: string | undefined;
}

/** Headers every message carries besides the routing ones. */
const COMMON: [string, string][] = [
  ['content-type', 'application/json'],
  ['traceparent', '00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01'],
];

function jsonBody(customer: string | undefined, bytes: number): Uint8Array {
  const base = {
    orderId: 'order-1',
    customer: customer === undefined ? { name: 'n' } : { id: customer, name: 'n' },
    lines: [] as unknown[],
  };
  let text = JSON.stringify(base);
  for (let i = 0; text.length < bytes; i++) {
    base.lines.push({ sku: `SKU-${i % 113}`, qty: i % 5, price: (i * 13) % 997 });
    text = JSON.stringify(base);
  }
  return Buffer.from(text);
}

function message(
  kind: string,
  headers: [string, string][],
  expected: string | undefined,
  customer?: string,
): Message {
  return { kind, headers: new Map([...COMMON, ...headers]), body: jsonBody(customer, 200), expected };
}

/** Per-message nanoseconds of `index.match` over `messages`, a new view each time. */
function timeMatch(index: RouteIndex, messages: readonly Message[], count: number): number {
  let sink = 0;
  const t = now();
  for (let i = 0; i < count; i++) {
    const m = messages[i % messages.length]!;
    if (index.match(new MessageView(m.headers, m.body)) !== undefined) sink++;
  }
  const ns = Number(now() - t) / count;
  if (sink < 0) console.log(sink);
  return ns;
}

function checkAnswers(index: RouteIndex, messages: readonly Message[]): void {
  for (const m of messages) {
    const got = index.match(new MessageView(m.headers, m.body));
    if (got !== m.expected)
      throw new Error(
        `${m.kind} message ${JSON.stringify([...m.headers])} went to ${got}, not ${m.expected}`,
      );
  }
}

// ---- route sets ----------------------------------------------------------------------------

const equalityRoutes: RouteEntry[] = Array.from({ length: ROUTES }, (_, n) => ({
  routeId: `eq-${n}`,
  filter: filter({ [USER]: `user-${n}` }),
}));
const equalityMessages: Message[] = Array.from({ length: 1000 }, (_, i) => {
  const n = (i * 7919) % ROUTES;
  return i % 10 === 9
    ? message('miss', [[USER, `nobody-${n}`]], undefined)
    : message('hit', [[USER, `user-${n}`]], `eq-${n}`);
});

const KINDS = ['equality', 'in', 'prefix', 'regex', 'anyOf', 'baggage', 'body'] as const;
type Kind = (typeof KINDS)[number];

function mixedFilter(kind: Kind, n: number): RouteFilter {
  switch (kind) {
    case 'equality':
      return filter({ [USER]: `user-eq-${n}` });
    case 'in':
      return filter({ [USER]: { in: [`user-in-${n}-a`, `user-in-${n}-b`] } });
    case 'prefix':
      return filter({ [USER]: { prefix: `user-pfx-${n}-` } });
    case 'regex':
      return filter({ [USER]: { regex: `user-re-${n}-[0-9]{1,6}` } });
    case 'anyOf':
      return filter({
        anyOf: [
          { [USER]: `user-any-${n}` },
          { [USER]: { exists: false }, [MEMBER]: { prefix: `any-${n}-` } },
        ],
      });
    case 'baggage':
      return filter({ [USER]: { exists: false }, [MEMBER]: `bag-${n}` });
    case 'body':
      return filter({
        [USER]: { exists: false },
        [MEMBER]: { exists: false },
        'body:$.customer.id': `cust-${n}`,
      });
  }
}

const mixedRoutes: RouteEntry[] = Array.from({ length: ROUTES }, (_, i) => {
  const kind = KINDS[i % KINDS.length]!;
  const n = Math.floor(i / KINDS.length);
  return { routeId: `${kind}-${n}`, filter: mixedFilter(kind, n) };
});
const perKind = Math.floor(ROUTES / KINDS.length); // every kind has routes 0..perKind-1

function mixedMessage(kind: Kind | 'miss-header' | 'miss-none', i: number): Message {
  const n = (i * 7919) % perKind;
  const id = `${kind}-${n}`;
  const bag = (v: string): [string, string] => [
    'baggage',
    formatBaggage([
      ['queue-split-user', v],
      ['session', 's1'],
    ]),
  ];
  switch (kind) {
    case 'equality':
      return message(kind, [[USER, `user-eq-${n}`]], id);
    case 'in':
      return message(kind, [[USER, `user-in-${n}-${i % 2 ? 'a' : 'b'}`]], id);
    case 'prefix':
      return message(kind, [[USER, `user-pfx-${n}-session-${i}`]], id);
    case 'regex':
      return message(kind, [[USER, `user-re-${n}-${i % 1_000_000}`]], id);
    case 'anyOf':
      return message(kind, i % 2 ? [[USER, `user-any-${n}`]] : [bag(`any-${n}-x`)], id);
    case 'baggage':
      return message(kind, [bag(`bag-${n}`)], id);
    case 'body':
      return message(kind, [], id, `cust-${n}`);
    case 'miss-header':
      return message(kind, [[USER, `nobody-${n}`]], undefined);
    case 'miss-none':
      return message(kind, [bag(`nobody-${n}`)], undefined, `nobody-${n}`);
  }
}
const MESSAGE_KINDS = [...KINDS, 'miss-header', 'miss-none'] as const;
const mixedMessages = Array.from({ length: 900 }, (_, i) =>
  mixedMessage(MESSAGE_KINDS[i % MESSAGE_KINDS.length]!, i),
);
const mixedByKind = new Map(MESSAGE_KINDS.map((k) => [k, mixedMessages.filter((m) => m.kind === k)]));

// ---- body cost -----------------------------------------------------------------------------

const bodyIndex = build([{ routeId: 'body', filter: filter({ 'body:$.customer.id': 'cust-1' }) }]);
const headerIndex = build([{ routeId: 'header', filter: filter({ [USER]: 'alice' }) }]);
const BODY_SIZES = [1024, 65536] as const;
const bodyMessages = new Map(
  BODY_SIZES.map((size) => {
    const body = jsonBody('cust-1', size);
    return [
      size,
      [
        {
          kind: `body ${size}`,
          headers: new Map([...COMMON, [USER, 'alice']]),
          body,
          expected: undefined,
        } satisfies Message,
      ],
    ];
  }),
);

// ---- heavy overlap pairs -------------------------------------------------------------------

const ODD_A = 'b*a(?:b*ab*a)*b*';
const EVEN_A = '(?:b*ab*a)*b*';
const ODD_B = 'a*b(?:a*ba*b)*a*';
const EVEN_B = '(?:a*ba*b)*a*';
const sets = Array.from({ length: 64 }, (_, i) => `v${i}`);
const heavyPairs: [string, FilterInput, FilterInput][] = [
  [
    '2 clauses x 64-state key, length mod 32/31 vs letter parity (disjoint)',
    {
      anyOf: [
        { u: { regex: '(?:[ab]{32})*', notRegex: ODD_A } },
        { u: { regex: '(?:[ab]{32})*', notRegex: ODD_B } },
      ],
    },
    {
      anyOf: [
        { u: { regex: '(?:[ab]{31})*', notRegex: EVEN_A } },
        { u: { regex: '(?:[ab]{31})*', notRegex: EVEN_B } },
      ],
    },
  ],
  [
    '2 clauses x 64-state key, even vs odd length residues (disjoint)',
    { anyOf: [{ u: { regex: '(?:[a-z]{64})*' } }, { u: { regex: '[a-z]{2}(?:[a-z]{62})*' } }] },
    {
      anyOf: [
        { u: { regex: '[a-z](?:[a-z]{2})*', notRegex: '(?:[a-z]{31})*' } },
        { u: { regex: '[a-z]{3}(?:[a-z]{62})*' } },
      ],
    },
  ],
  [
    '8 x 7 clauses, 64-value sets + 16-state keys (disjoint)',
    {
      anyOf: Array.from({ length: 8 }, (_, i) => ({
        t: { in: sets },
        u: { regex: `[ab]{${2 * i}}(?:[ab]{16})*` },
      })),
    },
    {
      anyOf: Array.from({ length: 7 }, (_, j) => ({
        t: { notIn: ['w'] },
        u: { regex: `[ab]{${2 * j + 1}}(?:[ab]{14})*` },
      })),
    },
  ],
  [
    '32 keys x 4 states, disjoint on the last key',
    Object.fromEntries(
      Array.from({ length: 32 }, (_, k) => [
        `k${k}`,
        { regex: k === 31 ? '(?:[ab]{2}){1,2}' : '(?:[ab]{3})*' },
      ]),
    ),
    Object.fromEntries(
      Array.from({ length: 32 }, (_, k) => [
        `k${k}`,
        { regex: k === 31 ? '[ab](?:[ab]{2}){0,2}' : '(?:[ab]{2})*' },
      ]),
    ),
  ],
  [
    '1 x 64-state keys, overlap at a 3906-character witness',
    { u: { regex: '(?:[a-z]{63})+' } },
    { u: { regex: '(?:[a-z]{62})+' } },
  ],
  [
    '2 clauses x 64 states, long common values, dependent keys (undecided)',
    {
      anyOf: [
        { u: { regex: '[ab]{2}(?:[ab]{62})*' }, baggage: { prefix: 'x' } },
        { u: { regex: '[ab]{4}(?:[ab]{62})*' }, baggage: { prefix: 'y' } },
      ],
    },
    {
      anyOf: [
        { u: { regex: '[ab](?:[ab]{61})*' }, [MEMBER]: { exists: true } },
        { u: { regex: '[ab]{3}(?:[ab]{61})*' }, [MEMBER]: { exists: true } },
      ],
    },
  ],
];

// ---- run -----------------------------------------------------------------------------------

function main(): void {
  const recorder = benchRun('filter-match');
  const deadline = Date.now() + budgetMs;

  // (iv) builds, the first one compiling every filter of its set.
  let t = now();
  const equalityIndex = build(equalityRoutes);
  const buildEqualityFirst = msSince(t);
  t = now();
  const mixedIndex = build(mixedRoutes);
  const buildMixedFirst = msSince(t);
  checkAnswers(equalityIndex, equalityMessages);
  checkAnswers(mixedIndex, mixedMessages);
  const buildEquality: number[] = [];
  const buildMixed: number[] = [];

  // (i)–(iii), runs interleaved so drift on a shared machine hits each alike.
  const baseline: number[] = [];
  const mixed: number[] = [];
  const byKind = new Map<string, number[]>(MESSAGE_KINDS.map((k) => [k, []]));
  const headersOnly: number[] = [];
  const bodyCost = new Map<number, number[]>(BODY_SIZES.map((s) => [s, []]));
  const headersWithBody = new Map<number, number[]>(BODY_SIZES.map((s) => [s, []]));
  timeMatch(equalityIndex, equalityMessages, perRun); // warm-up
  timeMatch(mixedIndex, mixedMessages, perRun);
  for (let run = 0; run < runs && Date.now() < deadline; run++) {
    baseline.push(timeMatch(equalityIndex, equalityMessages, perRun));
    mixed.push(timeMatch(mixedIndex, mixedMessages, perRun));
    for (const [kind, list] of mixedByKind)
      byKind.get(kind)!.push(timeMatch(mixedIndex, list, Math.ceil(perRun / 4)));
    headersOnly.push(timeMatch(headerIndex, equalityMessages, perRun));
    for (const size of BODY_SIZES) {
      const list = bodyMessages.get(size)!;
      const n = Math.ceil((perRun * 1024) / size / 4);
      bodyCost.get(size)!.push(timeMatch(bodyIndex, list, n));
      headersWithBody.get(size)!.push(timeMatch(headerIndex, list, n));
    }
    t = now();
    build(equalityRoutes);
    buildEquality.push(msSince(t));
    t = now();
    build(mixedRoutes);
    buildMixed.push(msSince(t));
  }

  // (v) heavy pairs: parse (compiles) first, then the first decision and the warm ones.
  const pairRows = heavyPairs.map(([name, ia, ib]) => {
    let tp = now();
    const a = filter(ia);
    const b = filter(ib);
    const parseMs = msSince(tp);
    tp = now();
    const kind = decideOverlap(a, b).kind;
    const firstMs = msSince(tp);
    const times: number[] = [];
    for (let i = 0; i < 15; i++) {
      tp = now();
      decideOverlap(i % 2 ? b : a, i % 2 ? a : b);
      times.push(msSince(tp));
    }
    return {
      name,
      kind,
      states: [compileFilter(a).states, compileFilter(b).states],
      parseMs,
      firstMs,
      medianMs: median(times),
      maxMs: Math.max(...times),
    };
  });

  // ---- report ------------------------------------------------------------------------------
  const base = median(baseline);
  const mix = median(mixed);
  const ns = (x: number) => `${x.toFixed(0).padStart(9)} ns`;
  const ms = (x: number) => `${x.toFixed(1).padStart(8)} ms`;
  console.log(
    `routes: ${ROUTES} per set; messages per run: ${perRun}; runs: ${baseline.length}; node ${process.version}`,
  );
  console.log('per message (new MessageView + RouteIndex.match)       median        vs baseline');
  console.log(`(i)   1,000 equality routes (baseline)              ${ns(base)}   1.00`);
  console.log(`(ii)  1,000 mixed routes, all messages              ${ns(mix)}   ${(mix / base).toFixed(2)}`);
  for (const [kind, list] of byKind)
    console.log(
      `        messages for ${kind.padEnd(30)}${ns(median(list))}   ${(median(list) / base).toFixed(2)}`,
    );
  const hdr = median(headersOnly);
  console.log(`(iii) 1 header route, headers-only message          ${ns(hdr)}   ${(hdr / base).toFixed(2)}`);
  for (const size of BODY_SIZES) {
    const b = median(bodyCost.get(size)!);
    const h = median(headersWithBody.get(size)!);
    console.log(
      `      1 header route, ${String(size / 1024).padStart(2)} KiB body (not read)      ${ns(h)}   ${(h / base).toFixed(2)}`,
    );
    console.log(
      `      1 body-field route, ${String(size / 1024).padStart(2)} KiB JSON body         ${ns(b)}   ${(b / base).toFixed(2)}  (${(b / hdr).toFixed(0)}x headers-only)`,
    );
  }
  console.log('(iv)  RouteIndex.build, 1,000 routes                 first        median of later');
  console.log(
    `      equality                                  ${ms(buildEqualityFirst)}   ${ms(median(buildEquality))}`,
  );
  console.log(
    `      mixed                                     ${ms(buildMixedFirst)}   ${ms(median(buildMixed))}`,
  );
  console.log(
    '(v)   decideOverlap, heavy pairs (states a/b)     answer      parse    first call   median     max',
  );
  for (const r of pairRows)
    console.log(
      `      ${r.name.slice(0, 62).padEnd(62)} ${String(r.states.join('/')).padStart(7)} ${r.kind.padEnd(9)} ${ms(r.parseMs)} ${ms(r.firstMs)} ${ms(r.medianMs)} ${ms(r.maxMs)}`,
    );
  const warmMax = Math.max(...pairRows.map((r) => r.maxMs));
  const firstMax = Math.max(...pairRows.map((r) => r.firstMs));
  const warmMedian = median(pairRows.map((r) => r.medianMs));
  console.log(
    `      over the pairs: median of medians ${warmMedian.toFixed(1)} ms, max ${warmMax.toFixed(1)} ms (first calls: max ${firstMax.toFixed(1)} ms); bound 50 ms`,
  );
  const round = (x: number, d = 1) => Number(x.toFixed(d));
  recorder.finish({
    bench: 'filter-match',
    node: process.version,
    routes: ROUTES,
    perRun,
    runs: baseline.length,
    baselineNsPerMessage: round(base),
    mixedNsPerMessage: round(mix),
    mixedVsBaseline: round(mix / base, 2),
    mixedNsByMessageKind: Object.fromEntries([...byKind].map(([k, v]) => [k, round(median(v))])),
    headersOnlyNsPerMessage: round(hdr),
    bodyFieldNsPerMessage: Object.fromEntries(BODY_SIZES.map((s) => [s, round(median(bodyCost.get(s)!))])),
    headerRouteWithBodyNsPerMessage: Object.fromEntries(
      BODY_SIZES.map((s) => [s, round(median(headersWithBody.get(s)!))]),
    ),
    buildMs: {
      equality: { first: round(buildEqualityFirst), median: round(median(buildEquality)) },
      mixed: { first: round(buildMixedFirst), median: round(median(buildMixed)) },
    },
    overlap: {
      boundMs: 50,
      medianOfMediansMs: round(warmMedian, 2),
      maxMs: round(warmMax, 2),
      firstCallMaxMs: round(firstMax, 2),
      pairs: pairRows.map((r) => ({
        ...r,
        parseMs: round(r.parseMs, 2),
        firstMs: round(r.firstMs, 2),
        medianMs: round(r.medianMs, 2),
        maxMs: round(r.maxMs, 2),
      })),
    },
  });
}

try {
  main();
  process.exit(0);
} catch (err: unknown) {
  console.error(err);
  process.exit(1);
}
