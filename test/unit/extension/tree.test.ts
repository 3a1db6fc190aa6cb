// The "Queue Splits" tree as pure data: context → workloads → queues → routes, mine and
// teammates', each with phase, filter (values only on mine), delivered count and lag.
import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import { initialSession, reduceSession } from '../../../extension/model/sidecarView';
import {
  childrenOf,
  contextNode,
  lookOf,
  type QueueNode,
  type RouteNode,
  type TreeNode,
  type TreeSnapshot,
  type WorkloadNode,
} from '../../../extension/model/tree';
import { WORKLOAD_STATUS_ANNOTATION } from '../../../core/workloadStatus';
import { summarizeWorkload } from '../../../extension/model/workloads';
import { deploymentObject, split, workload } from './fixtures';

const target = { context: 'dev', namespace: 'team-a', server: 'https://k8s.example:6443' };

function snapshot(partial: Partial<TreeSnapshot> = {}): TreeSnapshot {
  return {
    target,
    owner: 'alice',
    workloads: [],
    splits: [],
    sessions: new Map(),
    loading: false,
    ...partial,
  };
}

function walk(snap: TreeSnapshot): { node: TreeNode; depth: number }[] {
  const out: { node: TreeNode; depth: number }[] = [];
  const visit = (node: TreeNode, depth: number) => {
    out.push({ node, depth });
    for (const child of childrenOf(snap, node)) visit(child, depth + 1);
  };
  visit(contextNode(target), 0);
  return out;
}

describe('tree structure', () => {
  test('context → workloads → queues → routes, with stable ids', () => {
    const snap = snapshot({
      workloads: [workload('orders-app', ['orders', 'kpayments']), workload('billing', ['invoices'])],
      splits: [
        split({ owner: 'bob', phase: 'Active', queues: ['orders'] }),
        split({ owner: 'alice', phase: 'Preparing', queues: ['orders', 'kpayments'] }),
      ],
    });
    const rows = walk(snap).map(
      ({ node, depth }) => `${'  '.repeat(depth)}${node.kind}:${lookOf(snap, node).label}`,
    );
    assert.deepEqual(rows, [
      'context:dev',
      '  workload:billing',
      '    queue:invoices',
      '  workload:orders-app',
      '    queue:orders',
      '      route:alice (you)',
      '      route:bob',
      '    queue:kpayments',
      '      route:alice (you)',
    ]);
    const ids = walk(snap).map((r) => r.node.id);
    assert.equal(new Set(ids).size, ids.length, 'ids are unique');
    assert.deepEqual(
      walk(snap).map((r) => r.node.id),
      ids,
      'the same snapshot gives the same ids (expansion state survives refreshes)',
    );
  });

  test('a split whose workload lost its declaration is still shown, so it can be stopped', () => {
    const snap = snapshot({
      splits: [split({ workload: 'gone-app', queues: ['orders'], phase: 'Draining' })],
    });
    const [wl] = childrenOf(snap, contextNode(target)) as WorkloadNode[];
    assert.equal(wl!.undeclared, true);
    assert.match(lookOf(snap, wl!).description ?? '', /no queue declaration/);
    const [queue] = childrenOf(snap, wl!) as QueueNode[];
    assert.equal(queue!.undeclared, true);
    assert.equal(childrenOf(snap, queue!).length, 1);
  });

  test('an invalid declaration shows its problems first', () => {
    const snap = snapshot({
      workloads: [workload('broken', ['orders'], ['queues[0].rabbitmq.sourceEnv: is not set. Fix: add it.'])],
    });
    const [wl] = childrenOf(snap, contextNode(target)) as WorkloadNode[];
    const children = childrenOf(snap, wl!);
    assert.equal(children[0]!.kind, 'notice');
    assert.equal(lookOf(snap, wl!).contextValue, 'workload.invalid');
    assert.equal(lookOf(snap, wl!).icon.id, 'warning');
  });

  test('an empty namespace says so (or that it is still loading)', () => {
    assert.equal(
      lookOf(snapshot(), childrenOf(snapshot(), contextNode(target))[0]!).label,
      'No workload here declares queues',
    );
    const loading = snapshot({ loading: true });
    assert.equal(lookOf(loading, childrenOf(loading, contextNode(target))[0]!).label, 'Loading…');
  });
});

