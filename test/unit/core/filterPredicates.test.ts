// The predicate filter engine (core/filter/*): the forms parseFilter reads and the canonical form
// it returns, the text form both ways, what each predicate matches, the regex dialect and its
// state caps, refused contradictions, the bounded body parse, and the overlap errors and their
// fixes (core/routeOverlap.ts).
import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import {
  compileFilter,
  decideOverlap,
  describeCause,
  formatFilter,
  matches,
  MAX_BODY_BYTES,
  MAX_BODY_DEPTH,
  MAX_FILTER_CLAUSES,
  MAX_FILTER_STATES,
  MAX_KEY_STATES,
  MessageView,
  parseFilter,
  sameFilter,
  type FilterInput,
  type RouteFilter,
} from '../../../core/filter';
import { overlapErrors } from '../../../core/routeOverlap';

function parsed(input: FilterInput): RouteFilter {
  const result = parseFilter(input);
  assert.ok(result.ok, JSON.stringify(result));
  return result.value;
}

function refused(input: FilterInput): string {
  const result = parseFilter(input);
  assert.ok(!result.ok, `accepted: ${JSON.stringify(result)}`);
  return result.errors.map((e) => `${e.path}: ${e.problem} Fix: ${e.fix}`).join('\n');
}

const view = (headers: Record<string, string>, body?: string | Uint8Array) =>
  new MessageView(new Map(Object.entries(headers)), body);

describe('parseFilter: forms', () => {
  const expected = {
    anyOf: [
      { 'baggage:user': { equals: 'alice' } },
      { tenant: { prefix: 'alice-' }, user: { in: ['a', 'b'] } },
    ],
  };

  test('the text form, the map form, anyOf and JSON text all read to one canonical filter', () => {
    assert.deepEqual(parsed('tenant^=alice-,user in (a, b) or baggage:user=alice'), expected);
    assert.deepEqual(
      parsed({
        anyOf: [{ user: { in: ['b', 'a', 'b'] }, tenant: { prefix: 'alice-' } }, { 'baggage:user': 'alice' }],
      }),
      expected,
    );
    assert.deepEqual(
      parsed({ anyOf: ['baggage:user=alice', ['user in (b, a)', 'tenant^=alice-']] }),
      expected,
    );
    assert.deepEqual(parsed(JSON.stringify(expected)), expected);
    assert.deepEqual(
      parsed(
        `  ${JSON.stringify({ anyOf: [{ 'baggage:user': 'alice' }, { tenant: { prefix: 'alice-' }, user: { in: ['a', 'b'] } }] })}`,
      ),
      expected,
    );
  });

  test('every operator of the text form', () => {
    assert.deepEqual(parsed('a=1,b!=2,c^=3,d!^=4,e~=5+,f!~=6*,g in (7, 8),h notin (9),has(i),!has(j)'), {
      anyOf: [
        {
          a: { equals: '1' },
          b: { notEquals: '2' },
          c: { prefix: '3' },
          d: { notPrefix: '4' },
          e: { regex: '5+' },
          f: { notRegex: '6*' },
          g: { in: ['7', '8'] },
          h: { notIn: ['9'] },
          i: { exists: true },
          j: { exists: false },
        },
      ],
    });
  });

  test('terms on one key merge into one predicate', () => {
    assert.deepEqual(parsed('tenant^=alice-,tenant!=alice-admin,tenant~=[a-z-]+'), {
      anyOf: [{ tenant: { prefix: 'alice-', regex: '[a-z-]+', notEquals: 'alice-admin' } }],
    });
  });

  test('JSON text that is not JSON is an error naming both forms', () => {
    assert.match(refused('{"anyOf": ['), /not JSON/);
  });

  test('bad predicate objects are errors with the field named', () => {
    assert.match(refused({ u: { equal: 'a' } }), /filter\.u\.equal: is not a predicate field/);
    assert.match(refused({ u: { in: [] } }), /has 0 values/);
    assert.match(refused({ u: { exists: 'yes' } }), /must be true or false/);
    assert.match(refused({ u: {} }), /empty predicate/);
    assert.match(refused({ anyOf: [] }), /is empty, so nothing would match/);
    assert.match(refused({ anyOf: [{ u: 'a' }], v: 'b' }), /beside "anyOf"/);
    assert.match(refused({ anyOf: ['u=a or v=b'] }), /" or " inside an anyOf clause/);
    assert.match(
      refused({ anyOf: Array.from({ length: MAX_FILTER_CLAUSES + 1 }, (_, i) => ({ u: `v${i}` })) }),
      /at most 8 are allowed/,
    );
  });

  test('keys: baggage members must be tokens, body paths start with $ and name fields', () => {
    assert.match(refused('baggage:a b=1'), /not a W3C baggage key/);
    assert.match(refused('body:x=1'), /does not start with "\$"/);
    assert.match(refused('body:$=1'), /names the whole body/);
    assert.match(refused('body:$.a..b=1'), /has the field name ""/);
    assert.deepEqual(parsed('body:$.items[2].id=7'), { 'body:$.items[2].id': '7' });
  });

  test('a body field has one spelling: an index with a leading zero is refused', () => {
    // `$.a[00]` and `$.a[0]` would name the same field under two keys: a clause could require two
    // values of one field without being refused, and the overlap decision would treat the two as
    // independent keys.
    assert.match(refused('body:$.a[00]=x'), /body path/);
    assert.match(refused({ 'body:$.a[0]': 'x', 'body:$.a[01]': 'y' }), /body path/);
    assert.deepEqual(parsed('body:$.a[0]=x,body:$.b[10]=y'), { 'body:$.a[0]': 'x', 'body:$.b[10]': 'y' });
  });

  test('filters on dependent keys in one clause are refused', () => {
    assert.match(refused('baggage=x,baggage:user=alice'), /read the same part of the message/);
    assert.match(refused('body:$.order=x,body:$.order.id=1'), /read the same part of the message/);
  });
});

