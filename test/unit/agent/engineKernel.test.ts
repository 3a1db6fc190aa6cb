// The engine kernel against an in-memory broker port: the phase table, the step wrapper (fence,
// broker errors, programming errors), route-table reconciliation with its generation check and
// publish barrier, removed and retained routes, checkpoints and recovery. The conformance suite
// runs the same contract against the real brokers.
import assert from 'node:assert/strict';
import { test } from 'node:test';
import {
  ENGINE_PHASES,
  type EnginePhase,
  type Outcome,
  type RouteSpec,
} from '../../../agent/engine/contract';
import { STEP_PHASES, type StepName } from '../../../agent/engine/phases';
import { checkpointIn, MemoryBroker, MemoryEngine } from './memoryBroker';

const alice: RouteSpec = { routeId: 'alice', filter: { user: 'alice' }, shadow: 'orders-alice' };
/** A message's headers, as a provider's port normalises them. */
const user = (name: string) => new Map([['user', name]]);
const bob: RouteSpec = { routeId: 'bob', filter: { user: 'bob' }, shadow: 'orders-bob' };

function finished<T>(outcome: Outcome<T>, what: string): Extract<Outcome<T>, { kind: 'done' }> {
  assert.equal(outcome.kind, 'done', `${what}: ${JSON.stringify(outcome)}`);
  return outcome as Extract<Outcome<T>, { kind: 'done' }>;
}

function done<T>(outcome: Outcome<T>, what: string): T {
  return finished(outcome, what).value;
}

/** A fresh engine in `phase`: recovered from a checkpoint, fresh for `new`, closed for `closed`. */
async function engineIn(phase: EnginePhase): Promise<{ engine: MemoryEngine; broker: MemoryBroker }> {
  const broker = new MemoryBroker();
  const engine = new MemoryEngine(broker);
  if (phase === 'closed') await engine.close();
  else if (phase !== 'new')
    done(await engine.recover(checkpointIn(phase, {}, broker)), `recover into ${phase}`);
  assert.equal(engine.status().phase, phase);
  return { engine, broker };
}

const call: Record<StepName, (e: MemoryEngine) => Promise<Outcome<unknown>>> = {
  prepare: (e) => e.prepare(),
  start: (e) => e.start(),
  reconcileRoutes: (e) => e.reconcileRoutes(1, [alice]),
  drainRoute: (e) => e.drainRoute(bob),
  stop: (e) => e.stop(),
  abort: (e) => e.abort(),
  drainApplication: (e) => e.drainApplication(),
  commitHandoff: (e) =>
    e.commitHandoff({ provider: 'memory', data: { activationId: 'act-1', stoppedAt: null } }),
  verifyCleanupReady: (e) => e.verifyCleanupReady(),
  cleanup: (e) => e.cleanup(),
  recover: (e) => e.recover(checkpointIn('stopped')),
};

test('every step runs in the phases of its table entry, repeats without the broker, and is refused elsewhere', async () => {
  for (const step of Object.keys(call) as StepName[]) {
    const rule = STEP_PHASES[step];
    for (const phase of ENGINE_PHASES) {
      const { engine, broker } = await engineIn(phase);
      const before = broker.calls.length;
      const outcome = await call[step](engine);
      const calls = broker.calls.slice(before);
      const where = `${step} in ${phase}`;
      if ((rule.runs as readonly EnginePhase[]).includes(phase)) {
        assert.ok(calls.length > 0, `${where} does its broker work`);
        assert.notEqual(outcome.kind, 'rejected', `${where}: ${JSON.stringify(outcome)}`);
      } else if ((rule.repeats as readonly EnginePhase[]).includes(phase) && step !== 'recover') {
        assert.equal(outcome.kind, 'done', where);
        assert.deepEqual(calls, [], `${where} answers without the broker`);
      } else if (step !== 'recover') {
        assert.equal(outcome.kind, 'rejected', where);
        assert.deepEqual(calls, [], `${where} changes nothing`);
        if (outcome.kind === 'rejected')
          assert.equal(outcome.errors[0]?.problem, `${step} is not possible in phase ${phase}`);
        assert.equal(engine.status().phase, phase, `${where} keeps the phase`);
      }
    }
  }
});

