// Fencing and broker-side failures: a stale engine is fenced by its successor, and an
// unroutable publish (shadow deleted behind the engine's back) neither acks nor loses.
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { sleep } from '../../support/poll';
import type { Engine } from '../../../agent/engine/contract';
import type { ProviderHarness } from '../harness';
import { assertDelivery, batch, ids, seenIds, USER } from '../delivery';
import { done, running } from '../steps';
import { testLogger, waitFor, withSplit } from '../support';

const publishedBy = (e: Engine) =>
  e.status().app.published + e.status().routes.reduce((n, r) => n + r.published, 0);
const hasCondition = (e: Engine, code: string) => e.status().conditions.some((c) => c.code === code);

export function fencingScenarios(h: ProviderHarness): void {
  test('a stale engine is fenced: a second engine takes over, the first publishes no more', () =>
    withSplit(h, async (t, engines) => {
      const alice = t.route('alice', { [USER]: 'alice' });
      const first = engines.track(h.engine(t, { logger: testLogger() }));
      const started = await running(first, 1, [alice]);
      const before = batch('before', 6, (i) => ({ [USER]: i % 2 ? 'alice' : 'bob' }));
      await h.produce(t, before);
      const seenBefore = {
        [alice.shadow]: seenIds(await h.read(alice.shadow, ids(before.filter((_, i) => i % 2)))),
        app: seenIds(await h.read(t.appShadow, ids(before.filter((_, i) => i % 2 === 0)))),
      };
      assertDelivery({ inputs: ids(before), destinations: seenBefore });

      // The successor starts from the first one's checkpoint. While the first holds the fence
      // it must wait; once the first's broker session is severed it takes over.
      const second = engines.track(h.engine(t, { logger: testLogger() }));
      let outcome = await second.recover(started.checkpoint);
      for (let i = 0; outcome.kind === 'pending' && i < 10; i++) {
        assert.equal(publishedBy(second), 0);
        if (outcome.code === 'fenced') await h.preempt(first);
        else await sleep(outcome.retryAfterMs); // e.g. the source still lists the old consumer
        outcome = await second.recover(started.checkpoint);
      }
      done(outcome, 'the successor takes over');
      await waitFor(
        'the first engine reports itself fenced',
        async () => hasCondition(first, 'fenced'),
        Boolean,
      );
      const firstPublished = publishedBy(first);

      const after = batch('after', 6, (i) => ({ [USER]: i % 2 ? 'alice' : 'bob' }));
      await h.produce(t, after);
      const seenAfter = {
        [alice.shadow]: seenIds(await h.read(alice.shadow, ids(after.filter((_, i) => i % 2)))),
        app: seenIds(await h.read(t.appShadow, ids(after.filter((_, i) => i % 2 === 0)))),
      };
      assertDelivery({ inputs: ids(after), destinations: seenAfter });
      assert.equal(publishedBy(first), firstPublished, 'the fenced engine published nothing');
      assert.equal(publishedBy(second), after.length);
      assert.ok(hasCondition(first, 'fenced'));
    }));

  test('unroutable publish (shadow deleted behind the engine): not acked, not lost', () =>
    withSplit(h, async (t, engines) => {
      const alice = t.route('alice', { [USER]: 'alice' });
      const e = engines.track(h.engine(t, { logger: testLogger() }));
      await running(e, 1, [alice]);
      await h.deleteBehindEngine(alice.shadow);
      const toAlice = batch('orphan', 3, () => ({ [USER]: 'alice' }));
      const toApp = batch('fine', 3, () => ({ [USER]: 'bob' }));
      await h.produce(t, [...toAlice, ...toApp]);
      const app = seenIds(await h.read(t.appShadow, ids(toApp)));
      assert.deepEqual(app.sort(), ids(toApp).sort(), 'other destinations keep flowing');
      await waitFor(
        'destination-missing reported',
        async () => hasCondition(e, 'destination-missing'),
        Boolean,
      );
      assert.match(
        e.status().conditions.find((c) => c.code === 'destination-missing')!.reason,
        new RegExp(alice.shadow),
      );
      await waitFor(
        'the orphaned messages stay on the source',
        () => h.backlog(t.source),
        (n) => n === toAlice.length,
      );
      assert.equal(await h.exists(alice.shadow), false, 'the engine did not silently recreate the shadow');

      await h.recreate(alice.shadow);
      const session = seenIds(await h.read(alice.shadow, ids(toAlice)));
      assertDelivery({ inputs: ids([...toAlice, ...toApp]), destinations: { [alice.shadow]: session, app } });
      await waitFor(
        'source drained',
        () => h.backlog(t.source),
        (n) => n === 0,
      );
      await waitFor('condition cleared', async () => !hasCondition(e, 'destination-missing'), Boolean);
    }));
}