describe('parseFilter: the canonical form', () => {
  test('an equality-only single clause stays {key: value}, keys sorted', () => {
    const filter = parsed({ zeta: 'z', alpha: { equals: 'a' } });
    assert.deepEqual(filter, { zeta: 'z', alpha: 'a' });
    assert.deepEqual(Object.keys(filter), ['alpha', 'zeta']);
    assert.deepEqual(parsed('zeta=z,alpha=a'), filter);
    assert.deepEqual(parsed(['alpha=a', 'zeta=z']), filter);
  });

  test('anything else is anyOf, with fields in canonical order, sets sorted and deduplicated, clauses sorted and deduplicated', () => {
    assert.deepEqual(parsed({ u: { in: ['b', 'a', 'a'] } }), { anyOf: [{ u: { in: ['a', 'b'] } }] });
    assert.deepEqual(parsed('u=a or u=a'), { u: 'a' });
    assert.deepEqual(parsed('v=b or u=a'), { anyOf: [{ u: { equals: 'a' } }, { v: { equals: 'b' } }] });
    const predicate = parsed({ u: { notPrefix: 'a', notEquals: 'x', exists: true } }) as {
      anyOf: [Record<string, object>];
    };
    assert.deepEqual(Object.keys(predicate.anyOf[0].u!), ['exists', 'notEquals', 'notPrefix']);
  });

  test('exists: true beside a value-pinning predicate is dropped (it adds nothing)', () => {
    assert.deepEqual(parsed({ u: { equals: 'a', exists: true } }), { u: 'a' });
    assert.deepEqual(parsed({ u: { prefix: 'a', exists: true } }), { anyOf: [{ u: { prefix: 'a' } }] });
    assert.deepEqual(parsed({ u: { notEquals: 'a', exists: true } }), {
      anyOf: [{ u: { exists: true, notEquals: 'a' } }],
    });
  });

  test('an empty clause anywhere is the empty filter (every message)', () => {
    assert.deepEqual(parsed(''), {});
    assert.deepEqual(parsed({ anyOf: [{ u: 'a' }, {}] }), {});
  });
});

