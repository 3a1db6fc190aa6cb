// W3C Baggage as filters read it (core/filter/baggage.ts), checked against the examples of the
// specification (https://www.w3.org/TR/baggage/), and `baggage:<member>` filter keys read through
// a MessageView.
import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import {
  formatBaggage,
  matches,
  MessageView,
  parseBaggage,
  parseFilter,
  type RouteFilter,
} from '../../../core/filter';
import { MAX_BAGGAGE_BYTES } from '../../../core/filter/baggage';

const members = (header: string) => Object.fromEntries(parseBaggage(header));

describe('parseBaggage: the examples of the W3C Baggage specification', () => {
  test('properties after ";" are ignored, whitespace around keys and values is not part of them', () => {
    assert.deepEqual(
      members('key1=value1;property1;property2, key2 = value2, key3=value3; propertyKey=propertyValue'),
      {
        key1: 'value1',
        key2: 'value2',
        key3: 'value3',
      },
    );
  });

  test('values are percent-decoded', () => {
    assert.deepEqual(members('userId=alice,serverNode=DF%2028,isProduction=false'), {
      userId: 'alice',
      serverNode: 'DF 28',
      isProduction: 'false',
    });
  });

  test('the single-member examples', () => {
    assert.deepEqual(members('key1=value1'), { key1: 'value1' });
    assert.deepEqual(members('key1=value1;property1;property2'), { key1: 'value1' });
    assert.deepEqual(members('key1 = value1; property1 ; property2'), { key1: 'value1' });
  });

  test('spaces and tabs around members, keys and values (OWS) are trimmed', () => {
    assert.deepEqual(members(' \tk1\t=\t v1 \t,  k2=v2  ;p=1 ,k3 =v3'), { k1: 'v1', k2: 'v2', k3: 'v3' });
  });

  test('percent-decoding is UTF-8; invalid sequences become U+FFFD', () => {
    assert.deepEqual(members('a=%C3%A9t%C3%A9,b=%E6%97%A5%E6%9C%AC'), { a: 'été', b: '日本' });
    assert.equal(parseBaggage('a=%FF').get('a'), '\uFFFD');
    assert.equal(parseBaggage('a=x%C3').get('a'), 'x\uFFFD'); // truncated sequence
    assert.equal(parseBaggage('a=%C3%28').get('a'), '\uFFFD('); // bad continuation byte
    assert.equal(parseBaggage('a=%ED%A0%80').get('a'), '\uFFFD\uFFFD\uFFFD'); // an encoded surrogate
  });

  test('a "%" not followed by two hex digits stays as it is; lower-case hex decodes', () => {
    assert.deepEqual(members('a=100%,b=%zz,c=%2,d=%2c'), { a: '100%', b: '%zz', c: '%2', d: ',' });
  });

  test('"=" inside a value belongs to the value; an empty value is a value', () => {
    assert.deepEqual(members('a=b=c,token=abc==,empty='), { a: 'b=c', token: 'abc==', empty: '' });
  });

  test('when a key repeats, the last member counts', () => {
    assert.deepEqual(members('user=alice,team=x,user=bob'), { user: 'bob', team: 'x' });
    assert.equal(parseBaggage('user=alice,user=bob').get('user'), 'bob');
  });

  test('malformed members are skipped, the others kept', () => {
    assert.deepEqual(
      members(
        [
          'ok1=1',
          'novalue', // no "="
          '=nokey', // empty key
          'bad key=1', // a space inside the key
          'k(ey)=1', // "(" and ")" are not token characters
          'quoted="v"', // '"' is not a baggage-octet
          'space=a b', // neither is a space inside the value
          'back=a\\b', // nor "\"
          ',',
          '',
          'ok2=2',
        ].join(','),
      ),
      { ok1: '1', ok2: '2' },
    );
  });

  test('keys are case-sensitive tokens', () => {
    assert.deepEqual(members("User=a,user=b,x-b3!#$%&'*+.^_`|~=c"), {
      User: 'a',
      user: 'b',
      "x-b3!#$%&'*+.^_`|~": 'c',
    });
  });

  test('the empty header, and a header longer than the bound, have no members', () => {
    assert.equal(parseBaggage('').size, 0);
    assert.equal(parseBaggage(`a=1,pad=${'x'.repeat(MAX_BAGGAGE_BYTES)}`).size, 0);
  });
});

