// The route index: rejects overlapping routes naming both, and matches like a linear scan would
// — without scanning (its cost depends on distinct filter keys, not on the number of routes).
import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import fc from 'fast-check';
import { filtersOverlap, matches, type HeaderFilter } from '../../../core/filter';
import { RouteIndex, type RouteEntry } from '../../../core/routeIndex';

function build(routes: RouteEntry[]): RouteIndex {
  const result = RouteIndex.build(routes);
  assert.ok(result.ok, JSON.stringify(result));
  return result.value;
}

const headers = (pairs: Record<string, string>) => new Map(Object.entries(pairs));

describe('RouteIndex.build', () => {
  test('overlapping routes are rejected with both ids, both filters and a distinguishing fix', () => {
    const result = RouteIndex.build([
      { routeId: 'alice-route', filter: { 'x-queue-split-user': 'alice' } },
      { routeId: 'team-route', filter: { team: 'x' } },
    ]);
    assert.equal(result.ok, false);
    if (result.ok) return;
    const [error] = result.errors;
    assert.equal(error!.path, 'routes[1].filter');
    assert.match(error!.problem, /"team-route".*"team=x".*"alice-route".*"x-queue-split-user=alice"/);
    assert.match(error!.fix, /Add x-queue-split-user=<a value other than "alice">/);
  });

  test('identical filters and a subset filter get a "change the value" fix', () => {
    const result = RouteIndex.build([
      { routeId: 'a', filter: { user: 'alice' } },
      { routeId: 'b', filter: { user: 'alice', team: 'x' } },
    ]);
    assert.ok(!result.ok);
    assert.match(result.errors[0]!.fix, /change user in route "b" to a value other than "alice"/);
  });

  test('the empty filter is exclusive', () => {
    const result = RouteIndex.build([
      { routeId: 'all', filter: {} },
      { routeId: 'b', filter: { user: 'bob' } },
    ]);
    assert.ok(!result.ok);
    assert.match(result.errors[0]!.problem, /\{\} \(every message\)/);
    assert.match(result.errors[0]!.fix, /takes every message/);
    assert.ok(RouteIndex.build([{ routeId: 'all', filter: {} }]).ok);
  });

  test('duplicate route ids are rejected', () => {
    const result = RouteIndex.build([
      { routeId: 'a', filter: { user: 'x' } },
      { routeId: 'a', filter: { user: 'y' } },
    ]);
    assert.ok(!result.ok);
    assert.equal(result.errors[0]!.path, 'routes[1].routeId');
  });
});

describe('RouteIndex.match', () => {
  test('finds the one matching route or none (the application shadow)', () => {
    const index = build([
      { routeId: 'alice', filter: { user: 'alice' } },
      { routeId: 'bob-eu', filter: { user: 'bob', region: 'eu' } },
      { routeId: 'bob-us', filter: { user: 'bob', region: 'us' } },
      { routeId: 'carol', filter: { team: 'c', user: 'carol' } },
    ]);
    assert.equal(index.size, 4);
    assert.equal(index.match(headers({ user: 'alice', region: 'eu' })), 'alice');
    assert.equal(index.match(headers({ user: 'bob', region: 'us' })), 'bob-us');
    assert.equal(index.match(headers({ user: 'bob' })), undefined);
    assert.equal(index.match(headers({ user: 'carol' })), undefined);
    assert.equal(index.match(headers({ user: 'carol', team: 'c' })), 'carol');
    assert.equal(index.match(headers({})), undefined);
  });

  test('an empty index matches nothing; a lone empty filter matches everything', () => {
    assert.equal(build([]).match(headers({ user: 'a' })), undefined);
    assert.equal(build([{ routeId: 'all', filter: {} }]).match(headers({})), 'all');
  });

  test('with 5000 routes on the default header a match visits a constant number of nodes', () => {
    const routes = Array.from({ length: 5000 }, (_, i) => ({
      routeId: `r${i}`,
      filter: { 'x-queue-split-user': `user${i}` },
    }));
    const index = build(routes);
    assert.equal(index.match(headers({ 'x-queue-split-user': 'user4321' })), 'r4321');
    assert.ok(index.cost(headers({ 'x-queue-split-user': 'user4321' })) <= 2);
    assert.ok(index.cost(headers({ 'x-queue-split-user': 'nobody' })) <= 2);
  });

  test('cost is bounded by the distinct keys, not the routes', () => {
    // Routes over 3 keys; 2^3 = 8 nodes at most whatever the number of routes.
    const routes: RouteEntry[] = [];
    for (let i = 0; i < 300; i++) routes.push({ routeId: `u${i}`, filter: { user: `u${i}`, team: 't' } });
    for (let i = 0; i < 300; i++) routes.push({ routeId: `r${i}`, filter: { region: `r${i}`, team: 's' } });
    const index = build(routes);
    const probes: Record<string, string>[] = [
      { user: 'u7', team: 't' },
      { region: 'r9', team: 's' },
      { user: 'u7', region: 'r9' },
      {},
    ];
    for (const probe of probes) {
      assert.ok(
        index.cost(headers(probe)) <= 8,
        `cost ${index.cost(headers(probe))} for ${JSON.stringify(probe)}`,
      );
    }
  });
});

describe('RouteIndex agrees with brute force', () => {
  const key = fc.constantFrom('user', 'team', 'region', 'env');
  const value = fc.constantFrom('a', 'b', 'c');
  const filterArb = fc.dictionary(key, value, { minKeys: 1, maxKeys: 4 });

  /** Keeps the routes that do not overlap any earlier one: a valid route table. */
  function nonOverlapping(filters: Record<string, string>[]): RouteEntry[] {
    const kept: RouteEntry[] = [];
    filters.forEach((filter, i) => {
      if (kept.every((r) => !filtersOverlap(r.filter, filter))) kept.push({ routeId: `r${i}`, filter });
    });
    return kept;
  }

  test('for random non-overlapping tables and random messages', () => {
    fc.assert(
      fc.property(
        fc.array(filterArb, { maxLength: 40, size: 'max' }),
        fc.array(fc.dictionary(key, value, { maxKeys: 4 }), { minLength: 1, maxLength: 20 }),
        (filters, messages) => {
          const routes = nonOverlapping(filters);
          const index = build(routes);
          for (const message of messages) {
            const map = headers(message);
            const expected = routes
              .filter((r) => matches(r.filter as HeaderFilter, map))
              .map((r) => r.routeId);
            assert.ok(expected.length <= 1, 'non-overlapping routes never share a message');
            assert.equal(index.match(map), expected[0]);
          }
        },
      ),
      { numRuns: 300 },
    );
  });

  test('build rejects exactly the tables with an overlapping pair', () => {
    fc.assert(
      fc.property(fc.array(filterArb, { maxLength: 8 }), (filters) => {
        const routes = filters.map((filter, i) => ({ routeId: `r${i}`, filter }));
        const overlapping = routes.some((a, i) =>
          routes.slice(0, i).some((b) => filtersOverlap(a.filter, b.filter)),
        );
        assert.equal(RouteIndex.build(routes).ok, !overlapping);
      }),
    );
  });
});