describe('formatFilter', () => {
  const cases: [FilterInput, string][] = [
    [{ u: 'a', t: 'b' }, 't=b,u=a'],
    [
      'tenant^=alice-,user in (a, b) or baggage:user=alice',
      'baggage:user=alice or tenant^=alice-,user in (a, b)',
    ],
    [{ u: { regex: '(a|b){2}' } }, 'u~="(a|b){2}"'],
    [{ u: { regex: 'a{1,2}' } }, 'u~="a{1,2}"'],
    [{ u: { in: ['', 'x,y', 'p q', ' pad'] } }, 'u in ("", " pad", p q, "x,y")'],
    [{ u: 'a or b' }, 'u="a or b"'],
    [{ u: 'say "hi"\\' }, 'u="say \\"hi\\"\\\\"'],
    [{ u: 'a=b' }, 'u=a=b'],
    [{ u: { notEquals: '=x' } }, 'u!==x'],
    [{ u: 'tab\there' }, 'u="tab\\there"'],
    [{ u: { exists: true } }, 'has(u)'],
    [{ u: { exists: false }, 'body:$.x': { notIn: ['1', '2'] } }, 'body:$.x notin (1, 2),!has(u)'],
  ];
  for (const [input, text] of cases) {
    test(`${JSON.stringify(input)} is written ${text} and reads back`, () => {
      const filter = parsed(input);
      assert.equal(formatFilter(filter), text);
      assert.deepEqual(parsed(formatFilter(filter)), filter);
    });
  }

  test('the empty filter is ""', () => {
    assert.equal(formatFilter({}), '');
  });
});

describe('predicates', () => {
  // [predicate, [value (undefined: absent), matches?][]]
  const table: [Record<string, unknown>, [string | undefined, boolean][]][] = [
    [
      { equals: 'alice' },
      [
        ['alice', true],
        ['Alice', false],
        ['alice ', false],
        ['', false],
        [undefined, false],
      ],
    ],
    [
      { equals: '' },
      [
        ['', true],
        [' ', false],
        [undefined, false],
      ],
    ],
    [
      { in: ['a', 'b'] },
      [
        ['a', true],
        ['b', true],
        ['c', false],
        ['ab', false],
        [undefined, false],
      ],
    ],
    [
      { prefix: 'alice-' },
      [
        ['alice-', true],
        ['alice-x', true],
        ['alice', false],
        ['xalice-', false],
        [undefined, false],
      ],
    ],
    [
      { prefix: '' },
      [
        ['', true],
        ['x', true],
        [undefined, false],
      ],
    ],
    [
      { regex: 'a+' },
      [
        ['a', true],
        ['aaa', true],
        ['', false],
        ['ab', false],
        ['ba', false],
        [undefined, false],
      ],
    ],
    [
      { regex: '^ord-[0-9]{3}$' },
      [
        ['ord-123', true],
        ['ord-12', false],
        ['xord-123', false],
        ['ord-1234', false],
      ],
    ],
    [
      { regex: '.' },
      [
        ['\n', true],
        ['😀', true],
        ['ab', false],
      ],
    ], // flags s and u: any one code point
    [
      { regex: 'a|b' },
      [
        ['a', true],
        ['b', true],
        ['ab', false],
      ],
    ],
    [
      { exists: true },
      [
        ['', true],
        ['x', true],
        [undefined, false],
      ],
    ],
    [
      { exists: false },
      [
        ['', false],
        ['x', false],
        [undefined, true],
      ],
    ],
    [
      { notEquals: 'bob' },
      [
        ['bob', false],
        ['bobby', true],
        ['', true],
        [undefined, true],
      ],
    ],
    [
      { notIn: ['a', 'b'] },
      [
        ['a', false],
        ['b', false],
        ['c', true],
        [undefined, true],
      ],
    ],
    [
      { notPrefix: 'test-' },
      [
        ['test-1', false],
        ['test-', false],
        ['test', true],
        ['x', true],
        [undefined, true],
      ],
    ],
    [
      { notRegex: '[0-9]+' },
      [
        ['123', false],
        ['12a', true],
        ['', true],
        [undefined, true],
      ],
    ],
    [
      { notEquals: 'bob', exists: true },
      [
        ['bob', false],
        ['x', true],
        [undefined, false],
      ],
    ],
    [
      { in: ['a', 'b', 'c'], notIn: ['b'] },
      [
        ['a', true],
        ['b', false],
        ['c', true],
      ],
    ],
    [
      { prefix: 'a', notPrefix: 'ab', regex: '[a-c]*' },
      [
        ['a', true],
        ['ac', true],
        ['ab', false],
        ['abc', false],
        ['ad', false],
      ],
    ],
  ];
  for (const [predicate, rows] of table) {
    test(JSON.stringify(predicate), () => {
      for (const key of ['u', 'baggage:u', 'body:$.u']) {
        const filter = parsed({ [key]: predicate });
        for (const [value, expected] of rows) {
          const headers: Record<string, string> = {};
          const fields: Record<string, string> = {};
          if (value !== undefined && key === 'u') headers.u = value;
          if (value !== undefined && key === 'baggage:u') headers.baggage = `u=${encodeURIComponent(value)}`;
          if (value !== undefined && key === 'body:$.u') fields.u = value;
          assert.equal(
            matches(filter, view(headers, JSON.stringify(fields))),
            expected,
            `${key} ${JSON.stringify(predicate)} on ${JSON.stringify(value)}`,
          );
        }
      }
    });
  }

  test('a clause is an AND over keys, a filter an OR over clauses', () => {
    const filter = parsed('tenant^=alice-,user in (a, b) or baggage:user=alice');
    assert.ok(matches(filter, view({ tenant: 'alice-1', user: 'a' })));
    assert.ok(!matches(filter, view({ tenant: 'alice-1', user: 'c' })));
    assert.ok(!matches(filter, view({ user: 'a' })));
    assert.ok(matches(filter, view({ baggage: 'user=alice' })));
    assert.ok(matches(filter, view({ tenant: 'bob', baggage: 'user=alice' })));
  });
});

