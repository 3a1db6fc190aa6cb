// The sidecar's lines carry the controller's words as data (core/sidecarProtocol.ts
// ControllerWords): the `waiting` progress and the error of a refused split. The extension shows
// them inside its own localized words instead of the sidecar's English sentence around them. The
// split is read through a stand-in for QueueSplitApi (only `get`).
import assert from 'node:assert/strict';
import { Writable } from 'node:stream';
import { test } from 'node:test';
import type { QueueSplit } from '../../../core/crd/queueSplitSchema';
import { SidecarError } from '../../../laptop/errors';
import { Reporter } from '../../../sidecar/output';
import { waitForActive, type QueueSplitApi } from '../../../sidecar/split';

const splitIn = (phase: string, message: string, nextAction?: string) =>
  ({
    metadata: { name: 'qs-a', namespace: 'ns', uid: 'u' },
    spec: { routeId: 'r-1', queues: ['orders'], workload: { kind: 'Deployment', name: 'shop' } },
    status: {
      phase,
      conditions: [{ type: 'Ready', status: 'False', reason: 'X', message }],
      ...(nextAction !== undefined ? { nextAction } : {}),
    },
  }) as unknown as QueueSplit;

test('waiting progress and a refused split carry the controller’s phase, message and next action', async () => {
  const lines: Record<string, unknown>[] = [];
  const out = new Writable({
    write: (chunk: Buffer, _e, done) => {
      for (const l of chunk.toString().split('\n').filter(Boolean))
        lines.push(JSON.parse(l) as Record<string, unknown>);
      done();
    },
  });
  const reporter = new Reporter(out, new Writable({ write: (_c, _e, done) => done() }));
  const states = [
    splitIn('Preparing', 'creating shadows'),
    splitIn('Rejected', 'overlaps bob', 'change the filter'),
  ];
  let reads = 0;
  const api = { get: async () => states[Math.min(reads++, states.length - 1)] } as unknown as QueueSplitApi;
  const refused = await waitForActive(api, reporter, states[0]!, {
    timeoutMs: 5_000,
    leaseSeconds: 60,
    pollMs: 5,
    signal: new AbortController().signal,
  }).then(
    () => undefined,
    (err: unknown) => err,
  );
  const waiting = lines.find((l) => l.type === 'progress' && l.stage === 'waiting');
  assert.deepEqual(waiting?.controller, { phase: 'Preparing', message: 'Preparing: creating shadows' });
  assert.ok(refused instanceof SidecarError);
  assert.equal(refused.code, 'split-rejected');
  assert.deepEqual(refused.controller, {
    phase: 'Rejected',
    message: 'Rejected: overlaps bob',
    nextAction: 'change the filter',
  });
});
