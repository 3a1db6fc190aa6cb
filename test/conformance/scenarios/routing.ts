// Routing scenarios: unmatched, one filter, disjoint filters, overlap rejected, header edge
// cases. Each message must reach exactly one destination.
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { NON_STRING, type ProviderHarness } from '../harness';
import { assertDelivery, batch, ids, seenIds, USER } from '../delivery';
import { done, running } from '../steps';
import { testLogger, waitFor, withSplit } from '../support';

export function routingScenarios(h: ProviderHarness): void {
  test('unmatched messages go to the application shadow', () =>
    withSplit(h, async (t, engines) => {
      const e = engines.track(h.engine(t, { logger: testLogger() }));
      await running(e, 1, []);
      const input = [...batch('plain', 10, () => ({ [USER]: 'nobody' })), ...batch('bare', 5)];
      await h.produce(t, input);
      const app = await h.read(t.appShadow, ids(input));
      assertDelivery({ inputs: ids(input), destinations: { app: seenIds(app) } });
      await waitFor(
        'source drained',
        () => h.backlog(t.source),
        (n) => n === 0,
      );
      assert.equal(e.status().app.published, input.length);
    }));

  test('a single filter takes exactly its messages', () =>
    withSplit(h, async (t, engines) => {
      const e = engines.track(h.engine(t, { logger: testLogger() }));
      const alice = t.route('alice', { [USER]: 'alice' });
      await running(e, 1, [alice]);
      const mine = batch('alice', 8, () => ({ [USER]: 'alice' }));
      const others = [...batch('bob', 8, () => ({ [USER]: 'bob' })), ...batch('none', 4)];
      await h.produce(t, [...mine, ...others]);
      const session = await h.read(alice.shadow, ids(mine));
      const app = await h.read(t.appShadow, ids(others));
      assert.deepEqual(seenIds(session).sort(), ids(mine).sort());
      assertDelivery({
        inputs: [...ids(mine), ...ids(others)],
        destinations: { [alice.shadow]: seenIds(session), app: seenIds(app) },
      });
      assert.equal(e.status().routes.find((r) => r.routeId === 'alice')?.published, mine.length);
    }));

  test('disjoint filters: each message reaches its one route', () =>
    withSplit(h, async (t, engines) => {
      const e = engines.track(h.engine(t, { logger: testLogger() }));
      const a = t.route('a', { [USER]: 'alice' });
      const b = t.route('b', { [USER]: 'bob' });
      const c = t.route('c', { [USER]: 'carol', team: 'blue' }); // two keys, AND-ed
      await running(e, 1, [a, b, c]);
      const toA = batch('a', 4, () => ({ [USER]: 'alice', team: 'blue' }));
      const toB = batch('b', 4, () => ({ [USER]: 'bob' }));
      const toC = batch('c', 4, () => ({ [USER]: 'carol', team: 'blue', extra: 'x' }));
      const toApp = [
        ...batch('carol-only', 3, () => ({ [USER]: 'carol' })),
        ...batch('blue-only', 3, () => ({ team: 'blue' })),
      ];
      await h.produce(t, [...toA, ...toB, ...toC, ...toApp]);
      const seen = {
        [a.shadow]: seenIds(await h.read(a.shadow, ids(toA))),
        [b.shadow]: seenIds(await h.read(b.shadow, ids(toB))),
        [c.shadow]: seenIds(await h.read(c.shadow, ids(toC))),
        app: seenIds(await h.read(t.appShadow, ids(toApp))),
      };
      assertDelivery({ inputs: ids([...toA, ...toB, ...toC, ...toApp]), destinations: seen });
      assert.deepEqual(seen[c.shadow]!.sort(), ids(toC).sort());
      assert.deepEqual(seen.app!.sort(), ids(toApp).sort());
    }));

  test('an overlapping filter is rejected and the running table stays', () =>
    withSplit(h, async (t, engines) => {
      const e = engines.track(h.engine(t, { logger: testLogger() }));
      const alice = t.route('alice', { [USER]: 'alice' });
      await running(e, 1, [alice]);
      const team = t.route('team', { team: 'blue' }); // {user=alice} and {team=blue} overlap
      const refused = await e.reconcileRoutes(2, [alice, team]);
      assert.equal(refused.kind, 'rejected', JSON.stringify(refused));
      if (refused.kind === 'rejected') {
        const text = JSON.stringify(refused.errors);
        assert.match(text, /alice/, 'the error names the other route');
        assert.match(text, /team/);
      }
      const everything = t.route('everything', {}); // the empty filter overlaps every filter
      assert.equal((await e.reconcileRoutes(2, [alice, everything])).kind, 'rejected');
      assert.equal(e.status().generation, 1);
      assert.deepEqual(
        e.status().routes.map((r) => [r.routeId, r.state]),
        [['alice', 'active']],
      );
      const both = batch('both', 3, () => ({ [USER]: 'alice', team: 'blue' }));
      const blue = batch('blue', 3, () => ({ team: 'blue' }));
      await h.produce(t, [...both, ...blue]);
      const seen = {
        [alice.shadow]: seenIds(await h.read(alice.shadow, ids(both))),
        app: seenIds(await h.read(t.appShadow, ids(blue))),
      };
      assertDelivery({ inputs: ids([...both, ...blue]), destinations: seen });
      assert.deepEqual(seen[alice.shadow]!.sort(), ids(both).sort());
      // The refused generation was not consumed: the same number with a valid table works.
      assert.equal(done(await e.reconcileRoutes(2, [alice])).value.generation, 2);
    }));

  test('header edge cases: exact keys and values, non-string values, Unicode, the empty filter', () =>
    withSplit(h, async (t, engines) => {
      const e = engines.track(h.engine(t, { logger: testLogger() }));
      const alice = t.route('alice', { [USER]: 'alice' });
      const uni = t.route('uni', { [USER]: 'jürgen ✓ 名前', 'x-ünï': 'ja' });
      await running(e, 1, [alice, uni]);
      const toAlice = [
        ...batch('exact', 2, () => ({ [USER]: 'alice' })),
        ...batch('more-headers', 2, () => ({ [USER]: 'alice', other: 'value', empty: '' })),
      ];
      const toUni = batch('unicode', 2, () => ({ [USER]: 'jürgen ✓ 名前', 'x-ünï': 'ja' }));
      const toApp = [
        ...batch('value-case', 2, () => ({ [USER]: 'Alice' })),
        ...batch('key-case', 2, () => ({ 'X-Queue-Split-User': 'alice' })),
        ...batch('trailing-space', 2, () => ({ [USER]: 'alice ' })),
        ...batch('empty-value', 2, () => ({ [USER]: '' })),
        ...batch('non-string', 2, () => ({ [USER]: NON_STRING })),
        ...batch('unicode-near', 2, () => ({ [USER]: 'jürgen ✓ 名', 'x-ünï': 'ja' })),
        // The same text decomposed (u + combining diaeresis): values compare as exact strings.
        ...batch('unicode-nfd', 2, () => ({ [USER]: 'ju\u0308rgen ✓ 名前', 'x-ünï': 'ja' })),
      ];
      await h.produce(t, [...toAlice, ...toUni, ...toApp]);
      const seen = {
        [alice.shadow]: seenIds(await h.read(alice.shadow, ids(toAlice))),
        [uni.shadow]: seenIds(await h.read(uni.shadow, ids(toUni))),
        app: seenIds(await h.read(t.appShadow, ids(toApp))),
      };
      assertDelivery({ inputs: ids([...toAlice, ...toUni, ...toApp]), destinations: seen });
      assert.deepEqual(seen.app!.sort(), ids(toApp).sort());

      // The empty filter means "all messages" (and so must be the only route).
      const all = t.route('all', {});
      done(await e.reconcileRoutes(2, [all]));
      const any = [...batch('any-a', 2, () => ({ [USER]: 'alice' })), ...batch('any-none', 2)];
      await h.produce(t, any);
      const caught = seenIds(await h.read(all.shadow, ids(any)));
      assert.deepEqual(caught.sort(), ids(any).sort());
    }));
}
