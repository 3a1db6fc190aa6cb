// Bad input for the annotation and filter parsers: random YAML and text, wrong types, huge and
// deeply nested documents, alias bombs, unicode and prototype-pollution keys. They must always
// return typed errors (or a valid value), never throw, never hang.
import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import fc from 'fast-check';
import { stringify } from 'yaml';
import { parseFilter } from '../../../core/filter';
import { parseQueueConfig, validateQueueConfig } from '../../../core/queueConfig/parseQueueConfig';
import { parseState } from '../../../core/state/stateDocument';
import { MAX_YAML_BYTES, parseYamlSafely } from '../../../core/queueConfig/safeYaml';
import type { Result } from '../../../core/result';

const VALID = `queues:
  - name: orders
    container: app
    kafka:
      brokersEnv: KAFKA_BROKERS
      sourceEnv: ORDERS_TOPIC
      groupEnv: KAFKA_GROUP
      offsetReset: earliest
      tls: {caSecret: kafka-ca, caKey: ca.crt}
      sasl: {mechanism: SCRAM-SHA-512, usernameEnv: KAFKA_USERNAME, passwordEnv: KAFKA_PASSWORD}
  - name: invoices
    rabbitmq: {urlEnv: AMQP_URL, managementUrlEnv: RABBITMQ_MANAGEMENT_URL, sourceEnv: INVOICE_QUEUE}
`;

/** Calls the parser, checking it neither throws nor takes long, and returns a well-formed Result. */
function typed<T>(run: () => Result<T>, budgetMs = 2000): Result<T> {
  const started = performance.now();
  const result = run();
  const elapsed = performance.now() - started;
  assert.ok(elapsed < budgetMs, `took ${elapsed.toFixed(0)} ms`);
  if (!result.ok) {
    assert.ok(Array.isArray(result.errors) && result.errors.length > 0);
    for (const error of result.errors) {
      assert.equal(typeof error.path, 'string');
      assert.equal(typeof error.problem, 'string');
      assert.equal(typeof error.fix, 'string');
      assert.ok(error.problem.length > 0 && error.fix.length > 0);
    }
  }
  return result;
}

const yamlChars = fc.constantFrom(...'abcqueus:-_ \n\t{}[],&*!|>#\'"?%@`=~\\0123456789ü😀');

describe('annotation parser fuzz', () => {
  test('random YAML-ish text', () => {
    fc.assert(
      fc.property(fc.string({ unit: yamlChars, maxLength: 400 }), (text) => {
        typed(() => parseQueueConfig(text));
      }),
      { numRuns: 1500 },
    );
  });

  test('random unicode text', () => {
    fc.assert(
      fc.property(fc.string({ unit: 'binary', maxLength: 300 }), (text) => {
        typed(() => parseQueueConfig(text));
      }),
      { numRuns: 500 },
    );
  });

  test('random values of any shape, serialised as YAML', () => {
    const value = fc.oneof(
      fc.anything(),
      fc.record({ queues: fc.array(fc.anything(), { maxLength: 5 }) }),
      fc.record({
        queues: fc.array(
          fc.record(
            { name: fc.anything(), kafka: fc.dictionary(fc.string(), fc.anything()) },
            { requiredKeys: [] },
          ),
          { maxLength: 4 },
        ),
      }),
    );
    fc.assert(
      fc.property(value, (v) => {
        let text: string;
        try {
          text = stringify(v);
        } catch {
          return; // not representable as YAML; nothing to parse
        }
        typed(() => parseQueueConfig(text));
      }),
      { numRuns: 800 },
    );
  });

  test('single-character mutations of a valid declaration', () => {
    fc.assert(
      fc.property(
        fc.nat(VALID.length - 1),
        fc.string({ unit: yamlChars, maxLength: 3 }),
        fc.nat(3),
        (at, insert, cut) => {
          typed(() => parseQueueConfig(VALID.slice(0, at) + insert + VALID.slice(at + cut)));
        },
      ),
      { numRuns: 1500 },
    );
  });

  test('wrong input types', () => {
    for (const input of [undefined, null, 42, true, {}, [], Buffer.from(VALID), Symbol('x'), () => VALID]) {
      assert.equal(typed(() => parseQueueConfig(input)).ok, false);
    }
  });

  test('oversized documents are refused before parsing', () => {
    const huge = VALID + `# ${'x'.repeat(MAX_YAML_BYTES)}\n`;
    const result = typed(() => parseQueueConfig(huge));
    assert.ok(!result.ok);
    assert.match(result.errors[0]!.problem, /at most 65536/);
    // Multi-byte characters count in bytes, not characters.
    assert.equal(typed(() => parseQueueConfig('ü'.repeat(MAX_YAML_BYTES / 2 + 1))).ok, false);
  });

  test('a large but allowed document parses in time', () => {
    const queues = Array.from(
      { length: 32 },
      (_, i) => `  - name: q${i}\n    rabbitmq: {urlEnv: U${i}, managementUrlEnv: M${i}, sourceEnv: S${i}}\n`,
    ).join('');
    assert.ok(typed(() => parseQueueConfig(`queues:\n${queues}# ${'pad '.repeat(14000)}\n`)).ok);
    const tooMany = `queues:\n${queues}  - name: q99\n    rabbitmq: {urlEnv: U, managementUrlEnv: M, sourceEnv: S}\n`;
    assert.match(JSON.stringify(typed(() => parseQueueConfig(tooMany))), /more than 32 entries/);
  });

  test('billion laughs: alias expansion is bounded', () => {
    const bomb = [
      'a: &a ["x","x","x","x","x","x","x","x","x"]',
      'b: &b [*a,*a,*a,*a,*a,*a,*a,*a,*a]',
      'c: &c [*b,*b,*b,*b,*b,*b,*b,*b,*b]',
      'd: &d [*c,*c,*c,*c,*c,*c,*c,*c,*c]',
      'e: &e [*d,*d,*d,*d,*d,*d,*d,*d,*d]',
      'f: &f [*e,*e,*e,*e,*e,*e,*e,*e,*e]',
      'queues: *f',
    ].join('\n');
    const result = typed(() => parseQueueConfig(bomb));
    assert.ok(!result.ok);
    assert.match(result.errors[0]!.problem, /aliases/);
  });

  test('deep nesting of every kind is refused, and the parser stays usable afterwards', () => {
    const deep = [
      '['.repeat(30000),
      '['.repeat(20000) + ']'.repeat(20000),
      '{a: '.repeat(10000),
      '- '.repeat(30000) + 'x',
      '? '.repeat(30000) + 'x',
      Array.from({ length: 300 }, (_, i) => `${' '.repeat(i)}a:`).join('\n'),
    ];
    for (const text of deep) {
      const result = typed(() => parseQueueConfig(text));
      assert.ok(!result.ok);
    }
    assert.match(JSON.stringify(typed(() => parseQueueConfig(deep[0]!))), /nests deeper than 64/);
    // After all that, a normal document still parses (no poisoned parser state).
    assert.ok(typed(() => parseQueueConfig(VALID)).ok);
  });

  test('the deepest accepted nesting composes without trouble', () => {
    const depth = 60;
    const text = 'queues: ' + '['.repeat(depth) + ']'.repeat(depth);
    assert.ok(!typed(() => parseQueueConfig(text)).ok);
    assert.ok(typed(() => parseYamlSafely(text)).ok);
  });

  test('prototype-pollution keys are plain unknown keys and pollute nothing', () => {
    const inputs = [
      `__proto__: {polluted: yes}\n${VALID}`,
      VALID.replace('    container: app\n', '    container: app\n    __proto__: {polluted: yes}\n'),
      VALID.replace(
        '      offsetReset: earliest\n',
        '      offsetReset: earliest\n      constructor: {prototype: {polluted: yes}}\n',
      ),
      '{"__proto__": {"polluted": "yes"}, "queues": []}',
      'queues:\n  - __proto__: {name: x}\n    kafka: {}\n',
    ];
    for (const text of inputs) {
      const result = typed(() => parseQueueConfig(text));
      assert.ok(!result.ok, text);
      assert.ok(result.errors.some((e) => /unknown key|required|__proto__/.test(e.problem + e.path)));
    }
    assert.equal(({} as Record<string, unknown>).polluted, undefined);
    assert.equal(Object.prototype.hasOwnProperty.call(Object.prototype, 'polluted'), false);
  });

  test('YAML tags, anchors and odd scalars do not execute or confuse anything', () => {
    for (const text of [
      'queues: !!js/function "function(){}"',
      'queues: !!binary aGVsbG8=',
      '%YAML 1.1\n---\nqueues: []',
      'queues: [~, .nan, 0x1F, 2001-12-14]',
      '\uFEFFqueues: []',
      '"\\u0000": 1',
    ]) {
      typed(() => parseQueueConfig(text));
    }
  });
});

