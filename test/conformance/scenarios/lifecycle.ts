// Route and split lifecycles: attach, route stop, session disconnect with residue moved to the
// application shadow, app drain and handback with unacked deliveries, and cleanup.
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { sleep } from '../../support/poll';
import type { ProviderHarness } from '../harness';
import { assertDelivery, batch, ids, seenIds, USER } from '../delivery';
import { done, expectPending, running, untilDone } from '../steps';
import { testLogger, waitFor, withSplit } from '../support';

export function lifecycleScenarios(h: ProviderHarness): void {
  test('attach, route stop, session consumer disconnect, residue moved to the app shadow, cleanup', () =>
    withSplit(h, async (t, engines) => {
      const e = engines.track(h.engine(t, { logger: testLogger() }));
      await running(e, 1, []);
      const alice = t.route('alice', { [USER]: 'alice' });
      assert.equal(done(await e.reconcileRoutes(2, [alice]), 'attach').value.generation, 2);

      const forAlice = batch('alice', 20, () => ({ [USER]: 'alice' }));
      const forBob = batch('bob', 5, () => ({ [USER]: 'bob' }));
      await h.produce(t, [...forAlice, ...forBob]);
      // The route's own reading, for its QueueSplit status (the broker's counts trail a little;
      // Kafka's is an upper bound: transaction markers take offsets too).
      await waitFor(
        "alice's session lag counts her copies, waiting unconsumed",
        async () => (await e.shadowLag()).routes,
        (routes) => (routes?.alice ?? 0) >= forAlice.length,
      );
      assert.deepEqual(Object.keys((await e.shadowLag()).routes ?? {}), ['alice'], 'routes only');
      const session = await h.consume(alice.shadow, { prefetch: 4, ackFirst: 6 });
      await waitFor(
        'session holds 4 unacked after acking 6',
        async () => session.received.length,
        (n) => n >= 10,
      );

      assert.equal(done(await e.reconcileRoutes(3, []), 'route stop').value.generation, 3);
      assert.deepEqual(
        e.status().routes.map((r) => [r.routeId, r.state]),
        [['alice', 'removed']],
      );
      const late = batch('late-alice', 5, () => ({ [USER]: 'alice' }));
      await h.produce(t, late); // the route is gone: these go to the application

      expectPending(await e.drainRoute(alice), 'consumers-attached', 'drain with the session attached');
      assert.equal(await h.exists(alice.shadow), true);
      await session.kill(); // its 4 unacked deliveries go back to the shadow
      const drained = await untilDone(() => e.drainRoute(alice), 'drainRoute');
      assert.equal(drained.value.moved, forAlice.length - session.acked.length);
      if (h.cleanupRetainsShadows) {
        assert.deepEqual(
          drained.value.retained.map((r) => r.name),
          [alice.shadow],
        );
        assert.equal(await h.exists(alice.shadow), true, 'kept as cleanup-pending');
      } else {
        assert.deepEqual(drained.value.deleted, [alice.shadow]);
        assert.equal(await h.exists(alice.shadow), false);
      }
      assert.deepEqual(e.status().routes, []);
      assert.deepEqual(done(await e.drainRoute(alice), 'drainRoute again').value.moved, 0);

      const residue = forAlice.filter((m) => !session.acked.includes(m.id));
      const app = seenIds(await h.read(t.appShadow, ids([...forBob, ...residue, ...late])));
      assertDelivery({
        inputs: ids([...forAlice, ...forBob, ...late]),
        destinations: { [alice.shadow]: session.acked, app },
      });

      const stopped = done(await e.stop(), 'stop');
      await untilDone(() => e.drainApplication(), 'drainApplication');
      await untilDone(() => e.commitHandoff(stopped.value.handoff), 'commitHandoff');
      await untilDone(() => e.verifyCleanupReady(), 'verifyCleanupReady');
      const cleaned = (await untilDone(() => e.cleanup(), 'cleanup')).value;
      if (h.cleanupRetainsShadows) {
        assert.deepEqual(cleaned.retained.map((r) => r.name).sort(), [alice.shadow, t.appShadow].sort());
        assert.equal(await h.exists(t.appShadow), true);
      } else {
        assert.deepEqual(cleaned.deleted, [t.appShadow]);
        assert.equal(await h.exists(t.appShadow), false);
      }
      assert.equal(await h.exists(t.source), true, 'the source is never touched');
    }));

  test('the source backlog (what the split adds to the app’s lag): absent until the engine copies, then what it has not copied, 0 once it has', () =>
    withSplit(h, async (t, engines) => {
      const e = engines.track(h.engine(t, { logger: testLogger() }));
      const input = batch('backlog', 30, () => ({ [USER]: 'bob' }));
      await h.produce(t, input);
      await untilDone(() => e.prepare(), 'prepare', 40_000, ['broker-unavailable']);
      assert.equal((await e.shadowLag()).source, undefined, 'prepared: the app still reads its source');
      await running(e, 1, []);
      const app = seenIds(await h.read(t.appShadow, ids(input)));
      assertDelivery({ inputs: ids(input), destinations: { app } });
      // The broker's own counts (RabbitMQ's statistics, SQS's approximate ones) trail a little.
      await waitFor(
        'the source backlog at 0 once everything waiting was copied',
        async () => (await e.shadowLag()).source,
        (n) => n === 0,
      );
      done(await e.stop(), 'stop');
      assert.equal((await e.shadowLag()).source, undefined, 'stopped: the app reads its source again');
    }));

  test('the application’s consumers, read live from the broker: none until the app consumes its shadow, then its source once the pump stopped (SQS cannot say)', () =>
    withSplit(h, async (t, engines) => {
      // The controller's evidence that a redirected, and later a restored, app consumes
      // (docs/design.md "Where activation time goes"): a count that said 1 without a consumer
      // would end the rollout proof over an app that never attached.
      const e = engines.track(h.engine(t, { logger: testLogger() }));
      await running(e, 1, []);
      if (!h.countsConsumers) {
        assert.equal(await e.appConsumers('appShadow'), undefined, 'the broker cannot say');
        assert.equal(await e.appConsumers('source'), undefined, 'the broker cannot say');
        return;
      }
      assert.equal(await e.appConsumers('appShadow'), 0, 'nobody consumes the application shadow yet');
      const input = batch('consumers', 3, () => ({ [USER]: 'bob' }));
      await h.produce(t, input);
      const app = await h.consume(t.appShadow, { prefetch: 5, ackFirst: 3 });
      // Kafka: a member counts once the group has assigned it a share of the shadow.
      await waitFor(
        'the app consumer is counted',
        () => e.appConsumers('appShadow'),
        (n) => n === 1,
      );
      await waitFor(
        'and it consumes',
        async () => app.received.length,
        (n) => n >= input.length,
      );
      await app.kill();
      await waitFor(
        'gone once it left',
        () => e.appConsumers('appShadow'),
        (n) => n === 0,
      );

      // As in a handback's restore: the pump stopped, so its consumer is gone from the source.
      done(await e.stop(), 'stop');
      assert.equal(await e.appConsumers('source'), 0, 'the pump stopped: nobody consumes the source');
      const restored = await h.consume(t.source, { prefetch: 5, ackFirst: 0 });
      await waitFor(
        'the restored app is counted on its source',
        () => e.appConsumers('source'),
        (n) => n === 1,
      );
      await restored.kill();
    }));

  test('app drain and handback with in-flight (unacked) deliveries', () =>
    withSplit(h, async (t, engines) => {
      const e = engines.track(h.engine(t, { logger: testLogger(), stepTimeoutMs: 6_000 }));
      await running(e, 1, []);
      const first = batch('first', 30);
      await h.produce(t, first);
      const app = await h.consume(t.appShadow, { prefetch: 5, ackFirst: 10 });
      await waitFor(
        'app acked 10 and holds 5',
        async () => app.received.length,
        (n) => n >= 15,
      );

      const stopped = done(await e.stop(), 'stop');
      const afterStop = batch('after-stop', 10);
      await h.produce(t, afterStop); // the pump is stopped: these stay on the source
      expectPending(await e.drainApplication(), 'backlog', 'drain while the app holds unacked deliveries');

      await app.kill(); // scaled to zero: its unacked deliveries return to the app shadow
      expectPending(await e.drainApplication(), 'backlog', 'drain with requeued deliveries');
      let handoff = await e.commitHandoff(stopped.value.handoff);
      for (let i = 0; handoff.kind === 'pending' && handoff.code === 'consumers-attached' && i < 20; i++) {
        await sleep(handoff.retryAfterMs); // the broker is still letting go of the killed consumer
        handoff = await e.commitHandoff(stopped.value.handoff);
      }
      let drainedByApp: readonly string[] = [];
      if (handoff.kind === 'pending' && handoff.code === 'backlog') {
        // A provider whose handoff cannot move residue: the app drains it first.
        const again = await h.consume(t.appShadow, { prefetch: 50, ackFirst: Infinity });
        drainedByApp = again.acked;
        await waitFor(
          'app shadow drained',
          () => h.backlog(t.appShadow),
          (n) => n === 0,
        );
        await again.kill();
        await untilDone(() => e.drainApplication(), 'drainApplication');
        handoff = await e.commitHandoff(stopped.value.handoff);
      }
      done(handoff, 'commitHandoff');
      assert.equal(e.status().phase, 'handed-off');

      // The application reads its source again.
      const consumed = [...app.acked, ...drainedByApp];
      const unconsumed = [...first.filter((m) => !consumed.includes(m.id)), ...afterStop];
      const fromSource = seenIds(await h.read(t.source, ids(unconsumed)));
      assertDelivery({
        inputs: ids([...first, ...afterStop]),
        destinations: { app: [...consumed, ...fromSource] },
      });
      await untilDone(() => e.verifyCleanupReady(), 'verifyCleanupReady');
      await untilDone(() => e.cleanup(), 'cleanup');
    }));

  test('cleanup retries prove a non-empty shadow is never deleted', () =>
    withSplit(h, async (t, engines) => {
      const e = engines.track(h.engine(t, { logger: testLogger(), stepTimeoutMs: 8_000 }));
      await running(e, 1, []);
      const input = batch('m', 4);
      await h.produce(t, input);
      await h.read(t.appShadow, ids(input));
      const stopped = done(await e.stop(), 'stop');
      await untilDone(() => e.drainApplication(), 'drainApplication');
      await untilDone(() => e.commitHandoff(stopped.value.handoff), 'commitHandoff');

      const stray = batch('stray', 2);
      await h.inject(t.appShadow, stray); // someone published into the shadow
      expectPending(await e.verifyCleanupReady(), 'backlog', 'verify with 2 ready');
      expectPending(await e.cleanup(), 'backlog', 'cleanup with 2 ready');
      assert.equal(await h.exists(t.appShadow), true);

      // One held unacknowledged without a consumer, the other consumed: nothing is ready and
      // nobody consumes, which a broker's if-empty/if-unused delete alone would accept.
      const held = await h.holdOne(t.appShadow);
      const other = stray.find((m) => m.id !== held.id)!;
      assert.deepEqual(seenIds(await h.read(t.appShadow, [other.id])), [other.id]);
      expectPending(await e.cleanup(), 'backlog', 'cleanup with 1 unacked');
      assert.equal(await h.exists(t.appShadow), true);
      await held.release(); // back to ready
      expectPending(await e.cleanup(), 'backlog', 'cleanup with 1 requeued');
      assert.deepEqual(seenIds(await h.read(t.appShadow, [held.id])), [held.id]);

      const cleaned = await untilDone(() => e.cleanup(), 'cleanup');
      assert.equal(await h.exists(t.appShadow), h.cleanupRetainsShadows);
      assert.equal(cleaned.value.retained.length, h.cleanupRetainsShadows ? 1 : 0);
      assert.deepEqual(done(await e.cleanup(), 'cleanup again').value.retained, cleaned.value.retained);
    }));
}
