// Pure pieces of the RabbitMQ engine: the no-publisher proof behind every shadow removal
// (docs/design.md §5.4), the headers a copy carries (README "What a RabbitMQ copy carries") and
// the typed header decode that keeps their AMQP types (agent/rabbitmq/typedTable.ts).
import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import type { Message } from 'amqplib';
import { proveNoPublisher, type PublisherFacts } from '../../../agent/rabbitmq/noPublisher';
import { shadowPublishOptions } from '../../../agent/rabbitmq/properties';
import { decodeTypedTable } from '../../../agent/rabbitmq/typedTable';
import type { Link } from '../../../agent/rabbitmq/amqpConnection';

describe('no-publisher proof', () => {
  // A Link is only read for `alive` here; the broker side is covered by the conformance suite.
  const link = (alive: boolean) => ({ alive }) as unknown as Link;
  const facts = (over: Partial<PublisherFacts>): PublisherFacts => ({
    link: link(true),
    shadow: 'qs-shadow',
    selectable: false,
    openOlderPublishes: 0,
    activeMoves: 0,
    ...over,
  });

  test('holds with the fence, no route to the shadow, nothing open and no move', () => {
    const proof = proveNoPublisher(facts({}));
    assert.equal(proof.ok, true);
    if (proof.ok) assert.equal(proof.proof.shadow, 'qs-shadow');
  });

  for (const [what, over, reason] of [
    ['the fence is not held', { link: link(false) }, /fence/],
    ['the table still routes to it', { selectable: true }, /route table in force/],
    ['older publishes are open', { openOlderPublishes: 2 }, /2 publishes/],
    ['a move runs', { activeMoves: 1 }, /move/],
  ] as const) {
    test(`fails when ${what}`, () => {
      const proof = proveNoPublisher(facts(over));
      assert.equal(proof.ok, false);
      if (!proof.ok) assert.match(proof.reason, reason);
    });
  }
});

describe('copy headers', () => {
  const msg = (headers: Record<string, unknown>, exchange = 'orders', routingKey = 'created') =>
    ({ fields: { exchange, routingKey }, properties: { headers } }) as unknown as Message;

  test('drops CC, BCC and x-delivery-count, records CC, exchange and routing key, keeps x-death', () => {
    const death = [{ queue: 'dlq', reason: 'rejected', count: 1 }];
    const o = shadowPublishOptions(
      msg({ CC: ['a'], BCC: ['b'], 'x-delivery-count': 3, 'x-death': death, app: 'v' }),
      'guest',
    );
    assert.deepEqual(o.headers, {
      'x-death': death,
      app: 'v',
      'x-queue-split-cc': ['a'],
      'x-queue-split-exchange': 'orders',
      'x-queue-split-routing-key': 'created',
    });
  });

  test('a later hop keeps the first hop record', () => {
    const first = { 'x-queue-split-exchange': 'orders', 'x-queue-split-routing-key': 'created' };
    const o = shadowPublishOptions(msg(first, '', 'qs-shadow'), 'guest');
    assert.deepEqual(o.headers, first);
  });
});

describe('typed header table', () => {
  const entry = (key: string, tagAndBytes: number[]) =>
    Buffer.from([key.length, ...Buffer.from(key), ...tagAndBytes]);
  const tag = (t: string) => t.charCodeAt(0);

  test('every scalar keeps its AMQP type in the form amqplib re-encodes', () => {
    const table = Buffer.concat([
      entry('b', [tag('b'), 0xfb]),
      entry('B', [tag('B'), 200]),
      entry('s', [tag('s'), 0, 7]),
      entry('u', [tag('u'), 0xea, 0x60]),
      entry('l', [tag('l'), 0x40, 0, 0, 0, 0, 0, 0, 1]),
      entry('f', [tag('f'), 0x3f, 0xc0, 0, 0]),
      entry('D', [tag('D'), 1, 0xff, 0xff, 0xff, 0xf1]),
      entry('V', [tag('V')]),
    ]);
    assert.deepEqual(decodeTypedTable(table), {
      b: { '!': 'int8', value: -5 },
      B: { '!': 'uint8', value: 200 },
      s: { '!': 'int16', value: 7 },
      u: { '!': 'uint16', value: 60000 },
      l: { '!': 'int64', value: 2n ** 62n + 1n },
      f: { '!': 'float', value: 1.5 },
      D: { '!': 'decimal', value: { places: 1, digits: 0xfffffff1 } },
      V: null,
    });
  });

  test('a nested table is wrapped, so a key named "!" stays a key', () => {
    const inner = entry('!', [tag('t'), 1]);
    const table = entry('t', [tag('F'), 0, 0, 0, inner.length, ...inner]);
    assert.deepEqual(decodeTypedTable(table), { t: { '!': 'object', value: { '!': true } } });
  });

  test('an unknown type tag is refused, naming the tag and where', () => {
    assert.throws(
      () => decodeTypedTable(entry('k', [tag('Z')])),
      /unknown AMQP field type tag "Z" at byte 2/,
    );
  });
});