describe('already-parsed values', () => {
  test('deeply nested values and throwing getters become errors, not exceptions', () => {
    let deep: unknown = 'x';
    for (let i = 0; i < 200_000; i++) deep = { queues: [deep] };
    const nested = typed(() => validateQueueConfig(deep));
    assert.ok(!nested.ok);
    const hostile = Object.defineProperty({}, 'queues', {
      enumerable: true,
      get() {
        throw new Error('boom');
      },
    });
    assert.ok(!typed(() => validateQueueConfig(hostile)).ok);
    assert.ok(
      !typed(() =>
        parseFilter(
          Object.defineProperty({}, 'k', {
            enumerable: true,
            get: () => {
              throw new Error('boom');
            },
          }),
        ),
      ).ok,
    );
    const deepJson = '{"queues":['.repeat(200_000) + '"x"' + ']}'.repeat(200_000);
    assert.ok(!typed(() => parseState(deepJson)).ok);
  });
});

describe('filter parser fuzz', () => {
  test('random text, lists and maps', () => {
    const filterChars = fc.constantFrom(...'ab=,=, \t\n\u0000ü😀\uD800_-.');
    fc.assert(
      fc.property(
        fc.oneof(
          fc.string({ unit: filterChars, maxLength: 100 }),
          fc.string({ unit: 'binary', maxLength: 100 }),
          fc.array(fc.oneof(fc.string({ unit: filterChars }), fc.anything()), { maxLength: 10 }),
          fc.dictionary(fc.string({ unit: 'binary' }), fc.anything(), { maxKeys: 10 }),
          fc.anything(),
        ),
        (input) => {
          typed(() => parseFilter(input as Parameters<typeof parseFilter>[0]));
        },
      ),
      { numRuns: 2000 },
    );
  });

  test('huge inputs stay fast and report a bounded number of errors', () => {
    const result = typed(() => parseFilter('x'.repeat(100_000) + ',='.repeat(100_000)));
    assert.ok(!result.ok && result.errors.length <= 21);
    const many = typed(() => parseFilter(Array.from({ length: 10_000 }, (_, i) => `k${i}=v`).join(',')));
    assert.ok(!many.ok);
  });

  test('prototype-pollution keys pollute nothing', () => {
    for (const input of [
      JSON.parse('{"__proto__": "x"}') as Record<string, unknown>,
      '__proto__=x',
      ['__proto__=x'],
      { constructor: 'x', prototype: 'y' },
    ]) {
      typed(() => parseFilter(input));
    }
    assert.equal(({} as Record<string, unknown>).x, undefined);
  });
});
