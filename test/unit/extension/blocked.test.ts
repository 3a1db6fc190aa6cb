// A handler that keeps failing blocks the developer's route (docs/design.md §8), as the extension
// shows it: the sidecar's `failed` lines fold into a blocked state that `delivered`/`rejected`
// (and stopping) clear; the tree row and the status bar say "blocked on message X: HTTP 500,
// attempt 8"; the row's menu opens only then; the reject confirmation says what each broker does;
// and queueSplit.delivery.rejectAfterAttempts becomes --reject-after (never in env mode).
import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import { blockedText, parseRejectAfter, rejectConfirmation } from '../../../extension/model/blocked';
import { initialSession, reduceSession, type SessionView } from '../../../extension/model/sidecarView';
import { sidecarArgs } from '../../../extension/model/sidecarArgs';
import { statusBarLook } from '../../../extension/model/statusBar';
import {
  childrenOf,
  contextNode,
  lookOf,
  type TreeNode,
  type TreeSnapshot,
} from '../../../extension/model/tree';
import type { SidecarMessage } from '../../../core/sidecarProtocol';
import { split, workload } from './fixtures';

const T0 = '2030-01-01T00:00:00.000Z';
const T1 = '2030-01-01T00:00:40.000Z';

function failed(messageId: string, attempt: number, queue = 'orders', time = T1): SidecarMessage {
  return {
    type: 'failed',
    time,
    queue,
    messageId,
    attempt,
    reason: 'HTTP 500',
    retryInMs: 5_000,
    blockedSince: T0,
    counts: { delivered: 3, failed: attempt, rejected: 0 },
  };
}

const fold = (messages: SidecarMessage[], view: SessionView = initialSession('http')) =>
  messages.reduce(reduceSession, view);

describe('the blocked state', () => {
  test('a failed line blocks its queue on its message; the next failed line of the same message updates it; delivered or rejected of that message clears it, of another message does not', () => {
    const view = fold([failed('0-5', 1), failed('0-5', 8), failed('1-2', 1)]);
    assert.deepEqual(
      view.blocked.map((b) => [b.messageId, b.attempt, b.since]),
      [
        ['0-5', 8, T0],
        ['1-2', 1, T0],
      ],
      'one entry per message (Kafka partitions block side by side)',
    );
    const other = reduceSession(view, {
      type: 'delivered',
      time: T1,
      queue: 'orders',
      messageId: '2-0',
      attempts: 1,
      counts: { delivered: 4, failed: 9, rejected: 0 },
    });
    assert.equal(other.blocked.length, 2);
    const rejected = reduceSession(other, {
      type: 'rejected',
      time: T1,
      queue: 'orders',
      messageId: '0-5',
      attempts: 8,
      by: 'request',
      reason: 'HTTP 500',
      message: 'Rejected.',
      counts: { delivered: 4, failed: 9, rejected: 1 },
    });
    assert.deepEqual(
      rejected.blocked.map((b) => b.messageId),
      ['1-2'],
    );
    assert.deepEqual(rejected.rejected, { orders: 1 });
    const delivered = reduceSession(rejected, {
      type: 'delivered',
      time: T1,
      queue: 'orders',
      messageId: '1-2',
      attempts: 2,
      counts: { delivered: 5, failed: 9, rejected: 1 },
    });
    assert.deepEqual(delivered.blocked, []);
  });

  test('stopping ends every retry: nothing is shown blocked once the sidecar stops', () => {
    const view = fold([
      failed('m-1', 3, 'invoices'),
      { type: 'progress', time: T1, stage: 'stopping', message: 'stop request: stopping' },
    ]);
    assert.deepEqual(view.blocked, []);
  });
});