describe('the regex dialect', () => {
  test('back-references, look-around and word boundaries are refused, naming the construct', () => {
    assert.match(
      refused({ u: { regex: '(a)\\1' } }),
      /uses the back-reference \\1, which is outside the filter dialect/,
    );
    assert.match(refused({ u: { regex: '(?<n>a)\\k<n>' } }), /back-reference \\k<n>/);
    assert.match(refused({ u: { regex: '(?=a)a' } }), /uses the look-around \(\?=a\)/);
    assert.match(refused({ u: { regex: '(?!a)b' } }), /look-around \(\?!a\)/);
    assert.match(refused({ u: { notRegex: '(?<=a)b' } }), /look-around \(\?<=a\)/);
    assert.match(refused({ u: { regex: '\\ba' } }), /uses the word boundary \\b/);
    assert.match(refused({ u: { regex: 'a\\B' } }), /word boundary \\B/);
    assert.match(refused({ u: { regex: 'a^b' } }), /the anchor \^ inside the pattern/);
    assert.match(refused('u~=a|b$|c'), /the anchor \$ inside the pattern/);
  });

  test('invalid syntax and over-long regexes are refused', () => {
    assert.match(refused({ u: { regex: '(a' } }), /is not valid/);
    assert.match(refused({ u: { regex: 'a'.repeat(257) } }), /longer than 256 characters/);
  });

  test('a leading ^ and a trailing $ are accepted and change nothing; an escaped $ is a character', () => {
    const anchored = parsed({ u: { regex: '^a+$' } });
    assert.ok(matches(anchored, view({ u: 'aa' })));
    assert.ok(!matches(anchored, view({ u: 'aab' })));
    const dollar = parsed({ u: { regex: 'a\\$' } });
    assert.ok(matches(dollar, view({ u: 'a$' })));
    assert.ok(!matches(dollar, view({ u: 'a' })));
  });

  test(`a regex needing more than ${MAX_KEY_STATES} automaton states is refused with the count or "thousands"`, () => {
    assert.match(
      refused({ u: { regex: '(a|b)*a(a|b){12}' } }),
      /needs thousands of automaton states; at most 64 are allowed/,
    );
    assert.match(refused({ u: { regex: '(?:[a-z]{64})+' } }), /needs 65 automaton states/);
    assert.equal(compileFilter(parsed({ u: { regex: '(?:[a-z]{63})+' } })).states, MAX_KEY_STATES);
  });

  test(`a key's predicates together, and a whole filter, have state caps too`, () => {
    assert.match(
      refused({ u: { regex: '(?:[a-z]{40})+', notRegex: '(?:[a-z]{30})+' } }),
      /predicates on "u" together need 120 automaton states/,
    );
    const clause = (i: number) => ({ [`k${i}`]: { regex: '(?:[a-z]{39})+' } }); // 40 states each
    assert.match(
      refused({ anyOf: [0, 1, 2, 3].map(clause) }),
      /needs 160 automaton states in all; at most 128/,
    );
  });
});

