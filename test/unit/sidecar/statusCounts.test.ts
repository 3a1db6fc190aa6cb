// The sidecar's status lines carry its session stream's counts once any is non-zero
// (sidecar/split.ts SplitMonitor), so a parked message or a takeover shows in every consumer of
// the protocol (the extension's tree), not only in the one warning line. The split is read
// through a stand-in for QueueSplitApi (only `get`, returning a fixed object): what is tested is
// how the status line is composed.
import assert from 'node:assert/strict';
import { Writable } from 'node:stream';
import { test } from 'node:test';
import type { QueueSplit } from '../../../core/crd/queueSplitSchema';
import { Reporter } from '../../../sidecar/output';
import type { StreamCounts } from '../../../core/sidecarProtocol';
import { SplitMonitor, type QueueSplitApi } from '../../../sidecar/split';

test('status lines carry the stream counts once any is non-zero, and change when they do', async () => {
  const lines: Record<string, unknown>[] = [];
  const out = new Writable({
    write: (chunk: Buffer, _e, done) => {
      for (const l of chunk.toString().split('\n').filter(Boolean))
        lines.push(JSON.parse(l) as Record<string, unknown>);
      done();
    },
  });
  const reporter = new Reporter(out, new Writable({ write: (_c, _e, done) => done() }));
  const split = {
    metadata: { name: 'qs-split-a', namespace: 'ns', uid: 'u' },
    spec: { routeId: 'r-1', queues: ['orders'], workload: { kind: 'Deployment', name: 'shop' } },
    status: { phase: 'Active', delivered: 3, queues: [{ name: 'orders', phase: 'Active', delivered: 3 }] },
  } as unknown as QueueSplit;
  // Only get() is called by the monitor.
  const api = { get: async () => split } as unknown as QueueSplitApi;
  let counts: StreamCounts = { parked: 0, unreadableFrames: 0, replaced: 0 };
  const monitor = new SplitMonitor(api, reporter, split, 10, {
    onGone: () => undefined,
    streamCounts: () => counts,
  });
  const statuses = () => lines.filter((l) => l.type === 'status');
  monitor.start();
  const until = async (n: number) => {
    for (let i = 0; i < 200 && statuses().length < n; i++) await new Promise((r) => setTimeout(r, 10));
  };
  await until(1);
  assert.equal(statuses()[0]!.stream, undefined, 'no counts while all are 0');
  counts = { parked: 1, unreadableFrames: 1, replaced: 0 };
  await until(2);
  await monitor.stop();
  assert.deepEqual(statuses()[1]!.stream, { parked: 1, unreadableFrames: 1, replaced: 0 });
  assert.equal(statuses().length, 2, 'a status line only when something changed');
});
