// How the controller judges pods of a new template: stably ready, or stuck (REDIRECTING_APP aborts on it).
import assert from 'node:assert/strict';
import { test } from 'node:test';
import type { V1ContainerStatus, V1Pod } from '@kubernetes/client-node';
import {
  CRASH_LOOP_RESTARTS,
  MIN_STABLE_SECONDS,
  msUntilStable,
  readyUnrestarted,
  stablyReady,
  stuckPod,
} from '../../../agent/controller/podHealth';

function pod(name: string, status: Partial<V1ContainerStatus>): V1Pod {
  return {
    metadata: { name },
    status: {
      containerStatuses: [{ name: 'app', image: 'x', imageID: '', ready: false, restartCount: 0, ...status }],
    },
  };
}

test('a container crashing again and again is crash-looping, with its last exit code', () => {
  const why = stuckPod([
    pod('ok-0', { ready: true, state: { running: {} } }),
    pod('bad-1', {
      restartCount: CRASH_LOOP_RESTARTS,
      state: { waiting: { reason: 'CrashLoopBackOff' } },
      lastState: { terminated: { exitCode: 3, reason: 'Error' } },
    }),
  ]);
  assert.equal(why, 'pod bad-1 container app is crash-looping (3 restarts, last exit code 3 (Error))');
});

test('one restart, a ready container after restarts, or a pod still starting is not stuck', () => {
  assert.equal(
    stuckPod([pod('a', { restartCount: 1, state: { waiting: { reason: 'CrashLoopBackOff' } } })]),
    undefined,
  );
  assert.equal(stuckPod([pod('b', { restartCount: 5, ready: true, state: { running: {} } })]), undefined);
  assert.equal(stuckPod([pod('c', { state: { waiting: { reason: 'ContainerCreating' } } })]), undefined);
  assert.equal(stuckPod([{ metadata: { name: 'd' } }]), undefined);
});

test('an image that cannot be pulled is stuck at once', () => {
  assert.match(
    stuckPod([pod('e', { state: { waiting: { reason: 'ImagePullBackOff' } } })]) ?? '',
    /cannot start \(ImagePullBackOff\)/,
  );
});

test('a pod counts as rolled out once ready and running for the stable window', () => {
  const now = Date.parse('2030-01-01T00:00:10Z');
  const running = (startedAt: string, ready = true): V1Pod => ({
    metadata: { name: 'p' },
    status: {
      conditions: [{ type: 'Ready', status: ready ? 'True' : 'False' }],
      containerStatuses: [
        {
          name: 'app',
          image: 'x',
          imageID: '',
          ready,
          restartCount: 0,
          state: { running: { startedAt: new Date(startedAt) } },
        },
      ],
    },
  });
  assert.equal(MIN_STABLE_SECONDS, 5);
  assert.ok(stablyReady(running('2030-01-01T00:00:04Z'), now), 'up 6 s');
  assert.ok(!stablyReady(running('2030-01-01T00:00:08Z'), now), 'up 2 s: it may still crash');
  assert.ok(!stablyReady(running('2030-01-01T00:00:00Z', false), now), 'not ready');
  assert.ok(
    !stablyReady(running('2030-01-01T00:00:04Z'), now, 30),
    "the workload's minReadySeconds is longer",
  );
});

test('a ready pod says how long until it has run the stable window; a pod not ready does not', () => {
  const now = Date.parse('2030-01-01T00:00:10Z');
  const pod = (ready: boolean, ...startedAt: string[]): V1Pod => ({
    metadata: { name: 'p' },
    status: {
      conditions: [{ type: 'Ready', status: ready ? 'True' : 'False' }],
      containerStatuses: startedAt.map((at, i) => ({
        name: `c${i}`,
        image: 'x',
        imageID: '',
        ready,
        restartCount: 0,
        state: { running: { startedAt: new Date(at) } },
      })),
    },
  });
  assert.equal(msUntilStable(pod(true, '2030-01-01T00:00:08Z'), now), 3000, 'up 2 s of 5');
  assert.equal(
    msUntilStable(pod(true, '2030-01-01T00:00:09Z', '2030-01-01T00:00:07.500Z'), now),
    4000,
    'the container started last decides',
  );
  assert.equal(msUntilStable(pod(true, '2030-01-01T00:00:01Z'), now), 0, 'stable: no wait left');
  assert.equal(msUntilStable(pod(true, '2030-01-01T00:00:08Z'), now, 30), 28_000, 'minReadySeconds');
  assert.equal(msUntilStable(pod(false, '2030-01-01T00:00:08Z'), now), undefined, 'not ready');
  assert.equal(msUntilStable({ metadata: { name: 'q' } }, now), undefined, 'no status yet');
});

test('a ready pod whose containers never restarted can count before the window; a restarted one cannot', () => {
  // With the agent's live read of a consumer on every shadow, this is the rollout proof's early
  // end (docs/design.md "Where activation time goes"): the new pods consume, none crashed.
  const pod = (ready: boolean, restartCount: number, running = true): V1Pod => ({
    metadata: { name: 'p' },
    status: {
      conditions: [{ type: 'Ready', status: ready ? 'True' : 'False' }],
      containerStatuses: [
        {
          name: 'app',
          image: 'x',
          imageID: '',
          ready,
          restartCount,
          state: running
            ? { running: { startedAt: new Date() } }
            : { waiting: { reason: 'CrashLoopBackOff' } },
        },
      ],
    },
  });
  assert.ok(readyUnrestarted(pod(true, 0)), 'ready, never restarted');
  assert.ok(!readyUnrestarted(pod(true, 1)), 'restarted once: it crashed, the window decides');
  assert.ok(!readyUnrestarted(pod(false, 0)), 'not ready');
  assert.ok(!readyUnrestarted(pod(true, 0, false)), 'not running');
  assert.ok(!readyUnrestarted({ metadata: { name: 'q' } }), 'no status yet');
});