describe('the context row says who chose the context', () => {
  test("pinned (with the Unpin action) vs the kubeconfig's current (followed) vs the setting", () => {
    const look = (t: typeof target & Record<string, unknown>) =>
      lookOf(snapshot({ target: t }), contextNode(t));
    const pinned = look({ ...target, contextFrom: 'pinned', namespaceFrom: 'pinned' });
    assert.equal(pinned.description, 'namespace team-a · pinned');
    assert.equal(pinned.contextValue, 'context.pinned');
    assert.match(pinned.tooltip, /pinned for this workspace/);
    assert.match(pinned.tooltip, /Unpin Context/);
    const followed = look({ ...target, contextFrom: 'kubeconfig', namespaceFrom: 'context' });
    assert.equal(followed.description, "namespace team-a · kubeconfig's current");
    assert.equal(followed.contextValue, 'context');
    assert.match(followed.tooltip, /kubectl config use-context/);
    assert.match(followed.tooltip, /the context's namespace/);
    const setting = look({ ...target, contextFrom: 'setting', namespaceFrom: 'default' });
    assert.equal(setting.description, 'namespace team-a · queueSplit.context');
  });
});

describe('route looks', () => {
  function routes(snap: TreeSnapshot): RouteNode[] {
    return walk(snap)
      .map((r) => r.node)
      .filter((n): n is RouteNode => n.kind === 'route');
  }

  test("mine shows my filter values; a teammate's only its keys", () => {
    const snap = snapshot({
      workloads: [workload()],
      splits: [
        split({ owner: 'alice', phase: 'Active', filter: { 'x-queue-split-user': 'alice', team: 'red' } }),
        split({ owner: 'bob', phase: 'Active', filter: { 'x-queue-split-user': 'bob-secret-value' } }),
      ],
    });
    const [mine, theirs] = routes(snap);
    const mineLook = lookOf(snap, mine!);
    const theirLook = lookOf(snap, theirs!);
    assert.match(mineLook.description!, /team=red,x-queue-split-user=alice/);
    assert.equal(mineLook.contextValue, 'route.mine');
    assert.equal(theirLook.contextValue, 'route.teammate');
    assert.match(theirLook.description!, /x-queue-split-user=…/);
    assert.ok(
      !JSON.stringify(theirLook).includes('bob-secret-value'),
      "a teammate's header value never shows",
    );
  });

  test("anyOf filters: mine in the text form; a teammate's keys only", () => {
    const snap = snapshot({
      workloads: [workload()],
      splits: [
        split({
          owner: 'alice',
          phase: 'Active',
          match: {
            anyOf: [{ tenant: { prefix: 'alice-' } }, { 'baggage:queue-split-user': { equals: 'alice' } }],
          },
        }),
        split({
          owner: 'bob',
          phase: 'Active',
          match: {
            anyOf: [{ tenant: { regex: 'bob-secret-[0-9]+' }, 'body:$.customer': { in: ['bob-secret-c'] } }],
          },
        }),
      ],
    });
    const [mine, theirs] = routes(snap);
    assert.match(lookOf(snap, mine!).description!, /tenant\^=alice- or baggage:queue-split-user=alice/);
    const theirLook = lookOf(snap, theirs!);
    assert.match(theirLook.description!, /body:\$\.customer=…,tenant=…/);
    assert.ok(!JSON.stringify(theirLook).includes('secret'), JSON.stringify(theirLook));
  });

  test('phase, delivered count and lag per queue; icons by phase', () => {
    const snap = snapshot({
      workloads: [workload('orders-app', ['orders', 'kpayments'])],
      splits: [
        split({
          phase: 'Active',
          queues: ['orders', 'kpayments'],
          queueStatus: [
            { name: 'orders', phase: 'Active', delivered: 12, lag: 3 },
            { name: 'kpayments', phase: 'Degraded', delivered: 0 },
          ],
        }),
      ],
    });
    const [orders, payments] = routes(snap);
    assert.equal(
      lookOf(snap, orders!).description,
      'Active · x-queue-split-user=alice · 12 delivered · lag 3',
    );
    assert.equal(lookOf(snap, orders!).icon.id, 'pass-filled');
    assert.match(lookOf(snap, payments!).description!, /^Degraded/);
    assert.equal(lookOf(snap, payments!).icon.id, 'warning');
  });

  test('what the split adds to the app’s lag is in the description; a source falling behind is in the tooltip', () => {
    const behind = 'orders: about 48000 messages wait in the source, and more at every reading';
    const snap = snapshot({
      workloads: [workload('orders-app', ['orders'])],
      splits: [
        split({
          phase: 'Active',
          queueStatus: [{ name: 'orders', phase: 'Active', delivered: 12, lag: 0, sourceBacklog: 48_000 }],
          conditions: [
            { type: 'Ready', status: 'True', reason: 'RouteActive', message: 'Matching messages reach you.' },
            { type: 'FallingBehind', status: 'True', reason: 'SourceBacklogGrowing', message: behind },
          ],
        }),
      ],
    });
    const look = lookOf(snap, routes(snap)[0]!);
    assert.equal(look.description, 'Active · x-queue-split-user=alice · 12 delivered · app lag 48000');
    assert.match(
      String(look.tooltip),
      /\*\*Falling behind\*\* orders: about 48000 messages wait in the source/,
    );
    assert.equal(look.icon.id, 'pass-filled', 'the split itself works');
  });

  test('a deleted split reads Draining, with the blocking reason in the tooltip', () => {
    const snap = snapshot({
      workloads: [workload()],
      splits: [
        split({
          phase: 'Active',
          deleting: true,
          conditions: [
            {
              type: 'Ready',
              status: 'False',
              reason: 'Draining',
              message: 'waiting for the session consumer to go',
            },
          ],
        }),
      ],
    });
    const [route] = routes(snap);
    const look = lookOf(snap, route!);
    assert.match(look.description!, /^Draining/);
    assert.match(look.tooltip, /waiting for the session consumer to go/);
  });

  test('a sidecar of this window shows in the tooltip with what it handed over', () => {
    let view = initialSession('http');
    view = reduceSession(view, {
      type: 'hello',
      time: 't',
      protocol: 1,
      version: '0.1.0',
      pid: 4242,
      mode: 'http',
    });
    view = reduceSession(view, {
      type: 'delivered',
      time: 't',
      queue: 'orders',
      messageId: 'm1',
      attempts: 1,
      counts: { delivered: 5, failed: 1 },
    });
    const s = split({ phase: 'Active' });
    const snap = snapshot({
      workloads: [workload()],
      splits: [s],
      sessions: new Map([[s.metadata.name, view]]),
    });
    const [route] = routes(snap);
    assert.match(lookOf(snap, route!).tooltip, /pid 4242.*handed to your process: 5/);
  });

  test('a route row redrawn alone shows the session of the snapshot it is drawn with, not the one it was made with', () => {
    const delivered = (n: number) =>
      reduceSession(initialSession('http'), {
        type: 'delivered',
        time: 't',
        queue: 'orders',
        messageId: `m${n}`,
        attempts: 1,
        counts: { delivered: n, failed: 0 },
      });
    const s = split({ phase: 'Active' });
    const then = snapshot({
      workloads: [workload()],
      splits: [s],
      sessions: new Map([[s.metadata.name, delivered(5)]]),
    });
    const [route] = routes(then);
    const now = {
      ...then,
      sessions: new Map([[s.metadata.name, delivered(900)]]),
      lingering: new Map([[s.metadata.name, 61_000]]),
    };
    const look = lookOf(now, route!);
    assert.match(look.tooltip, /handed to your process: 900/);
    assert.match(look.description ?? '', /lingering, stops in 1:01/);
    assert.doesNotMatch(
      lookOf({ ...now, sessions: new Map() }, route!).tooltip,
      /handed to your process/,
      'its sidecar gone',
    );
  });

  test('mine first, then by urgency, then by owner', () => {
    const snap = snapshot({
      workloads: [workload()],
      splits: [
        split({ name: 'a', owner: 'carol', phase: 'Active' }),
        split({ name: 'b', owner: 'bob', phase: 'Rejected' }),
        split({ name: 'c', owner: 'alice', phase: 'Active' }),
        split({ name: 'd', owner: 'dave', phase: 'Active' }),
      ],
    });
    assert.deepEqual(
      routes(snap).map((r) => r.split.spec.owner),
      ['alice', 'bob', 'carol', 'dave'],
    );
  });

  test('queue nodes say when there are no routes', () => {
    const snap = snapshot({ workloads: [workload()] });
    const queue = walk(snap).find((r) => r.node.kind === 'queue')!.node;
    assert.equal(lookOf(snap, queue).description, 'rabbitmq · orders-src · no routes');
  });
});

describe('the workload-level split status (it outlives the last split)', () => {
  const handingBack = {
    phase: 'HandingBack' as const,
    step: 'DRAINING_APP',
    routes: 0,
    message:
      'The last split ended; the app is getting its sources back (step DRAINING_APP). Waiting: orders: the application has not drained its shadow.',
    nextAction: "Nothing is lost: unconsumed messages stay in the app's shadow.",
    updated: '2026-12-01T14:00:00Z',
  };

  test('a handback that waits, with no QueueSplit left: a warning notice with the reason and the next action', () => {
    const snap = snapshot({ workloads: [{ ...workload(), splitStatus: handingBack }] });
    const node = walk(snap).find((r) => r.node.kind === 'workload')!.node as WorkloadNode;
    const look = lookOf(snap, node);
    assert.match(look.description ?? '', /handing back/);
    assert.equal(look.icon.id, 'warning');
    assert.match(look.tooltip, /Split status.*handing back.*has not drained its shadow/);
    const [notice] = childrenOf(snap, node);
    assert.equal(notice?.kind, 'notice');
    assert.equal(notice?.kind === 'notice' && notice.severity, 'warning');
    assert.match(
      notice?.kind === 'notice' ? (notice.detail ?? '') : '',
      /has not drained.*\nNothing is lost/s,
    );
  });

  test('Degraded is an error notice; handed back is only a description, no notice', () => {
    const degraded = snapshot({
      workloads: [
        {
          ...workload(),
          splitStatus: { ...handingBack, phase: 'Degraded', message: 'Degraded: DRAINING_APP timed out.' },
        },
      ],
    });
    const wl = walk(degraded).find((r) => r.node.kind === 'workload')!.node;
    const first = childrenOf(degraded, wl)[0];
    assert.equal(first?.kind === 'notice' && first.severity, 'error');
    const done = snapshot({
      workloads: [
        {
          ...workload(),
          splitStatus: {
            phase: 'HandedBack',
            routes: 0,
            message: 'Handed back.',
            updated: handingBack.updated,
          },
        },
      ],
    });
    const node = walk(done).find((r) => r.node.kind === 'workload')!.node;
    assert.match(lookOf(done, node).description ?? '', /handed back/);
    assert.ok(childrenOf(done, node).every((c) => c.kind !== 'notice'));
  });

  test('read from the workload annotation; an unreadable one is ignored', () => {
    const declaration =
      'queues:\n  - name: orders\n    rabbitmq: {urlEnv: AMQP_URL, managementUrlEnv: MGMT_URL, sourceEnv: SOURCE_QUEUE}';
    const object = deploymentObject('orders-app', declaration, [{ name: 'SOURCE_QUEUE', value: 'q' }]);
    const annotated = (value: string) => ({
      ...object,
      metadata: {
        ...object.metadata,
        annotations: { ...object.metadata?.annotations, [WORKLOAD_STATUS_ANNOTATION]: value },
      },
    });
    assert.equal(
      summarizeWorkload('Deployment', annotated(JSON.stringify(handingBack))).splitStatus?.phase,
      'HandingBack',
    );
    assert.equal(summarizeWorkload('Deployment', annotated('{not json')).splitStatus, undefined);
  });
});
