// Filter semantics of docs/design.md §4: parsing every input form, matching both brokers' header shapes.
import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import { filtersOverlap, formatFilter, matches, parseFilter, type HeaderFilter } from '../../../core/filter';
import { kafkaHeaders } from '../../../core/providers/kafka/message';
import { amqpHeaders } from '../../../core/providers/rabbitmq/message';

function parsed(input: Parameters<typeof parseFilter>[0]): HeaderFilter {
  const result = parseFilter(input);
  assert.ok(result.ok, JSON.stringify(result));
  return result.value;
}

function errorsOf(input: unknown, path?: string) {
  const result = parseFilter(input as Parameters<typeof parseFilter>[0], path);
  assert.equal(result.ok, false, `expected errors for ${JSON.stringify(input)}`);
  return result.ok ? [] : result.errors;
}

describe('parseFilter', () => {
  test('reads the string, list and map forms alike', () => {
    const expected = { team: 'x', 'x-queue-split-user': 'alice' };
    assert.deepEqual(parsed('x-queue-split-user=alice,team=x'), expected);
    assert.deepEqual(parsed(' team = x , x-queue-split-user=alice '), expected);
    assert.deepEqual(parsed(['team=x', 'x-queue-split-user=alice']), expected);
    assert.deepEqual(parsed({ 'x-queue-split-user': 'alice', team: 'x' }), expected);
  });

  test('an empty input is the empty filter (all messages)', () => {
    assert.deepEqual(parsed(''), {});
    assert.deepEqual(parsed([]), {});
    assert.deepEqual(parsed({}), {});
  });

  test('values may contain "=" and be empty; keys are case-sensitive', () => {
    assert.deepEqual(parsed('sig=a=b'), { sig: 'a=b' });
    assert.deepEqual(parsed('k='), { k: '' });
    assert.deepEqual(parsed('User=a,user=b'), { User: 'a', user: 'b' });
  });

  test('a repeated key with the same value is accepted once', () => {
    assert.deepEqual(parsed('a=1,a=1'), { a: '1' });
  });

  test('empty key, missing "=", empty entries and conflicting duplicates are errors with fixes', () => {
    assert.match(errorsOf('=v')[0]!.problem, /empty key/);
    assert.match(errorsOf('user')[0]!.problem, /has no "="/);
    assert.match(errorsOf('a=1,,b=2')[0]!.fix, /extra comma/);
    const dup = errorsOf('a=1,a=2');
    assert.match(dup[0]!.problem, /twice with different values/);
    assert.match(dup[0]!.fix, /Keep only one/);
  });

  test('errors carry the path of the offending entry', () => {
    assert.equal(errorsOf(['a=1', 'b'], 'spec.filter')[0]!.path, 'spec.filter[1]');
    assert.equal(errorsOf({ 'x-user': 7 }, 'spec.filter')[0]!.path, 'spec.filter["x-user"]');
    assert.equal(errorsOf({ user: true })[0]!.path, 'filter.user');
  });

  test('non-string values in the map form never become matches', () => {
    for (const value of [1, true, null, ['a'], { a: 'b' }]) {
      assert.match(errorsOf({ k: value })[0]!.problem, /must be a string/);
    }
  });

  test('wrong input types, Maps and class instances are errors, not the empty filter', () => {
    for (const input of [null, undefined, 42, true, new Map([['a', 'b']]), new Date()]) {
      assert.equal(errorsOf(input).length, 1);
    }
  });

  test('reports every problem at once, capped', () => {
    assert.equal(errorsOf('a,b,c').length, 3);
    assert.equal(errorsOf(Array.from({ length: 500 }, () => 'x').join(',')).length, 21);
  });

  test('rejects keys and values that text cannot carry or that would widen the filter', () => {
    assert.match(errorsOf({ 'a=b': 'c' })[0]!.problem, /contains "="/);
    // Values the bare text form cannot carry are quoted in it, so they are accepted.
    for (const value of ['x,y', ' x', 'a or b', '(x)']) {
      const filter = parsed({ a: value } as never);
      assert.deepEqual(parsed(formatFilter(filter)), filter, `${JSON.stringify(value)} reads back`);
    }
    assert.match(errorsOf(JSON.parse('{"__proto__": "x"}'))[0]!.problem, /reserved/);
    assert.match(errorsOf({ ['k'.repeat(256)]: 'v' })[0]!.problem, /255 bytes/);
    assert.match(errorsOf({ k: '\uD800' })[0]!.problem, /not valid Unicode/);
    assert.match(errorsOf(Array.from({ length: 33 }, (_, i) => `k${i}=v`))[0]!.problem, /at most 32/);
  });

  test('the result is frozen and has no prototype surprises', () => {
    const filter = parsed('constructor=x');
    assert.ok(Object.isFrozen(filter));
    assert.deepEqual(Object.keys(filter), ['constructor']);
    assert.equal(matches(parsed('a=1'), new Map([['a', '1']])), true);
    assert.equal(matches(parsed('a=1'), new Map([['constructor', '1']])), false);
  });
});