describe('what the views say', () => {
  const mine = split({ phase: 'Active', queues: ['orders', 'invoices'] });
  const snapshotWith = (view: SessionView): TreeSnapshot => ({
    target: { context: 'dev', namespace: 'team-a' },
    owner: 'alice',
    workloads: [workload('orders-app', ['orders', 'invoices'])],
    splits: [mine],
    sessions: new Map([[mine.metadata.name, view]]),
    loading: false,
    now: Date.parse(T1) + 2_000,
  });
  const routes = (snapshot: TreeSnapshot) => {
    const out: Extract<TreeNode, { kind: 'route' }>[] = [];
    const visit = (node: TreeNode) => {
      if (node.kind === 'route') out.push(node);
      childrenOf(snapshot, node).forEach(visit);
    };
    visit(contextNode(snapshot.target));
    return out;
  };

  test('the tree row of the blocked queue says "blocked on message <id>: <reason>, attempt <n>", with since when and what to do in the tooltip, and opens its Retry/Reject menu; the other queue of the split is not blocked', () => {
    const snap = snapshotWith(fold([failed('0-5', 8)]));
    const [orders, invoices] = ['orders', 'invoices'].map((q) => routes(snap).find((r) => r.queue === q)!);
    const look = lookOf(snap, orders!);
    assert.match(look.description ?? '', /^Active · blocked on message 0-5: HTTP 500, attempt 8 · /);
    assert.match(look.tooltip, /\*\*Blocked\*\*/);
    assert.match(look.tooltip, /for 42 s; next attempt in 3 s/);
    assert.match(look.tooltip, /Retry Blocked Message Now.*Reject Blocked Message/);
    assert.equal(look.contextValue, 'route.mine.blocked');
    assert.equal(look.icon.id, 'warning');
    const other = lookOf(snap, invoices!);
    assert.doesNotMatch(other.description ?? '', /blocked/);
    assert.equal(other.contextValue, 'route.mine', 'the menu needs a blocked message');
    const cleared = snapshotWith(
      fold([
        failed('0-5', 8),
        {
          type: 'delivered',
          time: T1,
          queue: 'orders',
          messageId: '0-5',
          attempts: 9,
          counts: { delivered: 4, failed: 8, rejected: 0 },
        },
      ]),
    );
    const after = lookOf(
      cleared,
      routes(cleared).find((r) => r.queue === 'orders')!,
    );
    assert.doesNotMatch(after.description ?? '', /blocked/);
    assert.equal(after.contextValue, 'route.mine');
  });

  test('the status bar says it briefly, the tooltip in full, on a warning background', () => {
    const blocked = fold([failed('0-5', 8)]).blocked[0]!;
    assert.equal(blockedText(blocked), 'blocked on message 0-5: HTTP 500, attempt 8');
    const one = statusBarLook([
      { name: 's', workload: 'orders-app', queues: ['orders'], phase: 'Active', delivered: 3, blocked },
    ]);
    assert.equal(one.text, '$(warning) orders-app: blocked: HTTP 500, attempt 8 · 3');
    assert.match(one.tooltip, /blocked on message 0-5: HTTP 500, attempt 8 \(queue orders\)/);
    assert.equal(one.background, 'statusBarItem.warningBackground');
    const two = statusBarLook([
      { name: 's', workload: 'orders-app', queues: ['orders'], phase: 'Active', delivered: 3, blocked },
      { name: 't', workload: 'billing', queues: ['invoices'], phase: 'Active', delivered: 1 },
    ]);
    assert.equal(two.text, '$(warning) 2 splits: 1 blocked, 2 Active · 4');
  });

  test('the reject confirmation says what a reject does on that broker', () => {
    const blocked = fold([failed('0-5', 8)]).blocked[0]!;
    const rabbit = rejectConfirmation(blocked, 'rabbitmq');
    assert.equal(rabbit.message, 'Reject message 0-5 of orders?');
    assert.match(rabbit.detail, /failed 8 times \(HTTP 500\)/);
    assert.match(
      rabbit.detail,
      /without requeue.*dead-letters it by the queue's rules.*discards it if the queue has no dead-letter exchange/,
    );
    const kafka = rejectConfirmation(blocked, 'kafka');
    assert.match(kafka.detail, /Kafka has no reject: the message is skipped, its offset committed past it/);
    const unknown = rejectConfirmation(blocked, undefined);
    assert.match(
      unknown.detail,
      /Kafka has no reject.*RabbitMQ rejects it without requeue|RabbitMQ rejects it without requeue.*Kafka has no reject/,
    );
  });
});

describe('queueSplit.delivery.rejectAfterAttempts', () => {
  test('0 or unset: never; a whole number: --reject-after for http and relay, never for env; anything else is reported and ignored', () => {
    assert.deepEqual(parseRejectAfter(undefined), { attempts: 0 });
    assert.deepEqual(parseRejectAfter(8), { attempts: 8 });
    for (const bad of [-1, 2.5, '8', true]) {
      const parsed = parseRejectAfter(bad);
      assert.equal(parsed.attempts, 0);
      assert.match(parsed.error ?? '', /queueSplit\.delivery\.rejectAfterAttempts is .*whole number/);
    }
    const launch = {
      splitName: 's',
      target: { context: 'dev', namespace: 'team-a' },
      leaseSeconds: 60,
      readyTimeoutSeconds: 300,
      detachTimeoutSeconds: 120,
      stateFile: '/tmp/state.json',
    };
    const flag = (args: string[]) =>
      args.includes('--reject-after') ? args[args.indexOf('--reject-after') + 1] : undefined;
    assert.equal(
      flag(
        sidecarArgs({
          ...launch,
          mode: 'http',
          httpTarget: 'http://127.0.0.1:8080/',
          rejectAfterAttempts: 8,
        }),
      ),
      '8',
    );
    assert.equal(flag(sidecarArgs({ ...launch, mode: 'relay', rejectAfterAttempts: 3 })), '3');
    assert.equal(flag(sidecarArgs({ ...launch, mode: 'http', rejectAfterAttempts: 0 })), undefined);
    assert.equal(flag(sidecarArgs({ ...launch, mode: 'env', rejectAfterAttempts: 8 })), undefined);
  });
});
