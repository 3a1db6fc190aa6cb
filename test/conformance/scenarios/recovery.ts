// Restart from each persisted state via `recover`, and the activation rollback (`abort`).
// A restart here is what the agent does after a crash or a reschedule: a new engine object in
// the same place, handed the last checkpoint the controller persisted.
import assert from 'node:assert/strict';
import { test } from 'node:test';
import type { Checkpoint, Engine, EnginePhase } from '../../../agent/engine/contract';
import type { ProviderHarness, Topology } from '../harness';
import { assertDelivery, batch, ids, seenIds, USER } from '../delivery';
import { done, untilDone } from '../steps';
import { testLogger, waitFor, withSplit } from '../support';

export function recoveryScenarios(h: ProviderHarness): void {
  test('restart from each persisted state via recover', () =>
    withSplit(h, async (t, engines) => {
      let e = engines.track(h.engine(t, { logger: testLogger() }));
      const restart = async (checkpoint: Checkpoint, phase: EnginePhase): Promise<Engine> => {
        await e.close();
        e = engines.track(h.engine(t, { logger: testLogger() }));
        const recovered = await untilDone(() => e.recover(checkpoint), `recover into ${phase}`);
        assert.equal(recovered.value.phase, phase);
        assert.equal(e.status().phase, phase);
        // Idempotent: the same checkpoint again is a no-op.
        assert.equal(done(await e.recover(checkpoint), 'recover again').value.phase, phase);
        return e;
      };
      const alice = t.route('alice', { [USER]: 'alice' });

      let cp = done(await e.prepare(), 'prepare').checkpoint;
      done(await e.prepare(), 'prepare again');
      e = await restart(cp, 'prepared');
      cp = done(await e.reconcileRoutes(1, [alice]), 'routes').checkpoint;
      e = await restart(cp, 'prepared');
      assert.equal(e.status().generation, 1);
      assert.deepEqual(
        e.status().routes.map((r) => r.routeId),
        ['alice'],
      );

      cp = done(await e.start(), 'start').checkpoint;
      done(await e.start(), 'start again');
      const one = await deliverAndRead(h, t, alice.shadow, 'one');
      e = await restart(cp, 'running');
      const two = await deliverAndRead(h, t, alice.shadow, 'two'); // the pump resumed

      cp = done(await e.reconcileRoutes(2, []), 'route stop').checkpoint;
      assert.equal(done(await e.reconcileRoutes(1, [alice]), 'stale generation').value.superseded, true);
      e = await restart(cp, 'running');
      assert.deepEqual(
        e.status().routes.map((r) => [r.routeId, r.state]),
        [['alice', 'removed']],
      );
      // Pending is a legitimate answer until the broker statistics catch up (quorum: a 5 s tick).
      const drained = await untilDone(() => e.drainRoute(alice), 'drainRoute', 90_000);
      e = await restart(drained.checkpoint, 'running');
      assert.deepEqual(e.status().routes, []);
      assert.deepEqual(e.status().retained, drained.value.retained, 'retained shadows come back');
      assert.deepEqual(
        done(await e.drainRoute(alice), 'drainRoute again').value.retained,
        drained.value.retained,
      );

      const stopped = done(await e.stop(), 'stop');
      e = await restart(stopped.checkpoint, 'stopped');
      cp = (await untilDone(() => e.drainApplication(), 'drainApplication', 90_000)).checkpoint;
      e = await restart(cp, 'app-drained');
      cp = done(await e.commitHandoff(stopped.value.handoff), 'commitHandoff').checkpoint;
      e = await restart(cp, 'handed-off');
      done(await e.commitHandoff(stopped.value.handoff), 'commitHandoff again');
      // Statistics lag under load: a reader that just left can still show as a consumer.
      const cleaned = await untilDone(() => e.cleanup(), 'cleanup', 90_000);
      e = await restart(cleaned.checkpoint, 'cleaned');
      assert.deepEqual(done(await e.cleanup(), 'cleanup again').value.retained, cleaned.value.retained);
      assert.equal(await h.exists(t.appShadow), h.cleanupRetainsShadows);
      assertDelivery({
        inputs: [...one.inputs, ...two.inputs],
        destinations: { ...merge(one.seen, two.seen) },
      });
    }));

  test('a restart that lost a removed route still drains its shadow by the recorded route', () =>
    withSplit(h, async (t, engines) => {
      const e = engines.track(h.engine(t, { logger: testLogger() }));
      const alice = t.route('alice', { [USER]: 'alice' });
      const started = done(await e.prepare(), 'prepare');
      done(await e.reconcileRoutes(1, [alice]), 'routes');
      done(await e.start(), 'start');
      const waiting = batch('stranded', 6, () => ({ [USER]: 'alice' }));
      await h.produce(t, waiting);
      await waitFor(
        'alice messages in her shadow',
        async () => e.status().routes[0]?.published ?? 0,
        (n) => n === waiting.length,
      );
      // The agent dies; its successor only has a checkpoint from before the route existed.
      await e.close();
      const successor = engines.track(h.engine(t, { logger: testLogger() }));
      // Every step may answer pending (the broker releasing the predecessor's fence, statistics
      // catching up under load): the controller retries, and so does this test.
      await untilDone(() => successor.recover(started.checkpoint), 'recover');
      await untilDone(() => successor.start(), 'start');
      await untilDone(() => successor.reconcileRoutes(2, []), 'routes without alice');
      const drained = await untilDone(() => successor.drainRoute(alice), 'drainRoute', 90_000);
      assert.equal(drained.value.moved, waiting.length, 'the stranded messages were moved');
      const app = seenIds(await h.read(t.appShadow, ids(waiting)));
      assertDelivery({ inputs: ids(waiting), destinations: { app } });
    }));

  test('recover from a checkpoint older than the published route table classifies the backlog under the published table', () =>
    withSplit(h, async (t, engines) => {
      // The agent's freshest checkpoint was lost, so its successor only has the one
      // from before the route existed, while the controller publishes generation 1 with it.
      const e = engines.track(h.engine(t, { logger: testLogger() }));
      const alice = t.route('alice', { [USER]: 'alice' });
      done(await e.prepare(), 'prepare');
      const started = done(await e.start(), 'start');
      done(await e.reconcileRoutes(1, [alice]), 'routes');
      await e.close(); // the agent dies; a backlog builds up while it is down
      const toAlice = batch('backlog-alice', 10, () => ({ [USER]: 'alice' }));
      const toApp = batch('backlog-bob', 10, () => ({ [USER]: 'bob' }));
      await h.produce(t, [...toAlice, ...toApp]);

      const successor = engines.track(h.engine(t, { logger: testLogger() }));
      const published = { generation: 1, routes: [alice] };
      await untilDone(() => successor.recover(started.checkpoint, published), 'recover');
      const seen = {
        [alice.shadow]: seenIds(await h.read(alice.shadow, ids(toAlice), 10_000)),
        app: seenIds(await h.read(t.appShadow, ids(toApp), 10_000)),
      };
      const aliceIds = new Set(ids(toAlice));
      assert.deepEqual(
        seen.app.filter((id) => aliceIds.has(id)),
        [],
        "no message of alice's active route reached the application shadow",
      );
      assertDelivery({ inputs: ids([...toAlice, ...toApp]), destinations: seen });
      assert.equal(successor.status().generation, 1, 'the published generation is in force');
      // The agent's next pass installs the same table: nothing to change, barrier passed.
      assert.equal(done(await successor.reconcileRoutes(1, [alice]), 'routes again').value.generation, 1);
    }));

  test('abort rolls shadow contents back to the source, across a restart', () =>
    withSplit(h, async (t, engines) => {
      const e = engines.track(h.engine(t, { logger: testLogger() }));
      const alice = t.route('alice', { [USER]: 'alice' });
      done(await e.prepare(), 'prepare');
      done(await e.reconcileRoutes(1, [alice]), 'routes');
      const started = done(await e.start(), 'start');
      const input = batch('abort', 12, (i) => ({ [USER]: i % 3 === 0 ? 'alice' : 'bob' }));
      await h.produce(t, input);
      await waitFor(
        'all copied to shadows',
        async () => e.status().app.published + e.status().routes[0]!.published,
        (n) => n === input.length,
      );
      await e.close(); // the agent dies; its successor performs the rollback

      const successor = engines.track(h.engine(t, { logger: testLogger() }));
      await untilDone(() => successor.recover(started.checkpoint), 'recover');
      const aborted = await untilDone(() => successor.abort(), 'abort');
      assert.equal(aborted.value.restored, input.length);
      assert.equal(done(await successor.abort(), 'abort again').value.restored, 0);
      assert.equal(successor.status().phase, 'aborted');
      done(await successor.verifyCleanupReady(), 'verifyCleanupReady');
      const cleaned = done(await successor.cleanup(), 'cleanup');
      assert.equal(cleaned.value.retained.length, h.cleanupRetainsShadows ? 2 : 0);
      for (const shadow of [alice.shadow, t.appShadow]) {
        assert.equal(await h.exists(shadow), h.cleanupRetainsShadows, shadow);
      }
      // The application gets every message back on its source, once.
      const back = seenIds(await h.read(t.source, ids(input)));
      assertDelivery({ inputs: ids(input), destinations: { source: back } });
    }));
}

/** Produces 3 messages for the route and 3 for the app, reads both, checks exactly-once. */
async function deliverAndRead(h: ProviderHarness, t: Topology, routeShadow: string, tag: string) {
  const toRoute = batch(`${tag}-alice`, 3, () => ({ [USER]: 'alice' }));
  const toApp = batch(`${tag}-bob`, 3, () => ({ [USER]: 'bob' }));
  await h.produce(t, [...toRoute, ...toApp]);
  const seen = {
    [routeShadow]: seenIds(await h.read(routeShadow, ids(toRoute))),
    app: seenIds(await h.read(t.appShadow, ids(toApp))),
  };
  const inputs = ids([...toRoute, ...toApp]);
  assertDelivery({ inputs, destinations: seen });
  return { inputs, seen };
}

function merge(a: Record<string, string[]>, b: Record<string, string[]>): Record<string, string[]> {
  const out: Record<string, string[]> = { ...a };
  for (const [k, v] of Object.entries(b)) out[k] = [...(out[k] ?? []), ...v];
  return out;
}