describe('contradictions are refused ("could never match")', () => {
  const cases: [string, FilterInput][] = [
    ['equals and notEquals', 'u=a,u!=a'],
    ['two values', 'u=a,u=b'],
    ['equals outside a prefix', { u: { equals: 'a', prefix: 'b' } }],
    ['in minus notIn', { u: { in: ['a', 'b'], notIn: ['b', 'a'] } }],
    ['exists false with a value', { u: { exists: false, equals: 'a' } }],
    ['exists false with a prefix', { u: { exists: false, prefix: '' } }],
    ['a prefix under a notPrefix', { u: { prefix: 'ab', notPrefix: 'a' } }],
    ['a regex inside a notRegex', { u: { regex: 'a+', notRegex: 'a*' } }],
    ['disjoint regexes', { 'body:$.x': { regex: '[0-9]+', notRegex: '.*' } }],
    ['in outside a regex', { 'baggage:m': { in: ['x', 'y'], regex: '[ab]' } }],
  ];
  for (const [name, input] of cases) {
    test(name, () => assert.match(refused(input), /could never match/));
  }

  test('only the contradicting clause is named', () => {
    const result = parseFilter('u=a or v^=x,v!^=x');
    assert.ok(!result.ok);
    assert.equal(result.errors.length, 1);
    assert.equal(result.errors[0]!.path, 'filter.anyOf[1].v');
  });
});

describe('body fields', () => {
  const x = parsed('body:$.x=a');
  const notX = parsed('body:$.x!=a');
  const absentX = parsed('!has(body:$.x)');
  const all = [x, notX, absentX];
  const matching = (body: string | Uint8Array | undefined) => all.map((f) => matches(f, view({}, body)));

  test('a readable JSON body: equals, its negation and absence read the field', () => {
    assert.deepEqual(matching('{"x":"a"}'), [true, false, false]);
    assert.deepEqual(matching('{"x":"b"}'), [false, true, false]);
    assert.deepEqual(matching('{}'), [false, true, true]);
    assert.deepEqual(matching(Buffer.from('{"x":"a"}')), [true, false, false]);
    assert.deepEqual(matching(Buffer.from('\uFEFF{"x":"a"}')), [true, false, false]); // a UTF-8 BOM is skipped
  });

  test('an unreadable body satisfies no body predicate, not even negated ones or !has', () => {
    const deep = (n: number) => `{"y":${'['.repeat(n - 1)}${']'.repeat(n - 1)}}`;
    const unreadable: [string, string | Uint8Array | undefined][] = [
      ['no body', undefined],
      ['an empty body', ''],
      ['not JSON', 'x=a'],
      ['truncated JSON', '{"x":"a"'],
      ['not UTF-8', Uint8Array.from([0x7b, 0x22, 0x78, 0x22, 0x3a, 0x22, 0xff, 0x22, 0x7d])],
      [`over ${MAX_BODY_BYTES} bytes`, Buffer.from(`{"x":"b","pad":"${'p'.repeat(MAX_BODY_BYTES)}"}`)],
      [`nested deeper than ${MAX_BODY_DEPTH}`, deep(MAX_BODY_DEPTH + 1)],
    ];
    for (const [name, body] of unreadable) assert.deepEqual(matching(body), [false, false, false], name);
    // The bounds themselves are readable.
    const exact = `{"x":"b","pad":"${'p'.repeat(MAX_BODY_BYTES - 18)}"}`;
    assert.equal(Buffer.byteLength(exact), MAX_BODY_BYTES);
    assert.deepEqual(matching(Buffer.from(exact)), [false, true, false]);
    assert.deepEqual(matching(deep(MAX_BODY_DEPTH)), [false, true, true]);
    // Brackets inside strings are not nesting.
    assert.deepEqual(matching(`{"x":"a","s":"${'['.repeat(MAX_BODY_DEPTH * 2)}"}`), [true, false, false]);
  });

  test('the byte bound holds for a body given as text as for the same body as bytes', () => {
    const text = `{"x":"a","pad":"${'日'.repeat(Math.ceil(MAX_BODY_BYTES / 3))}"}`; // fewer characters than bytes
    assert.ok(text.length < MAX_BODY_BYTES && Buffer.byteLength(text) > MAX_BODY_BYTES);
    assert.deepEqual(matching(Buffer.from(text)), [false, false, false]);
    assert.deepEqual(matching(text), [false, false, false]);
  });

  test('JSON that is not an object is readable, with every field absent', () => {
    for (const body of ['null', '5', '"x"', '[1]', 'true'])
      assert.deepEqual(matching(body), [false, true, true], body);
  });

  test('numbers read in their shortest JSON form, booleans as true/false; null, objects and arrays are absent', () => {
    const read = (body: string, text: string) => matches(parsed({ 'body:$.v': text }), view({}, body));
    assert.ok(read('{"v":1.50}', '1.5'));
    assert.ok(read('{"v":1e3}', '1000'));
    assert.ok(read('{"v":-0.0}', '0'));
    assert.ok(read('{"v":1e21}', '1e+21'));
    assert.ok(read('{"v":true}', 'true'));
    assert.ok(read('{"v":false}', 'false'));
    assert.ok(read('{"v":"1.50"}', '1.50'));
    assert.ok(!read('{"v":1.50}', '1.50'));
    const absent = parsed('!has(body:$.v)');
    for (const body of ['{"v":null}', '{"v":{}}', '{"v":[1]}', '{"w":1}'])
      assert.ok(matches(absent, view({}, body)), body);
  });

  test('paths walk objects and arrays', () => {
    const filter = parsed('body:$.order.items[1].sku^=SKU-');
    assert.ok(matches(filter, view({}, '{"order":{"items":[{"sku":"x"},{"sku":"SKU-9"}]}}')));
    assert.ok(!matches(filter, view({}, '{"order":{"items":[{"sku":"SKU-9"}]}}')));
    assert.ok(!matches(filter, view({}, '{"order":{"items":{"1":{"sku":"SKU-9"}}}}'))); // an object is not an array
    assert.ok(!matches(filter, view({}, '{"order":[{"items":[0,{"sku":"SKU-9"}]}]}')));
  });
});

