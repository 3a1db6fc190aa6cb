// Route-filter scenarios (docs/design.md §4 "Filters"): routes written in the text form with
// prefix, regex, anyOf, W3C baggage member and JSON body field predicates, attached at once, and
// an overlapping regex route refused. Every message must reach exactly its one route, or the app.
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { matches, parseFilter, type RouteFilter } from '../../../core/filter';
import type { ProviderHarness, TestMessage } from '../harness';
import { assertDelivery, batch, ids, seenIds } from '../delivery';
import { running } from '../steps';
import { testLogger, withSplit } from '../support';

function filter(text: string): RouteFilter {
  const parsed = parseFilter(text);
  assert.ok(parsed.ok, `${text}: ${JSON.stringify(parsed.ok ? null : parsed.errors)}`);
  return parsed.value;
}

// Pairwise disjoint, as the engine requires: the tenant routes need a tenant, the others exclude
// it (and the headers or members another route takes).
const FILTERS = {
  prefix: 'tenant^=alice-',
  regex: 'tenant~="(dev|qa)-[0-9]+"',
  anyOf: 'tenant=carol or x-team=blue,!has(tenant)',
  baggage: 'baggage:user=alice,!has(tenant),!has(x-team)',
  body: 'body:$.customer.id=42,!has(tenant),!has(x-team),baggage:user!=alice',
} as const;
type Destination = keyof typeof FILTERS | 'app';

/** [where it must go, what it tests, headers, body (default: `body of <id>`, not JSON)]. */
const CASES: readonly (readonly [Destination, string, Readonly<Record<string, string>>, string?])[] = [
  ['prefix', 'pre', { tenant: 'alice-1' }],
  ['prefix', 'pre-exact', { tenant: 'alice-' }],
  ['prefix', 'pre-over-team', { tenant: 'alice-2', 'x-team': 'blue' }],
  ['prefix', 'pre-over-baggage', { tenant: 'alice-3', baggage: 'user=alice' }],
  ['app', 'pre-no-dash', { tenant: 'alice' }],
  ['app', 'pre-case', { tenant: 'Alice-1' }],
  ['app', 'pre-inside', { tenant: 'xalice-1' }],
  ['regex', 're-dev', { tenant: 'dev-7' }],
  ['regex', 're-qa', { tenant: 'qa-123' }],
  ['app', 're-suffix', { tenant: 'dev-7x' }], // the regex matches the whole value
  ['app', 're-prefix', { tenant: 'xdev-7' }],
  ['app', 're-no-digit', { tenant: 'dev-' }],
  ['app', 're-non-ascii-digit', { tenant: 'qa-\u0661' }],
  ['anyOf', 'any-tenant', { tenant: 'carol' }],
  ['anyOf', 'any-team', { 'x-team': 'blue' }],
  ['anyOf', 'any-over-baggage', { 'x-team': 'blue', baggage: 'user=alice' }],
  ['anyOf', 'any-over-body', { tenant: 'carol' }, '{"customer":{"id":42}}'],
  ['app', 'any-team-tenant', { 'x-team': 'blue', tenant: 'dave' }],
  ['app', 'any-other-team', { 'x-team': 'red' }],
  ['baggage', 'bag-props', { baggage: 'user=alice;p=1, other=x' }],
  ['baggage', 'bag-spaces', { baggage: 'other=x ,\t user = alice ; p=1' }],
  ['baggage', 'bag-percent', { baggage: 'user=al%69ce,other=x' }],
  ['baggage', 'bag-over-body', { baggage: 'user=alice' }, '{"customer":{"id":42}}'],
  ['app', 'bag-other-user', { baggage: 'user=bob;p=1, other=alice' }],
  ['app', 'bag-encoded-space', { baggage: 'user=alice%20' }],
  ['app', 'bag-other-member', { baggage: 'xuser=alice' }],
  ['app', 'bag-plain-header', { user: 'alice' }],
  ['body', 'body-number', {}, '{"customer":{"id":42}}'],
  ['body', 'body-string', {}, '{"customer":{"id":"42","name":"x"},"items":[1]}'],
  ['body', 'body-float', {}, '{"customer":{"id":42.0}}'],
  ['body', 'body-other-user', { baggage: 'user=bob' }, '{"customer":{"id":42}}'],
  ['app', 'body-other-id', {}, '{"customer":{"id":43}}'],
  ['app', 'body-no-field', {}, '{"customer":{"name":"x"}}'],
  ['app', 'body-top-level', {}, '{"id":42}'],
  ['app', 'body-not-json', {}, 'customer.id=42 {"customer":{"id":42}}'],
  ['app', 'body-truncated', {}, '{"customer":{"id":42}'],
  ['app', 'plain', {}],
];

export function filterScenarios(h: ProviderHarness): void {
  test('route filters: prefix, regex, anyOf, baggage and body routes take exactly their messages; an overlapping regex is refused', () =>
    withSplit(h, async (t, engines) => {
      const e = engines.track(h.engine(t, { logger: testLogger() }));
      const routes = Object.entries(FILTERS).map(([id, text]) => t.route(id, filter(text)));
      await running(e, 1, routes);

      // tenant~="alice-.*" takes what tenant^=alice- takes: refused, with a message matching both.
      const overlapping = t.route('alice-regex', filter('tenant~="alice-.*"'));
      const refused = await e.reconcileRoutes(2, [...routes, overlapping]);
      assert.equal(refused.kind, 'rejected', JSON.stringify(refused));
      const problems = refused.kind === 'rejected' ? refused.errors.map((x) => x.problem).join('\n') : '';
      assert.match(problems, /route "alice-regex" .* overlaps route "prefix"/);
      const witness = /a message with headers tenant=("(?:[^"\\]|\\.)*")/.exec(problems);
      assert.ok(witness, `the error names a witness message: ${problems}`);
      const tenant = JSON.parse(witness[1]!) as string;
      for (const f of [overlapping.filter, filter(FILTERS.prefix)])
        assert.ok(
          matches(f, new Map([['tenant', tenant]])),
          `witness tenant=${tenant} matches ${JSON.stringify(f)}`,
        );
      assert.equal(e.status().generation, 1, 'the refused table did not replace the running one');

      const sent = CASES.map(([to, label, headers, body]): { to: Destination; message: TestMessage } => {
        const [m] = batch(label, 1, () => headers);
        return { to, message: body === undefined ? m! : { ...m!, body: Buffer.from(body, 'utf8') } };
      });
      // Four senders at once: the SQS harness sends one message per request.
      const parts = [0, 1, 2, 3].map((k) => sent.filter((_, i) => i % 4 === k).map((s) => s.message));
      await Promise.all(parts.map((part) => h.produce(t, part)));
      const expected = (to: Destination) => ids(sent.filter((s) => s.to === to).map((s) => s.message));
      const destinations: [Destination, string][] = [
        ...routes.map((r): [Destination, string] => [r.routeId as Destination, r.shadow]),
        ['app', t.appShadow],
      ];
      const observed = await Promise.all(destinations.map(([to, name]) => h.read(name, expected(to))));
      const seen = Object.fromEntries(destinations.map(([to], i) => [to, seenIds(observed[i]!)]));
      assertDelivery({ inputs: ids(sent.map((s) => s.message)), destinations: seen });
      for (const [to] of destinations)
        assert.deepEqual(seen[to]!.slice().sort(), expected(to).sort(), `${to} got exactly its messages`);
      const status = e.status();
      for (const r of status.routes)
        assert.equal(r.published, expected(r.routeId as Destination).length, r.routeId);
      assert.equal(status.app.published, expected('app').length);
    }));
}