describe('formatBaggage', () => {
  test('round-trips any value, non-ASCII and baggage delimiters included', () => {
    const values = [
      'alice',
      'zoë',
      '日本語',
      '😀',
      'a b',
      'a,b;c=d',
      '"quoted"',
      'back\\slash',
      '100%',
      '%41',
      '',
      ' x ',
    ];
    for (const value of values) {
      const header = formatBaggage([['k', value]]);
      assert.match(header, /^k=[\x21\x23-\x2B\x2D-\x3A\x3C-\x5B\x5D-\x7E]*$/, `${value} → ${header}`);
      assert.equal(parseBaggage(header).get('k'), value, header);
    }
  });

  test('keeps baggage-octets as they are and percent-encodes the rest as UTF-8', () => {
    assert.equal(
      formatBaggage([
        ['userId', 'alice'],
        ['serverNode', 'DF 28'],
      ]),
      'userId=alice,serverNode=DF%2028',
    );
    assert.equal(formatBaggage([['k', 'é']]), 'k=%C3%A9');
    assert.equal(formatBaggage([['k', 'a=b']]), 'k=a=b');
  });

  test('several members read back in order', () => {
    const pairs: [string, string][] = [
      ['a', '1'],
      ['b', 'zoë'],
      ['c', ''],
    ];
    assert.deepEqual([...parseBaggage(formatBaggage(pairs))], pairs);
  });
});

describe('a filter on baggage:userId', () => {
  const parsed = parseFilter('baggage:userId=alice');
  assert.ok(parsed.ok);
  const filter: RouteFilter = parsed.value;
  const view = (baggage: string | undefined, other: Record<string, string> = {}) => {
    const headers = new Map(Object.entries(other));
    if (baggage !== undefined) headers.set('baggage', baggage);
    return new MessageView(headers);
  };

  test('is stored with the key as written', () => {
    assert.deepEqual(filter, { 'baggage:userId': 'alice' });
  });

  test('matches the member wherever it is in the header, with properties and whitespace', () => {
    assert.ok(matches(filter, view('userId=alice')));
    assert.ok(matches(filter, view('serverNode=DF%2028, userId = alice ;prop, isProduction=false')));
    assert.ok(matches(filter, view('userId=%61lice'))); // percent-encoded
    assert.ok(matches(filter, view('userId=bob,userId=alice'))); // the last one counts
  });

  test('does not match another value, another member, another header, or a malformed member', () => {
    assert.ok(!matches(filter, view(undefined)));
    assert.ok(!matches(filter, view('userId=bob')));
    assert.ok(!matches(filter, view('userId=alice,userId=bob')));
    assert.ok(!matches(filter, view('userid=alice'))); // keys are case-sensitive
    assert.ok(!matches(filter, view('user Id=alice')));
    assert.ok(!matches(filter, view('userId="alice"')));
    assert.ok(!matches(filter, view(undefined, { userId: 'alice' }))); // a header, not a member
    assert.ok(!matches(filter, view(undefined, { 'baggage:userId': 'alice' })));
  });

  test('predicates apply to the decoded member value', () => {
    const prefix = parseFilter('baggage:serverNode^=DF ,baggage:userId notin (bob)');
    assert.ok(prefix.ok);
    assert.ok(matches(prefix.value, view('serverNode=DF%2028')));
    assert.ok(!matches(prefix.value, view('serverNode=DF%2028,userId=bob')));
    const absent = parseFilter('!has(baggage:userId)');
    assert.ok(absent.ok);
    assert.ok(matches(absent.value, view(undefined)));
    assert.ok(matches(absent.value, view('other=1,userId')));
    assert.ok(!matches(absent.value, view('userId=')));
  });

  test('a non-ASCII value matches through formatBaggage', () => {
    const zoe = parseFilter({ 'baggage:userId': 'zoë' });
    assert.ok(zoe.ok);
    assert.ok(matches(zoe.value, view(formatBaggage([['userId', 'zoë']]))));
    assert.ok(!matches(zoe.value, view('userId=zoë'))); // raw non-ASCII is not a baggage-octet
  });
});
