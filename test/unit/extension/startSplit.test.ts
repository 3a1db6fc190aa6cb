// The decisions behind Start Split…: which workload the workspace means, which filters are
// valid and free, whether an existing split can be adopted.
import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import { folderCandidate, manifestCandidates } from '../../../extension/model/manifests';
import {
  checkFilter,
  defaultFilterText,
  inferWorkload,
  myLiveSplit,
  parseWorkloadRef,
  sameRequest,
  type WorkloadCandidate,
} from '../../../extension/model/startSplit';
import { split, workload } from './fixtures';

describe('workload references', () => {
  test('kind/name or a bare name', () => {
    assert.deepEqual(parseWorkloadRef('deployment/orders'), { kind: 'Deployment', name: 'orders' });
    assert.deepEqual(parseWorkloadRef('sts/ledger'), { kind: 'StatefulSet', name: 'ledger' });
    assert.deepEqual(parseWorkloadRef('deployment.apps/orders'), { kind: 'Deployment', name: 'orders' });
    assert.deepEqual(parseWorkloadRef(' orders '), { name: 'orders' });
  });
  test('errors say what is wrong', () => {
    assert.match((parseWorkloadRef('job/x') as { error: string }).error, /not a Deployment or StatefulSet/);
    assert.match((parseWorkloadRef('Orders_App') as { error: string }).error, /not a Kubernetes object name/);
  });
});

describe('workspace manifests', () => {
  const manifest = [
    'apiVersion: apps/v1',
    'kind: Deployment',
    'metadata:',
    '  name: orders-app',
    '  annotations:',
    '    telepresence.io/queue-config: |',
    '      queues: []',
    '---',
    'apiVersion: v1',
    'kind: Service',
    'metadata: {name: orders-app}',
    '---',
    'kind: List',
    'items:',
    '  - kind: StatefulSet',
    '    metadata:',
    '      name: ledger',
    '      annotations: {telepresence.io/queue-config: "queues: []"}',
    '  - kind: Deployment',
    '    metadata: {name: not-annotated}',
  ].join('\n');

  test('annotated Deployments and StatefulSets, also inside a List', () => {
    assert.deepEqual(
      manifestCandidates(manifest, 'k8s/app.yaml').map((c) => `${c.kind}/${c.name} from ${c.from}`),
      ['Deployment/orders-app from k8s/app.yaml', 'StatefulSet/ledger from k8s/app.yaml'],
    );
  });
  test('templated or broken YAML is no hint, not an error', () => {
    assert.deepEqual(
      manifestCandidates('{{ .Values.x }}\ntelepresence.io/queue-config: [', 'chart.yaml'),
      [],
    );
    assert.deepEqual(manifestCandidates('kind: Deployment', 'x.yaml'), []);
  });
  test('folder names become DNS-safe guesses', () => {
    assert.equal(folderCandidate('Orders_App')?.name, 'orders-app');
    assert.equal(folderCandidate('___'), undefined);
  });
});

describe('workload inference', () => {
  const annotated = [workload('orders-app'), workload('billing'), workload('broken', ['x'], ['bad'])];
  const hint = (name: string, strength: number, from = 'x'): WorkloadCandidate => ({ name, strength, from });

  test('one match of the strongest hint is inferred', () => {
    const result = inferWorkload(
      [hint('billing', 2, 'the folder name'), hint('orders-app', 1, 'k8s/app.yaml')],
      annotated,
    );
    assert.equal(result.inferred?.workload.name, 'orders-app');
    assert.equal(result.inferred?.inferredFrom, 'k8s/app.yaml');
    assert.deepEqual(
      result.ranked.map((r) => r.workload.name),
      ['orders-app', 'billing', 'broken'],
    );
  });
  test('the setting beats manifests', () => {
    assert.equal(
      inferWorkload([hint('orders-app', 1), hint('billing', 0)], annotated).inferred?.workload.name,
      'billing',
    );
  });
  test('two equally strong matches: the user picks', () => {
    assert.equal(inferWorkload([hint('orders-app', 1), hint('billing', 1)], annotated).inferred, undefined);
  });
  test('a hint naming nothing annotated, or an invalid workload, infers nothing', () => {
    assert.equal(inferWorkload([hint('other', 0)], annotated).inferred, undefined);
    assert.equal(inferWorkload([hint('broken', 0)], annotated).inferred, undefined);
  });
  test('a kind in the hint must match', () => {
    assert.equal(
      inferWorkload([{ kind: 'StatefulSet', name: 'orders-app', strength: 0, from: 's' }], annotated)
        .inferred,
      undefined,
    );
  });
});

describe('filters', () => {
  const context = {
    workload: { kind: 'Deployment' as const, name: 'orders-app' },
    queues: ['orders'],
    owner: 'alice',
    splits: [
      split({ owner: 'bob', phase: 'Active', filter: { 'x-queue-split-user': 'bob' } }),
      split({ owner: 'carol', phase: 'Active', queues: ['invoices'], filter: { team: 'red' } }),
      split({ owner: 'dave', phase: 'Rejected', filter: {} }),
    ],
  };

  test('the default is x-queue-split-user=<owner>', () => {
    assert.equal(defaultFilterText('alice'), 'x-queue-split-user=alice');
    assert.deepEqual(checkFilter(defaultFilterText('alice'), context).filter, {
      'x-queue-split-user': 'alice',
    });
  });
  test('several K=V pairs are AND-ed', () => {
    assert.deepEqual(checkFilter('x-queue-split-user=alice, team=blue', context).filter, {
      team: 'blue',
      'x-queue-split-user': 'alice',
    });
  });
  test('syntax errors come from the shared parser', () => {
    assert.match(checkFilter('no-equals-sign', context).error!, /has no "="/);
  });
  test('an overlap with a live route on a shared queue is refused, without repeating their value', () => {
    const error = checkFilter('x-queue-split-user=bob', context).error!;
    assert.match(error, /Overlaps the split of bob on orders/);
    assert.ok(!error.includes('=bob'), error);
    assert.match(checkFilter('', context).error!, /empty filter takes every message/);
    assert.match(
      checkFilter('team=blue', context).error!,
      /bob/,
      'team=blue shares no key with bob: they overlap',
    );
  });
  test('routes on other queues or in a final phase do not count', () => {
    assert.equal(checkFilter('team=red,x-queue-split-user=alice', context).error, undefined);
  });
});

describe('adopting my own split', () => {
  const splits = [
    split({ owner: 'alice', phase: 'Active', queues: ['orders', 'kpay'] }),
    split({ owner: 'bob', phase: 'Active' }),
  ];
  test('finds my live split of the workload', () => {
    assert.equal(
      myLiveSplit(splits, { kind: 'Deployment', name: 'orders-app' }, 'alice')?.spec.owner,
      'alice',
    );
    assert.equal(myLiveSplit(splits, { kind: 'Deployment', name: 'orders-app' }, 'erin'), undefined);
    assert.equal(
      myLiveSplit(
        [split({ owner: 'alice', deleting: true })],
        { kind: 'Deployment', name: 'orders-app' },
        'alice',
      ),
      undefined,
    );
  });
  test('same request = same queues (any order) and same filter', () => {
    const mine = splits[0]!;
    assert.equal(sameRequest(mine, ['kpay', 'orders'], { 'x-queue-split-user': 'alice' }), true);
    assert.equal(sameRequest(mine, ['orders'], { 'x-queue-split-user': 'alice' }), false);
    assert.equal(sameRequest(mine, ['kpay', 'orders'], { 'x-queue-split-user': 'al' }), false);
  });
});