describe('formatFilter', () => {
  test('sorts keys and reads back to the same filter', () => {
    const filter = parsed({ b: '2', a: '1=x' });
    assert.equal(formatFilter(filter), 'a=1=x,b=2');
    assert.deepEqual(parsed(formatFilter(filter)), filter);
    assert.equal(formatFilter({}), '');
  });
});

describe('filtersOverlap', () => {
  test('overlap means every shared key agrees; disjoint keys overlap', () => {
    assert.equal(filtersOverlap({ user: 'a' }, { team: 'x' }), true);
    assert.equal(filtersOverlap({ user: 'a' }, { user: 'b' }), false);
    assert.equal(filtersOverlap({ user: 'a', team: 'x' }, { user: 'a', team: 'y' }), false);
    assert.equal(filtersOverlap({ user: 'a', team: 'x' }, { user: 'a' }), true);
  });

  test('the empty filter overlaps everything, including itself', () => {
    assert.equal(filtersOverlap({}, { user: 'a' }), true);
    assert.equal(filtersOverlap({ user: 'a' }, {}), true);
    assert.equal(filtersOverlap({}, {}), true);
  });
});

describe('amqpHeaders', () => {
  test('keeps string values only: numbers, booleans, Buffers, tables and arrays never match', () => {
    const headers = amqpHeaders({
      user: 'alice',
      n: 1,
      b: true,
      buf: Buffer.from('alice'),
      table: { user: 'alice' },
      list: ['alice'],
      nil: null,
    });
    assert.deepEqual([...headers], [['user', 'alice']]);
    assert.equal(matches({ buf: 'alice' }, headers), false);
    assert.equal(matches({ n: '1' }, headers), false);
  });

  test('undefined or missing headers give an empty map', () => {
    assert.equal(amqpHeaders(undefined).size, 0);
  });
});

describe('kafkaHeaders', () => {
  test('decodes UTF-8 buffers and keeps strings', () => {
    const headers = kafkaHeaders({ user: Buffer.from('zoë'), team: 'x' });
    assert.equal(headers.get('user'), 'zoë');
    assert.equal(headers.get('team'), 'x');
  });

  test('the last of repeated keys counts', () => {
    const headers = kafkaHeaders({ user: [Buffer.from('alice'), Buffer.from('bob')] });
    assert.equal(headers.get('user'), 'bob');
    assert.equal(matches({ user: 'alice' }, headers), false);
    assert.equal(matches({ user: 'bob' }, headers), true);
  });

  test('a non-UTF-8 value never matches; if it is the last of repeats the key is absent', () => {
    const bad = Buffer.from([0xff, 0xfe, 0x41]);
    assert.equal(kafkaHeaders({ user: bad }).has('user'), false);
    assert.equal(kafkaHeaders({ user: [Buffer.from('alice'), bad] }).has('user'), false);
    assert.equal(kafkaHeaders({ user: [bad, Buffer.from('alice')] }).get('user'), 'alice');
  });

  test('a BOM is part of the value (exact comparison), empty arrays and undefined are absent', () => {
    const withBom = Buffer.from([0xef, 0xbb, 0xbf, 0x61]);
    assert.equal(kafkaHeaders({ k: withBom }).get('k'), '\uFEFFa');
    assert.equal(kafkaHeaders({ k: [] }).has('k'), false);
    assert.equal(kafkaHeaders({ k: undefined }).has('k'), false);
    assert.equal(kafkaHeaders(undefined).size, 0);
  });
});

describe('matches', () => {
  test('AND of exact string comparisons; the empty filter matches everything', () => {
    const headers = new Map([
      ['user', 'alice'],
      ['team', 'x'],
    ]);
    assert.equal(matches({ user: 'alice' }, headers), true);
    assert.equal(matches({ user: 'alice', team: 'x' }, headers), true);
    assert.equal(matches({ user: 'alice', team: 'y' }, headers), false);
    assert.equal(matches({ user: 'Alice' }, headers), false);
    assert.equal(matches({ region: 'eu' }, headers), false);
    assert.equal(matches({}, headers), true);
    assert.equal(matches({}, new Map()), true);
  });
});