test('the phase table says what both engines did before the kernel: where each step runs and where it repeats', () => {
  const table = Object.fromEntries(
    Object.entries(STEP_PHASES).map(([step, rule]) => [
      step,
      `${rule.runs.join(' ')} | ${rule.repeats.join(' ')}`,
    ]),
  );
  const later = 'prepared running stopped app-drained handed-off aborted cleaned';
  assert.deepEqual(table, {
    prepare: `new | ${later}`,
    start: 'prepared stopped app-drained | running',
    reconcileRoutes: 'prepared running stopped app-drained | ',
    drainRoute: 'prepared running stopped app-drained handed-off cleaned | ',
    stop: `${later} | `,
    abort: 'prepared running stopped app-drained | aborted cleaned',
    drainApplication: 'stopped app-drained | handed-off cleaned',
    commitHandoff: 'stopped app-drained | handed-off cleaned',
    verifyCleanupReady: 'handed-off aborted | cleaned',
    cleanup: 'handed-off aborted | cleaned',
    recover: `new | ${later}`,
  });
});

test('recover repeats only with the checkpoint the engine would write itself', async () => {
  const { engine, broker } = await engineIn('stopped');
  const own = finished(await engine.stop(), 'stop').checkpoint;
  const before = broker.calls.length;
  assert.equal(done(await engine.recover(own), 'recover with its own checkpoint').phase, 'stopped');
  const other = await engine.recover(checkpointIn('stopped', { generation: 3 }, broker));
  assert.equal(other.kind, 'rejected');
  assert.deepEqual(broker.calls.slice(before), [], 'no recovery work on a repeat');
});

test('a broker error is a retryable pending; a programming error is not', async () => {
  const { engine, broker } = await engineIn('new');
  broker.failNext = new Error('connection reset');
  const failed = await engine.prepare();
  assert.equal(failed.kind, 'pending');
  if (failed.kind === 'pending') {
    assert.equal(failed.code, 'broker-unavailable');
    assert.equal(failed.blockingReason, 'prepare failed: connection reset');
  }
  assert.equal(engine.status().phase, 'new');

  broker.failNext = new TypeError("Cannot read properties of undefined (reading 'partitions')");
  const bug = await engine.prepare();
  assert.equal(bug.kind, 'degraded');
  if (bug.kind === 'degraded') {
    assert.equal(bug.code, 'internal-error');
    assert.match(bug.reason, /prepare failed on a programming error: Cannot read properties/);
  }
  done(await engine.prepare(), 'prepare once the broker answers');
});

test('a lost fence answers every step, and the broker is not touched', async () => {
  const { engine, broker } = await engineIn('running');
  broker.fenceLost = true;
  const before = broker.calls.length;
  for (const step of Object.keys(call) as StepName[]) {
    const outcome = await call[step](engine);
    assert.equal(outcome.kind, 'degraded', step);
    if (outcome.kind === 'degraded') assert.equal(outcome.code, 'fenced');
  }
  assert.deepEqual(broker.calls.slice(before), []);
  assert.equal(engine.status().phase, 'running');
});

test('route tables: an older generation is superseded, the same one must be the same table, a newer one is checked before it replaces the running one', async () => {
  const { engine, broker } = await engineIn('prepared');
  assert.deepEqual(done(await engine.reconcileRoutes(2, [alice, bob]), 'install'), {
    generation: 2,
    superseded: false,
  });
  assert.deepEqual(broker.calls.at(-1), 'addRoutes alice,bob');
  assert.deepEqual(done(await engine.reconcileRoutes(1, []), 'older'), { generation: 2, superseded: true });
  done(await engine.reconcileRoutes(2, [bob, alice]), 'the same table in another order');
  assert.equal(
    (await engine.reconcileRoutes(2, [alice])).kind,
    'rejected',
    'another table under the same generation',
  );

  const refusals: [string, RouteSpec[]][] = [
    ['overlapping filters', [alice, { ...bob, filter: {} }]],
    ['a route whose shadow moved', [{ ...alice, shadow: 'orders-alice-2' }]],
    [
      'the port refuses a name',
      [{ ...alice, routeId: 'carol', filter: { user: 'carol' }, shadow: 'has space' }],
    ],
    ['a reserved name', [{ routeId: 'carol', filter: { user: 'carol' }, shadow: 'orders' }]],
    ['the application shadow', [{ routeId: 'carol', filter: { user: 'carol' }, shadow: 'orders-app' }]],
  ];
  for (const [what, routes] of refusals) {
    const before = broker.calls.length;
    assert.equal((await engine.reconcileRoutes(3, routes)).kind, 'rejected', what);
    assert.deepEqual(broker.calls.slice(before), [], `${what}: nothing created`);
    assert.equal(engine.status().generation, 2, `${what}: the running table stays`);
  }
  assert.deepEqual(
    engine.status().routes.map((r) => [r.routeId, r.state]),
    [
      ['alice', 'active'],
      ['bob', 'active'],
    ],
  );
});

