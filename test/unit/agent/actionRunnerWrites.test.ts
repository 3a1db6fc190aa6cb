// The controller's action runner holds a pass's state write back while nothing needs it
// (agent/controller/actionRunner.ts, the invariants beside `owed`): a burst of attaches costs
// one write, and still no step that reaches the cluster runs before the state describing it is
// written. The phase machine is the real one; the cluster side is a log of calls.
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { ActionRunner, type RunnerHost } from '../../../agent/controller/actionRunner';
import type { AgentObjects } from '../../../agent/controller/agentObjects';
import type { OwnershipLeases } from '../../../agent/controller/ownershipLeases';
import { PhaseProgress } from '../../../agent/controller/phaseProgress';
import type { Workloads } from '../../../agent/controller/workloads';
import { silentLogger } from '../../../agent/log';
import type { KubernetesObjectNames } from '../../../core/names';
import type { SplitEvent } from '../../../core/state/events';
import type { SplitState } from '../../../core/state/stateDocument';
import { drive, idle, PATHS, request } from '../core/splitFixtures';

/** A runner over `state` whose cluster calls and state writes go to `calls`, in order. */
function runner(state: SplitState, options: { persistFails?: number } = {}) {
  const calls: string[] = [];
  let failures = options.persistFails ?? 0;
  const written: SplitState[] = [];
  const host: RunnerHost = {
    state: () => state,
    setState: (next) => (state = next),
    names: () => ({}) as KubernetesObjectNames,
    resolved: () => [],
    persist: async () => {
      if (failures > 0) {
        failures -= 1;
        calls.push('persist failed');
        throw new Error('the API server refused the write');
      }
      calls.push('persist');
      written.push(state);
    },
  };
  const workload = { metadata: { uid: 'uid-1', resourceVersion: 'rv1' }, spec: { replicas: 3 } };
  const workloads = {
    read: async () => (calls.push('read workload'), workload),
    scale: async (_k: string, _n: string, _name: string, replicas: number) =>
      void calls.push(`scale to ${replicas}`),
    addFinalizer: async () => void calls.push('finalizer'),
    autoscalersOf: async () => [],
  } as unknown as Workloads; // only what these tests' actions call
  const agents = { ensure: async () => void calls.push('ensure agent') } as unknown as AgentObjects;
  const ownership = {
    acquire: async () => (calls.push('acquire lease'), undefined),
  } as unknown as OwnershipLeases;
  const run = new ActionRunner(
    { kind: 'Deployment', namespace: 'team-a', name: 'shop' },
    'queuesplit-system',
    host,
    { workloads, agents, ownership },
    silentLogger,
    new PhaseProgress(),
    new Map(),
    new Set(),
  );
  return { run, calls, written, state: () => state };
}

test("a pass's attaches and acks are written once, with every route in it", async () => {
  const { state: active } = drive(idle(), PATHS.ACTIVE!);
  const { run, calls, written, state } = runner(active);
  const routes = ['r2', 'r3', 'r4', 'r5'];
  const events: SplitEvent[] = [
    ...routes.map((r) => request(r, { user: r })),
    ...routes.map((r): SplitEvent => ({ type: 'routeShadowsReady', routeId: r })),
  ];
  await run.applyAll(events);
  assert.deepEqual(calls, [], 'nothing written while the pass applies its events');
  await run.settle();
  assert.deepEqual(calls, ['persist'], 'one write for the whole pass (each event wrote its own before)');
  assert.deepEqual(
    written[0]!.routes.map((r) => r.routeId).sort(),
    ['r1', ...routes],
    'the write carries every route the pass added',
  );
  assert.equal(written[0], state());
  await run.settle();
  assert.deepEqual(calls, ['persist'], 'settled: nothing owed');
});

test('a step that reaches the cluster runs only after the state describing it is written', async () => {
  // IDLE → PREPARING takes the lease and the finalizer and creates the agent; the agent's
  // report then has the controller read the workload and scale it to zero, which must come
  // after the original replica count is written.
  const { run, calls } = runner(idle());
  await run.applyAll([request('r1', { user: 'alice' })]);
  await run.applyAll([{ type: 'stepSucceeded', phase: 'PREPARING', queue: 'orders' }]);
  await run.settle();
  assert.deepEqual(calls, [
    'persist',
    'read workload',
    'acquire lease',
    'read workload',
    'finalizer',
    'ensure agent',
    'persist',
    'read workload',
    'persist',
    'scale to 0',
  ]);
});

test('a held write that fails keeps its step back, and the retry writes before it runs the step', async () => {
  const { run, calls } = runner(idle(), { persistFails: 1 });
  await run.applyAll([request('r1', { user: 'alice' })]);
  await run.settle();
  // The lease is the first step: its write failed, so it did not run; the pass's end wrote.
  assert.deepEqual(calls, ['persist failed', 'persist'], 'no step ran without its state written');
  assert.equal(run.unfinished?.actions[0]?.type, 'persistState', 'the retry starts with the write');
  await run.resume(run.unfinished!.phase);
  assert.deepEqual(calls.slice(2), [
    'persist',
    'read workload',
    'acquire lease',
    'read workload',
    'finalizer',
    'ensure agent',
  ]);
});
