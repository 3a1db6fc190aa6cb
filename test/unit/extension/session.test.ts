// Folding the sidecar's JSON lines (core/sidecarProtocol.ts) into what the views show.
import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import {
  initialSession,
  isLive,
  reduceSession,
  sessionExited,
  totalDelivered,
  type SessionView,
} from '../../../extension/model/sidecarView';
import { parseSidecarLine, type SidecarMessage } from '../../../core/sidecarProtocol';

const T = '2030-01-01T00:00:00Z';
const ref = { name: 'qs-split-alice', namespace: 'team-a', routeId: 'abcdefghijklmnop' };

function fold(messages: SidecarMessage[], view: SessionView = initialSession('http')): SessionView {
  return messages.reduce(reduceSession, view);
}

describe('session view', () => {
  test("a start: waiting with the controller's words, then active with counts", () => {
    const view = fold([
      { type: 'hello', time: T, protocol: 1, version: '0.1.0', pid: 7, mode: 'http' },
      { type: 'progress', time: T, stage: 'adopting', message: 'Adopting', split: ref },
      {
        type: 'progress',
        time: T,
        stage: 'waiting',
        phase: 'Preparing',
        message: 'Still Preparing: creating shadows (15s).',
        controller: { phase: 'Preparing', message: 'Preparing: creating shadows' },
      },
    ]);
    assert.equal(view.stage, 'waiting');
    assert.equal(view.phase, 'Preparing');
    assert.equal(view.message, 'Preparing: creating shadows');
    assert.equal(view.pid, 7);
    const active = fold(
      [
        {
          type: 'ready',
          time: T,
          mode: 'http',
          split: ref,
          queues: [
            { name: 'orders', provider: 'rabbitmq', shadow: 'qs-rses', deliversTo: 'http://127.0.0.1:8080/' },
          ],
          env: {},
          secretEnv: [],
        },
        {
          type: 'delivered',
          time: T,
          queue: 'orders',
          messageId: 'a',
          attempts: 1,
          counts: { delivered: 1, failed: 0 },
        },
        {
          type: 'failed',
          time: T,
          queue: 'orders',
          messageId: 'b',
          attempt: 1,
          reason: 'HTTP 500',
          retryInMs: 250,
          blockedSince: T,
          counts: { delivered: 1, failed: 1 },
        },
        {
          type: 'delivered',
          time: T,
          queue: 'orders',
          messageId: 'b',
          attempts: 2,
          counts: { delivered: 2, failed: 1 },
        },
        { type: 'status', time: T, phase: 'Active', delivered: 9, lag: 0, queues: [] },
      ],
      view,
    );
    assert.equal(active.stage, 'active');
    assert.equal(totalDelivered(active), 2);
    assert.deepEqual(active.failed, { orders: 1 });
    assert.equal(active.routed, 9);
    assert.match(active.message, /orders → http:\/\/127\.0\.0\.1:8080\//);
  });

  test('stopping is not undone by a late consuming line; detached ends it', () => {
    const view = fold([
      { type: 'progress', time: T, stage: 'stopping', message: 'SIGTERM: stopping' },
      { type: 'progress', time: T, stage: 'consuming', message: 'late' },
      { type: 'progress', time: T, stage: 'draining', message: 'draining (3 left)', lag: 3 },
    ]);
    assert.equal(view.stage, 'draining');
    assert.equal(view.lag, 3);
    const done = reduceSession(view, {
      type: 'detached',
      time: T,
      split: ref,
      drained: true,
      waitedMs: 10,
      message: 'gone',
    });
    assert.equal(done.stage, 'stopped');
    assert.equal(isLive(done), false);
    assert.equal(sessionExited(done, 0, null), done);
  });

  test('an error line, or an exit without one, is a failure', () => {
    const failed = fold([
      {
        type: 'error',
        time: T,
        code: 'split-rejected',
        message: 'QueueSplit qs-a is Rejected: overlaps bob',
        suggestedAction: 'change the filter',
        controller: { phase: 'Rejected', message: 'Rejected: overlaps bob', nextAction: 'change the filter' },
      },
    ]);
    assert.equal(failed.stage, 'failed');
    // The controller's words as data, inside the extension's own headline; its next action.
    assert.equal(failed.error?.message, 'The controller refused the split: Rejected: overlaps bob');
    assert.equal(failed.error?.suggestedAction, 'change the filter');
    const crashed = sessionExited(fold([]), null, 'SIGKILL');
    assert.equal(crashed.stage, 'failed');
    assert.match(crashed.message, /signal SIGKILL/);
    const stoppedCleanly = sessionExited(
      fold([{ type: 'progress', time: T, stage: 'stopping', message: 's' }]),
      0,
      null,
    );
    assert.equal(stoppedCleanly.stage, 'stopped');
  });

  test('warnings are kept, the last ten', () => {
    const warnings: SidecarMessage[] = Array.from({ length: 12 }, (_, i) => ({
      type: 'warning',
      time: T,
      code: 'target-down',
      message: `down ${i}`,
    }));
    const view = fold(warnings);
    assert.equal(view.warnings.length, 10);
    assert.equal(view.warnings[9]!.message, 'down 11');
  });

  test("lines are parsed by the sidecar's own protocol module", () => {
    assert.equal(parseSidecarLine('not json'), undefined);
    assert.equal(parseSidecarLine('{"type":"future-thing","time":"t"}'), undefined);
    const m = parseSidecarLine(JSON.stringify({ type: 'progress', time: T, stage: 'waiting', message: 'x' }));
    assert.equal(fold(m ? [m] : []).stage, 'waiting');
  });
});