test('the publish barrier: a new table and a drain wait until every copy selected under an older table is acknowledged', async () => {
  const { engine, broker } = await engineIn('prepared');
  done(await engine.reconcileRoutes(1, [alice]), 'routes');
  done(await engine.start(), 'start');
  broker.holdAcks = true;
  broker.publish({ id: 'a1', headers: user('alice') }, { id: 'b1', headers: user('bob') });
  engine.pump();
  assert.equal(engine.status().inFlight, 2);

  const waiting = await engine.reconcileRoutes(2, []);
  assert.equal(waiting.kind, 'pending');
  if (waiting.kind === 'pending') {
    assert.equal(waiting.code, 'publish-barrier');
    assert.equal(waiting.blockingReason, '2 copies selected before generation 2 await their ack');
  }
  // The table is in force already: nothing more is selected for alice.
  broker.publish({ id: 'a2', headers: user('alice') });
  engine.pump();
  assert.deepEqual(broker.ids('orders-app'), ['b1', 'a2']);
  const drain = await engine.drainRoute(alice);
  assert.equal(drain.kind, 'pending');
  if (drain.kind === 'pending') assert.equal(drain.code, 'publish-barrier');
  assert.ok(!broker.calls.includes('drainRoute alice'), 'the shadow is not drained before the barrier');

  broker.ackAll();
  done(await engine.reconcileRoutes(2, []), 'routes once acknowledged');
  const drained = done(await engine.drainRoute(alice), 'drain');
  assert.deepEqual(drained, { moved: 1, deleted: ['orders-alice'], retained: [] });
  assert.deepEqual(broker.ids('orders-app'), ['b1', 'a2', 'a1']);
  assert.deepEqual(engine.status().routes, []);
  assert.deepEqual(
    { app: engine.status().app.published, inFlight: engine.status().inFlight },
    { app: 2, inFlight: 0 },
  );
});

test('removed routes: drained only out of the table, back in the table without a new shadow, drained by the recorded names after a restart lost them', async () => {
  const { engine, broker } = await engineIn('running');
  done(await engine.reconcileRoutes(1, [alice, bob]), 'routes');
  const active = await engine.drainRoute(alice);
  assert.equal(active.kind, 'pending');
  if (active.kind === 'pending') assert.equal(active.code, 'route-active');

  done(await engine.reconcileRoutes(2, [bob]), 'alice leaves');
  assert.deepEqual(
    engine.status().routes.map((r) => [r.routeId, r.state]),
    [
      ['bob', 'active'],
      ['alice', 'removed'],
    ],
  );
  done(await engine.reconcileRoutes(3, [bob, alice]), 'alice comes back');
  assert.equal(broker.calls.at(-1), 'addRoutes alice(returning)');
  assert.deepEqual(
    engine.status().routes.map((r) => r.state),
    ['active', 'active'],
  );

  // A successor whose checkpoint predates alice: her shadow is drained by what the controller recorded.
  const successor = new MemoryEngine(broker);
  done(await successor.recover(checkpointIn('running', {}, broker)), 'recover');
  done(await successor.reconcileRoutes(4, []), 'routes without alice');
  done(await successor.drainRoute(alice), 'drain by the recorded route');
  assert.ok(broker.calls.includes('drainRoute alice'));
  assert.ok(!broker.queues.has('orders-alice'));
});

test('retained shadows: a kept shadow is recorded, reported by every later drain and cleanup, and never drained twice', async () => {
  const { engine, broker } = await engineIn('running');
  broker.keepOnRemove.add('orders-alice');
  done(await engine.reconcileRoutes(1, [alice]), 'routes');
  done(await engine.reconcileRoutes(2, []), 'alice leaves');
  const first = done(await engine.drainRoute(alice), 'drain');
  assert.deepEqual(first.deleted, []);
  assert.deepEqual(
    first.retained.map((r) => r.name),
    ['orders-alice'],
  );
  const before = broker.calls.length;
  assert.deepEqual(done(await engine.drainRoute(alice), 'drain again').retained, first.retained);
  assert.deepEqual(broker.calls.slice(before), [], 'a kept shadow is not drained again');
  assert.deepEqual(engine.status().retained, first.retained);
});