describe('overlap errors (core/routeOverlap.ts)', () => {
  test('name both routes, a witness message, and a fix that adds the negation of their predicate', () => {
    const routes = [
      { routeId: 'alice', filter: parsed('tenant^=alice-') },
      { routeId: 'bob', filter: parsed('user=bob') },
    ];
    const errors = overlapErrors(routes);
    assert.equal(errors.length, 1);
    const [error] = errors;
    assert.equal(error!.path, 'routes[1].filter');
    assert.match(
      error!.problem,
      /route "bob" with filter "user=bob" overlaps route "alice" with filter "tenant\^=alice-"/,
    );
    assert.match(
      error!.problem,
      /a message with headers (tenant="alice-", user="bob"|user="bob", tenant="alice-") would match both/,
    );
    assert.match(error!.fix, /^Add tenant!\^=alice- to route "bob", so that no message can match both\.$/);
    // The fix works.
    const fixed = parsed('user=bob,tenant!^=alice-');
    assert.equal(decideOverlap(fixed, routes[0]!.filter).kind, 'disjoint');
    assert.deepEqual(overlapErrors([routes[0]!, { routeId: 'bob', filter: fixed }]), []);
  });

  test('the witness shows the body when a filter reads it, and fixes name the other negations', () => {
    const [error] = overlapErrors([
      { routeId: 'a', filter: parsed('body:$.customer.id in (c1, c2)') },
      { routeId: 'b', filter: parsed('baggage:user~=[a-z]+ or u=x') },
    ]);
    assert.match(
      error!.problem,
      /headers baggage="user=a" and body \{"customer":\{"id":"c1"\}\} would match both/,
    );
    assert.match(
      error!.fix,
      /^Add body:\$\.customer\.id notin \(c1, c2\) to route "b" \(to each of its alternatives\)/,
    );
    const [notEquals] = overlapErrors([
      { routeId: 'a', filter: parsed('u!=x') },
      { routeId: 'b', filter: parsed('v=1') },
    ]);
    assert.match(notEquals!.fix, /^Add u=x to route "b"/);
  });

  test('an equality filter that pins a shared key differently is disjoint; different keys overlap', () => {
    assert.deepEqual(
      overlapErrors([
        { routeId: 'a', filter: { u: 'a' } },
        { routeId: 'b', filter: { u: 'b' } },
      ]),
      [],
    );
    const [error] = overlapErrors([
      { routeId: 'a', filter: { u: 'a' } },
      { routeId: 'b', filter: { v: 'b' } },
    ]);
    assert.match(error!.fix, /Add u=<a value other than "a"> to route "b"/);
  });

  test('undecided: keys reading the same part of a message are explained and treated as an overlap', () => {
    const raw = parsed('baggage~=".*user=alice.*"');
    const member = parsed('baggage:user=bob');
    const decision = decideOverlap(raw, member);
    assert.equal(decision.kind, 'undecided');
    assert.equal(decideOverlap(member, raw).kind, 'undecided');
    const [error] = overlapErrors([
      { routeId: 'raw', filter: raw },
      { routeId: 'member', filter: member },
    ]);
    assert.match(error!.problem, /route "member" with filter "baggage:user=bob" may overlap route "raw"/);
    assert.match(
      error!.problem,
      /"baggage:user" and the other "baggage", which are parts of the same baggage header; whether one message can satisfy both is not decided exactly, so it is treated as an overlap/,
    );
    assert.match(error!.fix, /^No term added to route/);

    // A body field and its own sub-field: disjoint in fact (a string is not an object), but undecided.
    const body = decideOverlap(parsed('body:$.order=x'), parsed('body:$.order.id=1'));
    assert.equal(body.kind, 'undecided');
    assert.deepEqual(body.kind === 'undecided' ? body.cause : undefined, {
      kind: 'sharedPart',
      keys: ['body:$.order', 'body:$.order.id'],
      part: 'body',
    });
    assert.match(body.kind === 'undecided' ? describeCause(body.cause) : '', /parts of the same body field/);
  });

  test('independent keys beside dependent ones still decide: a pinned difference is disjoint', () => {
    assert.equal(decideOverlap(parsed('u=a,baggage~=.*'), parsed('u=b,baggage:m=x')).kind, 'disjoint');
  });
});

