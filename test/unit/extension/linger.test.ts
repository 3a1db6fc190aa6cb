// Linger (README, "Using it from VS Code"): the queueSplit.linger setting's validation, the time
// left as the tree row and the status bar show it.
import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import {
  DEFAULT_LINGER_SECONDS,
  formatTimeLeft,
  lingerText,
  parseLinger,
} from '../../../extension/model/linger';
import { initialSession } from '../../../extension/model/sidecarView';
import { statusBarLook } from '../../../extension/model/statusBar';
import {
  childrenOf,
  contextNode,
  lookOf,
  type TreeNode,
  type TreeSnapshot,
} from '../../../extension/model/tree';
import { split, workload } from './fixtures';

describe('queueSplit.linger setting', () => {
  test('unset: the default, a few minutes', () => {
    assert.deepEqual(parseLinger(undefined), { seconds: DEFAULT_LINGER_SECONDS });
    assert.equal(DEFAULT_LINGER_SECONDS, 180);
  });
  test('whole seconds from 0 (stop when the session ends) up to a day are taken as given', () => {
    for (const seconds of [0, 8, 180, 86_400]) assert.deepEqual(parseLinger(seconds), { seconds });
  });
  test('a bad value names the setting, the problem and the fix, and falls back to the default', () => {
    for (const raw of [-1, 2.5, 86_401, '180', true, { seconds: 1 }, Number.NaN]) {
      const parsed = parseLinger(raw);
      assert.equal(parsed.seconds, DEFAULT_LINGER_SECONDS, `${String(raw)} falls back`);
      assert.match(parsed.error ?? '', /queueSplit\.linger/);
      assert.match(parsed.error ?? '', /whole number of seconds from 0 to 86400/);
      assert.match(parsed.error ?? '', /Using the default, 180 s/);
    }
    assert.match(parseLinger('180').error ?? '', /is "180"/);
  });
});

describe('time left while a split lingers', () => {
  test('m:ss, rounded up, never negative; h:mm:ss past an hour', () => {
    assert.equal(formatTimeLeft(161_000), '2:41');
    assert.equal(formatTimeLeft(160_001), '2:41');
    assert.equal(formatTimeLeft(9_000), '0:09');
    assert.equal(formatTimeLeft(0), '0:00');
    assert.equal(formatTimeLeft(-500), '0:00');
    assert.equal(formatTimeLeft(3_723_000), '1:02:03');
    assert.equal(lingerText(161_000), 'lingering, stops in 2:41');
  });

  test('my route row says it lingers, with the time left, and still offers Stop', () => {
    const mine = split({ owner: 'alice', phase: 'Active', queues: ['orders'] });
    const snap: TreeSnapshot = {
      target: { context: 'dev', namespace: 'team-a' },
      owner: 'alice',
      workloads: [workload('orders-app', ['orders'])],
      splits: [mine],
      sessions: new Map([[mine.metadata.name, initialSession('env')]]),
      lingering: new Map([[mine.metadata.name, 161_000]]),
      loading: false,
    };
    const routesOf = (snapshot: TreeSnapshot): TreeNode[] => {
      const routes: TreeNode[] = [];
      const visit = (node: TreeNode) => {
        if (node.kind === 'route') routes.push(node);
        childrenOf(snapshot, node).forEach(visit);
      };
      visit(contextNode(snapshot.target));
      return routes;
    };
    const routes = routesOf(snap);
    assert.equal(routes.length, 1);
    const look = lookOf(snap, routes[0]!);
    assert.match(look.description ?? '', /^Active · lingering, stops in 2:41 · /);
    assert.match(look.tooltip, /No debug session.*lingering, stops in 2:41/);
    assert.equal(look.contextValue, 'route.mine', 'the row keeps its inline Stop Split');

    const heldSnap = { ...snap, lingering: new Map<string, number>() };
    const held = lookOf(heldSnap, routesOf(heldSnap)[0]!);
    assert.doesNotMatch(held.description ?? '', /lingering/);
  });

  test('the status bar says it lingers, with the time left', () => {
    const look = statusBarLook([
      {
        name: 's',
        workload: 'orders-app',
        queues: ['orders'],
        phase: 'Active',
        delivered: 4,
        lingerLeftMs: 9_000,
      },
    ]);
    assert.equal(look.text, '$(pass-filled) orders-app: Active (lingering, stops in 0:09) · 4');
    assert.match(look.tooltip, /orders-app \[orders\]: Active \(lingering, stops in 0:09\), 4 delivered/);
  });
});