test('checkpoints: a successor recovers phase, table, removed and retained routes, and a running one installs the newer published table before it resumes', async () => {
  const broker = new MemoryBroker();
  const engine = new MemoryEngine(broker);
  done(await engine.prepare(), 'prepare');
  done(await engine.reconcileRoutes(1, [alice, bob]), 'routes');
  done(await engine.start(), 'start');
  const checkpoint = finished(await engine.reconcileRoutes(2, [bob]), 'alice leaves').checkpoint;
  await engine.close();

  const successor = new MemoryEngine(broker);
  const carol: RouteSpec = { routeId: 'carol', filter: { user: 'carol' }, shadow: 'orders-carol' };
  const before = broker.calls.length;
  assert.equal(
    done(await successor.recover(checkpoint, { generation: 3, routes: [bob, carol] }), 'recover').phase,
    'running',
  );
  assert.deepEqual(
    broker.calls.slice(before),
    ['up', 'addRoutes carol', 'resume'],
    'the fence, the published table, then the pump',
  );
  assert.equal(successor.status().generation, 3);
  assert.deepEqual(
    successor.status().routes.map((r) => [r.routeId, r.state]),
    [
      ['bob', 'active'],
      ['carol', 'active'],
      ['alice', 'removed'],
    ],
  );

  const foreign = new MemoryEngine(broker, 'act-2');
  const mismatch = await foreign.recover(checkpoint);
  assert.equal(mismatch.kind, 'degraded');
  if (mismatch.kind === 'degraded') assert.equal(mismatch.code, 'checkpoint-mismatch');
  const corrupt = await new MemoryEngine(broker).recover({
    provider: 'memory',
    format: 1,
    state: { phase: 'nowhere' },
  });
  assert.equal(corrupt.kind, 'degraded');
  const otherProvider = await new MemoryEngine(broker).recover({ provider: 'kafka', format: 1, state: {} });
  assert.equal(otherProvider.kind, 'degraded');
  if (otherProvider.kind === 'degraded')
    assert.equal(otherProvider.reason, 'checkpoint is kafka format 1, not memory format 1');
});

test('a published table the recovering engine refuses leaves the checkpoint table in force', async () => {
  const broker = new MemoryBroker();
  const engine = new MemoryEngine(broker);
  const checkpoint = checkpointIn('running', { generation: 1, routes: [alice] }, broker);
  const overlapping = { generation: 2, routes: [alice, { ...bob, filter: {} }] };
  assert.equal(done(await engine.recover(checkpoint, overlapping), 'recover').phase, 'running');
  assert.equal(engine.status().generation, 1);
  assert.ok(broker.calls.includes('resume'));
});

test('the handback takes only what stop returned, and only once every route is drained', async () => {
  const { engine } = await engineIn('prepared');
  done(await engine.reconcileRoutes(1, [alice]), 'routes');
  const { handoff } = done(await engine.stop(), 'stop');
  const foreign = await engine.commitHandoff({
    provider: 'memory',
    data: { activationId: 'act-9', stoppedAt: null },
  });
  assert.equal(foreign.kind, 'rejected');
  const undrained = await engine.commitHandoff(handoff);
  assert.equal(undrained.kind, 'pending');
  if (undrained.kind === 'pending') assert.equal(undrained.code, 'routes-undrained');
  done(await engine.reconcileRoutes(2, []), 'alice leaves');
  done(await engine.drainRoute(alice), 'drain');
  done(await engine.commitHandoff(handoff), 'handback');
  assert.equal(engine.status().phase, 'handed-off');
});

test('steps run one at a time: a step waits for the one before it', async () => {
  const { engine, broker } = await engineIn('running');
  done(await engine.reconcileRoutes(1, [alice]), 'routes');
  broker.holdAcks = true;
  broker.publish({ id: 'a1', headers: user('alice') });
  engine.pump();
  const order: string[] = [];
  const routes = engine.reconcileRoutes(2, []).then((o) => order.push(`routes ${o.kind}`));
  const stop = engine.stop().then((o) => order.push(`stop ${o.kind}`));
  await Promise.all([routes, stop]);
  assert.deepEqual(order, ['routes pending', 'stop done']);
});

test('the source backlog is reported only while the engine copies (running): before and after, the app reads the source', async () => {
  for (const phase of ENGINE_PHASES) {
    const { engine } = await engineIn(phase);
    const lag = await engine.shadowLag();
    if (phase === 'running') assert.equal(typeof lag.source, 'number', 'running: the source backlog');
    else assert.equal(lag.source, undefined, `${phase}: no source backlog`);
  }
});
