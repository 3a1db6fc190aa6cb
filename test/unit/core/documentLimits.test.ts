// Size limits (core/state/limits.ts): a workload carrying the most routes allowed, each with the
// largest filter, owner and queue list the validators admit, still has documents that fit in
// one ConfigMap; the route past the cap and a filter past its size are refused clearly.
import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import type { ResolvedQueue } from '../../../core/queueConfig/resolveQueues';
import { desiredState } from '../../../agent/controller/desired';
import { OBSERVED_API_VERSION, type ObservedState } from '../../../core/agentProtocol';
import { MAX_FILTER_BYTES, parseFilter } from '../../../core/filter';
import { MAX_QUEUES } from '../../../core/queueConfig/schema';
import { queueResources, routeResources } from '../../../core/state/inventory';
import { MAX_ROUTES_PER_WORKLOAD } from '../../../core/state/limits';
import {
  initialState,
  MAX_STATE_BYTES,
  serializeState,
  type SplitState,
} from '../../../core/state/stateDocument';
import { transition } from '../../../core/state/transition';

const pad = (prefix: string, length: number, fill = 'a') => (prefix + fill.repeat(length)).slice(0, length);
const queueNamesAtCap = Array.from({ length: MAX_QUEUES }, (_, i) =>
  pad(`q${String(i).padStart(2, '0')}-`, 63),
);
const routeId = (i: number) =>
  pad(`r${'abcdefghijklmnopqrstuvwxyz'[i % 26]}${'abcdefghijklmnop'[Math.floor(i / 26)]}`, 32, 'z');

/** The largest filter parseFilter admits: MAX_FILTER_BYTES of JSON, distinct per route. */
function largestFilter(route: number): Record<string, string> {
  const filter: Record<string, string> = { 'x-queue-split-user': `user-${route}` };
  // Quotes and backslashes double in JSON: the stored size is what the limit counts.
  for (let i = 0; JSON.stringify(filter).length < MAX_FILTER_BYTES - 200; i++)
    filter[`h${i}`] = '"\\'.repeat(30);
  const parsed = parseFilter(filter);
  assert.ok(parsed.ok, JSON.stringify(parsed));
  return { ...(parsed.value as Record<string, string>) };
}

function workloadAtCap(routes: number): SplitState {
  const base = initialState({
    workload: {
      kind: 'StatefulSet',
      namespace: pad('ns-', 63),
      name: pad('shop-', 253),
      uid: '0b6c1d7e-5d0c-4f3e-9b55-3f0a3c2c9d11',
    },
    installId: 'install-0123456789abcdef',
    queues: Object.fromEntries(queueNamesAtCap.map((q) => [q, 'kafka' as const])),
  });
  let state: SplitState = {
    ...base,
    phase: 'ACTIVE',
    generation: 1_000_000,
    activationEpoch: 1_000_000,
    activeQueues: [...queueNamesAtCap],
    queues: Object.fromEntries(
      queueNamesAtCap.map((q) => [
        q,
        { provider: 'kafka' as const, phase: 'ACTIVE' as const, done: true, epoch: 1_000_000 },
      ]),
    ),
    // An engine checkpoint per queue (opaque to the controller): a 64-partition seed.
    checkpoints: Object.fromEntries(
      queueNamesAtCap.map((q) => [
        q,
        {
          engine: {
            provider: 'kafka',
            format: 1,
            state: {
              seed: Array.from({ length: 64 }, (_, p) => ({ partition: p, offset: '9007199254740991' })),
            },
          },
        },
      ]),
    ),
  };
  state = { ...state, inventory: queueNamesAtCap.flatMap((q) => queueResources(state, q, 1_000_000)) };
  for (let i = 0; i < routes; i++) {
    const id = routeId(i);
    state = {
      ...state,
      routes: [
        ...state.routes,
        {
          routeId: id,
          owner: pad(`owner-${i}-`, 253),
          queues: [...queueNamesAtCap],
          filter: largestFilter(i),
          phase: 'ACTIVE',
          generation: 1_000_000,
          leaseExpiresAt: '2030-01-01T00:00:00.000Z',
          lastError: pad('the last error the agent reported ', 1024),
        },
      ],
      inventory: [...state.inventory, ...routeResources(state, id, queueNamesAtCap)],
    };
  }
  return state;
}

function resolvedAtCap(): ResolvedQueue[] {
  return queueNamesAtCap.map((name) => ({
    provider: 'kafka',
    name,
    container: pad('app-', 63),
    sourceAt: { kind: 'env', name: pad('SOURCE_', 253, 'X') },
    source: pad('topic-', 249),
    groupAt: { kind: 'env', name: pad('GROUP_', 253, 'X') },
    group: pad('group-', 255),
    offsetReset: 'earliest',
    saslMechanism: 'SCRAM-SHA-512',
    tls: { caSecret: pad('ca-', 253), caKey: pad('ca.crt', 253) },
    env: (['brokers', 'username', 'password'] as const).map((role) => ({
      name: pad(`${role.toUpperCase()}_`, 253, 'X'),
      role,
      source: { kind: 'secretKeyRef' as const, secret: pad('s-', 253), key: pad('k', 253) },
    })),
  })) as ResolvedQueue[];
}

