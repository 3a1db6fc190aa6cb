// A namespace watch's change must redraw only the rows it changed. VS Code forgets the handle of
// every row under what it redraws until it has fetched them again, and a row's inline action
// clicked in that moment runs without its row: the e2e ui/namespaces test's Start Split… on the
// other namespace's workload row then acted in the selected namespace (the tree was redrawn whole
// on every change of either namespace: deployments rolling, a split's counts). The view here is
// the real provider under VS Code's extension-host side of a tree (test/bench/support/vscodeStandIn.ts),
// two namespaces expanded, each with its own watch.
import assert from 'node:assert/strict';
import { after, before, test } from 'node:test';
import * as vscodeStandIn from '../../bench/support/vscodeStandIn';
import type { QueueSplit } from '../../../core/crd/queueSplitSchema';
import type { WorkloadInfo } from '../../../extension/model/types';
import { split, workload } from './fixtures';

vscodeStandIn.install();

interface State {
  workloads: WorkloadInfo[];
  splits: QueueSplit[];
  loading: boolean;
}

/** A namespace's watch as the provider holds it: its state and a way to report a new one. */
function watchOf(state: State) {
  const listeners = new Set<(s: State) => void>();
  return {
    current: state,
    onChange(listener: (s: State) => void) {
      listeners.add(listener);
      return { dispose: () => listeners.delete(listener) };
    },
    emit(next: State) {
      this.current = next;
      for (const l of listeners) l(next);
    },
  };
}

const inNs = <T extends WorkloadInfo>(w: T, namespace: string): T => ({ ...w, namespace });
const splitIn = (s: QueueSplit, namespace: string): QueueSplit => ({
  ...s,
  metadata: { ...s.metadata, namespace },
});

/** team-a (selected): orders-app with a teammate's split; team-b: billing, with a teammate's split. */
function stateA(delivered = 1): State {
  return {
    workloads: [workload('orders-app', ['orders', 'orders-retry'])],
    splits: [
      split({
        name: 'qs-split-mate-orders',
        owner: 'mate',
        phase: 'Active',
        queueStatus: [{ name: 'orders', delivered }],
      }),
    ],
    loading: false,
  };
}
function stateB(options: { delivered?: number; more?: boolean } = {}): State {
  const splits = [
    splitIn(
      split({
        name: 'qs-split-mate-billing',
        owner: 'mate',
        workload: 'billing',
        queues: ['billing-in'],
        phase: 'Active',
        queueStatus: [{ name: 'billing-in', delivered: options.delivered ?? 1 }],
      }),
      'team-b',
    ),
  ];
  if (options.more === true)
    splits.push(
      splitIn(
        split({
          name: 'qs-split-bob-billing',
          owner: 'bob',
          workload: 'billing',
          queues: ['billing-in'],
          phase: 'Active',
        }),
        'team-b',
      ),
    );
  return { workloads: [inNs(workload('billing', ['billing-in']), 'team-b')], splits, loading: false };
}

const watches = { 'team-a': watchOf(stateA()), 'team-b': watchOf(stateB()) };
let view: vscodeStandIn.TreeViewStandIn<{ id: string }>;
let tree: import('../../../extension/tree/provider').SplitsTreeProvider;
const disposables: { dispose(): unknown }[] = [];

before(async () => {
  const { SplitsTreeProvider } = await import('../../../extension/tree/provider');
  const { Notifier } = await import('../../../extension/notifications');
  type Args = ConstructorParameters<typeof SplitsTreeProvider>;
  const none = () => ({ dispose: () => undefined });
  const target = { context: 'kind-dev', namespace: 'team-a' };
  const cluster = {
    api: async () => ({ target, probe: async () => ({ state: 'ready' as const }) }),
    namespaceSet: async () => ({ namespaces: ['team-a', 'team-b'], selected: 'team-a', invalid: [] }),
    holdWatch: async (ns: 'team-a' | 'team-b') => ({ watch: watches[ns], release: () => undefined }),
    owner: async () => 'me',
    knownOwner: 'me',
    onDidChangeTarget: none,
    onDidChangeOwner: none,
  } as unknown as Args[0]; // the members the tree uses
  const sessions = { list: () => [], onDidChange: none } as unknown as Args[1];
  const quiet = () => undefined;
  const log = { info: quiet, warn: quiet, error: quiet, debug: quiet, trace: quiet } as unknown as Args[2];
  tree = new SplitsTreeProvider(cluster, sessions, log, new Notifier(log));
  disposables.push(tree, tree.createView('queueSplit.splits'));
  view = vscodeStandIn.treeViews.at(-1) as typeof view;
  await view.open();
});

after(() => {
  for (const d of disposables.reverse()) d.dispose();
  view.dispose();
});

const WORKLOAD_B = 'wl:team-b/Deployment/billing';
const QUEUE_B = `${WORKLOAD_B}/q:billing-in`;
const ROUTE_B = 'route:team-b/qs-split-mate-billing/billing-in';

/** What the view redraws for `change`: the rows whose handle it forgot, and whole-tree redraws. */
async function redrawOf(change: () => void): Promise<{ dropped: string[]; whole: number }> {
  await view.idle();
  view.dropped.length = 0;
  vscodeStandIn.counters.reset();
  change();
  await view.idle();
  return { dropped: [...view.dropped], whole: vscodeStandIn.counters.treeFullRefreshes };
}

test('the tree opens with both namespaces expanded down to the route rows', () => {
  for (const id of [WORKLOAD_B, QUEUE_B, ROUTE_B, 'wl:team-a/Deployment/orders-app'])
    assert.ok(view.element(id) !== undefined, `${id} is shown`);
});

test('a watch change that changes nothing shown (a deployment rolled) redraws nothing', async () => {
  const { dropped, whole } = await redrawOf(() => watches['team-b'].emit(stateB()));
  assert.equal(whole, 0, 'no whole-tree redraw');
  assert.deepEqual(dropped, [], 'no row forgot its handle');
});

test("a teammate's split counting a message redraws its route row alone", async () => {
  const { dropped, whole } = await redrawOf(() => watches['team-b'].emit(stateB({ delivered: 7 })));
  assert.equal(whole, 0, 'no whole-tree redraw');
  assert.deepEqual(dropped, [], 'no row forgot its handle (the route row is redrawn in place)');
  const route = view.element(ROUTE_B);
  assert.ok(route !== undefined);
  assert.match(String(tree.getTreeItem(route as never).description), /7/, 'the row shows the new count');
});

test("a new split of the other namespace's queue redraws that queue's rows; its workload row and the selected namespace's rows keep their handles", async () => {
  const { dropped, whole } = await redrawOf(() => watches['team-b'].emit(stateB({ more: true })));
  assert.equal(whole, 0, 'no whole-tree redraw');
  assert.ok(dropped.length > 0, 'the rows under the workload were redrawn');
  for (const id of dropped)
    assert.ok(
      id.startsWith(`${WORKLOAD_B}/`) || id.startsWith('route:team-b/'),
      `only rows under the workload: ${id}`,
    );
  assert.ok(view.element(WORKLOAD_B) !== undefined, 'the workload row still resolves');
  assert.ok(
    view.element('route:team-b/qs-split-bob-billing/billing-in') !== undefined,
    'the new route row is shown',
  );
});

test("the selected namespace's change leaves the other namespace's rows alone", async () => {
  const { dropped, whole } = await redrawOf(() => watches['team-a'].emit(stateA(5)));
  assert.equal(whole, 0, 'no whole-tree redraw');
  assert.deepEqual(dropped, []);
});
