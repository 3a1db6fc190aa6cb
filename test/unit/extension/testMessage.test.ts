// What "Send Test Message…" sends for a split's own filter, and what the notification and the log
// say about it (extension/model/testMessage.ts).
import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import { matches, MessageView } from '../../../core/filter';
import { planTestMessage, type TestMessagePlan } from '../../../extension/model/testMessage';

const typed = { body: Buffer.from('{"hello": "from Queue Split"}'), contentType: 'application/json' };

function plan(filter: Parameters<typeof planTestMessage>[0], chosen = typed): TestMessagePlan {
  const result = planTestMessage(filter, chosen);
  assert.ok(!('error' in result), JSON.stringify(result));
  // Whatever is sent matches the filter it was built for.
  assert.ok(matches(filter, new MessageView(new Map(Object.entries(result.headers)), result.body)));
  return result;
}

describe('test message', () => {
  test('an equality filter: its headers, the chosen body as it is', () => {
    const p = plan({ 'x-queue-split-user': 'alice', team: 'red' });
    assert.deepEqual(p.headers, { team: 'red', 'x-queue-split-user': 'alice' });
    assert.equal(p.body, typed.body);
    assert.equal(p.contentType, 'application/json');
    assert.equal(p.shown, 'headers team="red", x-queue-split-user="alice"');
    assert.equal(p.headerNames, 'team, x-queue-split-user');
  });

  test('prefix, regex and my OpenTelemetry routing key: values my filter accepts, baggage in its header', () => {
    const p = plan({
      anyOf: [
        {
          'baggage:queue-split-user': { equals: 'alice' },
          tenant: { prefix: 'alice-' },
          zone: { regex: 'eu-[0-9]' },
        },
      ],
    });
    assert.deepEqual(p.headers, { tenant: 'alice-', zone: 'eu-0', baggage: 'queue-split-user=alice' });
    assert.equal(p.shown, 'headers baggage="queue-split-user=alice", tenant="alice-", zone="eu-0"');
    assert.equal(p.headerNames, 'baggage, tenant, zone', 'the log gets header names only');
  });

  test('a filter on body fields sets them in a chosen JSON object, or replaces a body that is not one', () => {
    const filter = {
      anyOf: [{ 'body:$.customer.id': { prefix: 'c-' }, 'x-queue-split-user': { equals: 'alice' } }],
    };
    const merged = plan(filter);
    assert.deepEqual(JSON.parse(merged.body.toString()), {
      hello: 'from Queue Split',
      customer: { id: 'c-' },
    });
    assert.match(
      merged.shown,
      /^headers x-queue-split-user="alice" and the fields your filter reads \(body:\$\.customer\.id\) set in the body$/,
    );
    const replaced = plan(filter, {
      body: Buffer.from('plain text'),
      contentType: 'text/plain; charset=utf-8',
    });
    assert.deepEqual(JSON.parse(replaced.body.toString()), { customer: { id: 'c-' } });
    assert.equal(replaced.contentType, 'application/json', 'the body sent is JSON now');
    assert.match(
      replaced.shown,
      /a JSON body with only the fields your filter reads \(body:\$\.customer\.id\), since the chosen body lacked them/,
    );
  });

  test('the first alternative some message satisfies', () => {
    const p = plan({ anyOf: [{ a: { equals: '1' } }, { b: { exists: true } }] });
    assert.deepEqual(p.headers, { a: '1' });
  });

  test('a filter only negated predicates satisfy: no headers', () => {
    const p = plan({ anyOf: [{ team: { notEquals: 'red' } }] });
    assert.deepEqual(p.headers, {});
    assert.equal(p.shown, 'no headers');
    assert.equal(p.headerNames, 'none');
  });
});