describe('document size limits', () => {
  test(`at the caps (${MAX_ROUTES_PER_WORKLOAD} routes × ${MAX_QUEUES} queues, largest filters) the state ConfigMap fits 1 MiB`, (t) => {
    const state = workloadAtCap(MAX_ROUTES_PER_WORKLOAD);
    const stateBytes = Buffer.byteLength(serializeState(state));
    const desiredBytes = Buffer.byteLength(JSON.stringify(desiredState(state, resolvedAtCap(), true)));
    // Keys, labels and object metadata of the ConfigMap itself.
    const overhead = 4096;
    const total = stateBytes + desiredBytes + overhead;
    t.diagnostic(
      `state ${stateBytes} B + desired ${desiredBytes} B = ${total} B with overhead, of ${MAX_STATE_BYTES}`,
    );
    assert.ok(
      total < MAX_STATE_BYTES,
      `state ${stateBytes} + desired ${desiredBytes} + ${overhead} = ${total} bytes > ${MAX_STATE_BYTES}`,
    );
    // Keep some room for what is not at its maximum here (kept resources, longer errors).
    assert.ok(total < MAX_STATE_BYTES * 0.9, `only ${MAX_STATE_BYTES - total} bytes of headroom`);
  });

  test('at the caps the observed document fits its ConfigMap', () => {
    const state = workloadAtCap(MAX_ROUTES_PER_WORKLOAD);
    const observed: ObservedState = {
      apiVersion: OBSERVED_API_VERSION,
      activationId: `${state.installId}/${state.workload.uid}`,
      observedGeneration: state.generation,
      updatedAt: new Date().toISOString(),
      queues: Object.fromEntries(
        queueNamesAtCap.map((q) => [
          q,
          {
            step: 'ACTIVE' as const,
            generation: state.generation,
            outcome: { kind: 'done' as const, evidence: pad('evidence ', 1024) },
            health: 'ok' as const,
            published: Object.fromEntries(state.routes.map((r) => [r.routeId, Number.MAX_SAFE_INTEGER])),
            checkpoint: state.checkpoints[q],
          },
        ]),
      ),
      routes: Object.fromEntries(
        state.routes.map((r) => [
          r.routeId,
          {
            ackedGeneration: state.generation,
            drained: {
              proven: false,
              evidence: pad('e', 1024),
              kept: [{ name: pad('qs-', 63), reason: pad('r', 1024) }],
            },
            failed: pad('f', 1024),
          },
        ]),
      ),
    };
    const bytes = Buffer.byteLength(JSON.stringify(observed));
    assert.ok(bytes < MAX_STATE_BYTES * 0.9, `observed document is ${bytes} bytes`);
  });

  test(`the split past the cap (route ${MAX_ROUTES_PER_WORKLOAD + 1}) is refused as TooManySplits naming the cap; the last one under it is accepted`, () => {
    const almost = workloadAtCap(MAX_ROUTES_PER_WORKLOAD - 1);
    const request = (i: number) => ({
      type: 'routeRequested' as const,
      route: {
        routeId: routeId(i),
        owner: 'dev',
        queues: [queueNamesAtCap[0]!],
        filter: { 'x-queue-split-user': `user-${i}` },
        leaseExpiresAt: '2030-01-01T00:00:00.000Z',
      },
    });
    const last = transition(almost, request(MAX_ROUTES_PER_WORKLOAD - 1));
    assert.equal(last.outcome, 'applied', last.note);
    const past = transition(last.state, request(MAX_ROUTES_PER_WORKLOAD));
    assert.equal(past.outcome, 'rejected');
    assert.equal(past.state, last.state, 'nothing changes');
    const reject = past.actions[0];
    assert.ok(reject?.type === 'rejectRoute');
    assert.equal(reject.reason, 'TooManySplits');
    assert.match(reject.errors[0]!.problem, new RegExp(`already carries ${MAX_ROUTES_PER_WORKLOAD} splits`));
    assert.match(reject.errors[0]!.fix, /stop/);
  });

  test(`a filter larger than ${MAX_FILTER_BYTES} bytes as JSON is refused naming its size`, () => {
    const filter: Record<string, string> = {};
    for (let i = 0; i < 8; i++) filter[`h${i}`] = 'v'.repeat(600);
    const parsed = parseFilter(filter);
    assert.ok(!parsed.ok, 'a 4.8 KB filter was accepted');
    assert.equal(parsed.errors[0]!.path, 'filter');
    assert.match(parsed.errors[0]!.problem, new RegExp(`at most ${MAX_FILTER_BYTES}`));
  });
});