describe('the decision at the parse limits', () => {
  // Languages whose intersections are empty only for a reason the product automaton must explore
  // in full: lengths that are multiples of two coprime moduli, and a parity of letters that
  // contradicts the other filter's.
  const ODD_A = 'b*a(?:b*ab*a)*b*';
  const EVEN_A = '(?:b*ab*a)*b*';
  const ODD_B = 'a*b(?:a*ba*b)*a*';
  const EVEN_B = '(?:a*ba*b)*a*';

  test(`two clauses of ${MAX_KEY_STATES}-state keys each, on one shared key`, () => {
    const a = parsed({
      anyOf: [
        { u: { regex: '(?:[ab]{32})*', notRegex: ODD_A } },
        { u: { regex: '(?:[ab]{32})*', notRegex: ODD_B } },
      ],
    });
    const b = parsed({
      anyOf: [
        { u: { regex: '(?:[ab]{31})*', notRegex: EVEN_A } },
        { u: { regex: '(?:[ab]{31})*', notRegex: EVEN_B } },
      ],
    });
    assert.equal(compileFilter(a).states, MAX_FILTER_STATES);
    assert.equal(compileFilter(a).clauses[0]!.conditions[0]!.states, MAX_KEY_STATES);
    assert.ok(compileFilter(b).states <= MAX_FILTER_STATES);
    assert.equal(decideOverlap(a, b).kind, 'disjoint');
  });

  test(`${MAX_FILTER_CLAUSES} clauses on shared keys, with value sets, negations and regexes`, () => {
    // Lengths ≡ 2i (mod 16) against lengths ≡ 2j+1 (mod 14): even against odd, never equal.
    const sets = Array.from({ length: 64 }, (_, i) => `v${i}`);
    const a = parsed({
      anyOf: Array.from({ length: MAX_FILTER_CLAUSES }, (_, i) => ({
        t: { in: sets },
        u: { regex: `[ab]{${2 * i}}(?:[ab]{16})*` },
      })),
    });
    const b = parsed({
      anyOf: Array.from({ length: MAX_FILTER_CLAUSES - 1 }, (_, j) => ({
        t: { notIn: ['w'] },
        u: { regex: `[ab]{${2 * j + 1}}(?:[ab]{14})*` },
      })),
    });
    assert.ok(compileFilter(a).states <= MAX_FILTER_STATES && compileFilter(b).states <= MAX_FILTER_STATES);
    assert.equal(decideOverlap(a, b).kind, 'disjoint');
    assert.equal(decideOverlap(b, a).kind, 'disjoint');
  });

  test('an overlap whose shortest witness is thousands of characters long', () => {
    const a = parsed({ u: { regex: '(?:[a-z]{63})+' } });
    const b = parsed({ u: { regex: '(?:[a-z]{62})+' } });
    const decision = decideOverlap(a, b);
    assert.equal(decision.kind, 'overlap');
    if (decision.kind !== 'overlap') return;
    assert.equal(decision.witness.headers[0]![1].length, 63 * 62);
    const message = new MessageView(new Map(decision.witness.headers));
    assert.ok(matches(a, message) && matches(b, message));
  });
});

// Cases a first version got wrong: each has its test.
describe('text-form keys, proposed fixes and long values', () => {
  test('a key ending in "!", "^" or "~", or holding " or ", survives the text form (quoted)', () => {
    for (const key of ['u!', 'u^', 'u~', 'a or b', '!x', 'k in (a)']) {
      const filter = parsed({ [key]: 'a' });
      assert.deepEqual(parseFilter(formatFilter(filter)), { ok: true, value: filter }, key);
    }
    assert.notEqual(formatFilter(parsed({ 'u!': 'a' })), formatFilter(parsed({ u: { notEquals: 'a' } })));
    assert.ok(!sameFilter(parsed({ 'u!': 'a' }), parsed({ u: { notEquals: 'a' } })));
    assert.ok(sameFilter(parsed('a=1,b=2'), parsed({ b: '2', a: '1' })));
  });

  test('a proposed fix is a term parseFilter accepts that separates the two; when none does, the fix says so', () => {
    const fixOf = (mine: string, theirs: string) =>
      overlapErrors([
        { routeId: 'theirs', filter: parsed(theirs) },
        { routeId: 'mine', filter: parsed(mine) },
      ])[0]!.fix;
    const separates = (mine: string, theirs: string) => {
      const added = /^Add (.*) to route "mine"/.exec(fixOf(mine, theirs))?.[1];
      assert.ok(added, fixOf(mine, theirs));
      const changed = parseFilter(`${mine},${added}`);
      assert.ok(changed.ok, added);
      assert.equal(decideOverlap(changed.value, parsed(theirs)).kind, 'disjoint', added);
    };
    separates('tenant^=alice-', 'tenant~="alice-[0-9]+"');
    separates('x-queue-split-user~="al.*"', 'x-queue-split-user=alice');
    separates('baggage:user=bob', 'x-queue-split-user=alice');
    // Mine is inside theirs: no term on their keys leaves mine anything to match.
    assert.match(fixOf('tenant^=alice-x', 'tenant^=alice-'), /^No term added to route "mine"/);
    // Undecided on baggage: a term on the raw header beside the member would be refused.
    assert.match(fixOf('baggage:m=a', 'baggage~=".*"'), /^No term added to route "mine"/);
  });

  test('a not-equals, a set to exclude or a prefix of any length the schema accepts is accepted', () => {
    parsed({ u: { notEquals: 'x'.repeat(1024) } });
    parsed({ u: { notIn: Array.from({ length: 64 }, (_, i) => `${'v'.repeat(40)}${i}`) } });
    parsed({ u: { prefix: 'p'.repeat(1024) } });
    parsed({ u: { notPrefix: 'p'.repeat(1024) } });
    // Exclusions are exact: a prefix whose only values are excluded could never match.
    assert.match(refused({ u: { in: ['a', 'b'], notIn: ['a', 'b'] } }), /could never match/);
    const decision = decideOverlap(
      parsed({ u: { prefix: 'a', notIn: ['a', 'ab'] } }),
      parsed({ u: { in: ['a', 'ab', 'ac'] } }),
    );
    assert.equal(decision.kind, 'overlap');
    if (decision.kind === 'overlap') assert.deepEqual(decision.witness.headers, [['u', 'ac']]);
    const rest = parsed({ u: { regex: 'a[bcd]', notIn: ['ab', 'ac'] } });
    const rests = decideOverlap(rest, parsed('u^=a'));
    assert.equal(rests.kind, 'overlap');
    if (rests.kind === 'overlap') assert.deepEqual(rests.witness.headers, [['u', 'ad']]);
    assert.equal(decideOverlap(rest, parsed('u in (ab, ac)')).kind, 'disjoint');
  });
});
