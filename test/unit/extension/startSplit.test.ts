// The decisions behind Start Split…: which workload the workspace means, which filters are
// valid and free, whether an existing split can be adopted.
import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import { folderCandidate, manifestCandidates } from '../../../extension/model/manifests';
import type { AnyOfFilter } from '../../../core/filter';
import type { QueueSplit } from '../../../core/crd/queueSplitSchema';
import {
  checkFilter,
  checkOverlap,
  defaultFilterKindOf,
  defaultFilterText,
  inferWorkload,
  myLiveSplit,
  parseWorkloadRef,
  sameRequest,
  type WorkloadCandidate,
} from '../../../extension/model/startSplit';
import { restartsWorkload } from '../../../extension/model/workloadRestart';
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
  /** The context with these splits alone (each Active, on orders). */
  const next = (...splits: QueueSplit[]) => ({ ...context, splits });
  const theirs = (match: AnyOfFilter, owner = 'bob') => split({ owner, phase: 'Active', match });
  const mine = (match: AnyOfFilter) => split({ owner: 'alice', name: 'qs-mine', phase: 'Active', match });

  test('the default is x-queue-split-user=<owner>', () => {
    assert.equal(defaultFilterText('alice'), 'x-queue-split-user=alice');
    assert.deepEqual(checkFilter(defaultFilterText('alice'), context).filter, {
      'x-queue-split-user': 'alice',
    });
  });
  test('or my OpenTelemetry routing key: the baggage member queue-split-user', () => {
    assert.equal(defaultFilterText('alice', 'baggage'), 'baggage:queue-split-user=alice');
    assert.deepEqual(checkFilter(defaultFilterText('alice', 'baggage'), next()).filter, {
      'baggage:queue-split-user': 'alice',
    });
    // Next to a teammate filtering on the header, a message can carry both: an overlap, said so.
    assert.match(
      checkFilter(defaultFilterText('alice', 'baggage'), context).error!,
      /^Overlaps the split of bob on orders: a message with baggage:queue-split-user="alice", x-queue-split-user=… would match both/,
    );
    // A name the text form must quote still reads back as itself.
    assert.equal(defaultFilterText('a (b)'), 'x-queue-split-user="a (b)"');
    assert.deepEqual(checkFilter(defaultFilterText('a (b)'), context).filter, {
      'x-queue-split-user': 'a (b)',
    });
  });
  test('the accepted filter says which proposal it used (remembered for the next start)', () => {
    assert.equal(defaultFilterKindOf({ 'baggage:queue-split-user': 'alice', team: 'x' }), 'baggage');
    assert.equal(defaultFilterKindOf({ anyOf: [{ 'x-queue-split-user': { prefix: 'al' } }] }), 'header');
    assert.equal(defaultFilterKindOf({ team: 'blue' }), undefined);
  });
  test('several K=V pairs are AND-ed', () => {
    assert.deepEqual(checkFilter('x-queue-split-user=alice, team=blue', context).filter, {
      team: 'blue',
      'x-queue-split-user': 'alice',
    });
  });
  test('prefixes, regexes, sets and alternatives are read as typed', () => {
    assert.deepEqual(checkFilter('tenant^=alice-', next()).filter, {
      anyOf: [{ tenant: { prefix: 'alice-' } }],
    });
    assert.deepEqual(checkFilter('tenant~="(dev|qa)-[0-9]+" or has(x-alice)', next()).filter, {
      anyOf: [{ tenant: { regex: '(dev|qa)-[0-9]+' } }, { 'x-alice': { exists: true } }],
    });
  });
  test('syntax errors come from the shared parser', () => {
    assert.match(checkFilter('no-equals-sign', context).error!, /has no "=" \(nor another operator\)/);
    assert.match(checkFilter('tenant~="(a"', context).error!, /regex|parenthes/i);
  });
  test('an overlap with a teammate shows a witness without their values, and the separating change', () => {
    const error = checkFilter('x-queue-split-user=bob', context).error!;
    assert.equal(
      error,
      'Overlaps the split of bob on orders: a message with x-queue-split-user="bob" would match both. ' +
        'The split of bob already takes every message your filter matches; change x-queue-split-user in your new split to a value other than theirs.',
    );
    assert.equal(
      checkFilter('team=blue', context).error,
      'Overlaps the split of bob on orders: a message with team="blue", x-queue-split-user=… would match both (their values are not shown). ' +
        'Add x-queue-split-user=<a value other than theirs> to your new split, e.g. x-queue-split-user=<your name>, so the two filters disagree on a header they share.',
    );
    assert.match(checkFilter('', context).error!, /empty filter takes every message/);
    assert.doesNotMatch(checkFilter('', context).error!, /"bob"/);
  });
  test("a teammate's non-equality values are never spelled out", () => {
    const bob = theirs({ anyOf: [{ region: { equals: 'eu-secret' }, tenant: { prefix: 'bob-secret-' } }] });
    const error = checkFilter('tenant^=b', next(bob)).error!;
    assert.equal(
      error,
      'Overlaps the split of bob on orders: a message with region=…, tenant=… would match both (their values are not shown). ' +
        'Add region=<a value other than theirs> to your new split, so that no message can match both.',
      'the witness tenant value would be their prefix: hidden although the typed filter reads tenant',
    );
    // Excluding a value of mine leaves theirs as the only witness value: hidden.
    const carol = split({ owner: 'carol', phase: 'Active', filter: { k: 'carol-secret' } });
    assert.doesNotMatch(checkFilter('k!=alice', next(carol)).error!, /secret/);
    for (const typed of ['tenant^=b', 'tenant~="bob.*"', 'region!=x', 'has(region)'])
      assert.doesNotMatch(checkFilter(typed, next(bob)).error ?? '', /secret/, typed);
  });
  test("a regex overlapping a teammate's regex: the typed key's witness value is shown", () => {
    const bob = theirs({ anyOf: [{ tenant: { regex: '(alice|bob)-[0-9]+' } }] });
    assert.equal(
      checkFilter('tenant^=alice-', next(bob)).error,
      'Overlaps the split of bob on orders: a message with tenant="alice-0" would match both. ' +
        'Add tenant=<a value other than theirs> to your new split, so that no message can match both.',
    );
    assert.equal(checkFilter('tenant^=carol-', next(bob)).error, undefined, 'disjoint: accepted');
  });
  test('with alternatives, only the keys of the overlapping alternative of mine show values', () => {
    const bob = theirs({ anyOf: [{ tenant: { prefix: 'bob-' } }, { y: { equals: 'bob-y' } }] });
    const error = checkFilter('x=1 or tenant^=b', next(bob)).error!;
    assert.match(error, /^Overlaps the split of bob on orders: a message with /);
    assert.match(error, /\(to each of its alternatives\)/);
    assert.doesNotMatch(error, /bob-/);
  });
  test("baggage: my OpenTelemetry routing key next to a teammate's", () => {
    const bob = theirs({ anyOf: [{ 'baggage:queue-split-user': { in: ['bob', 'bobby'] } }] });
    assert.equal(checkFilter('baggage:queue-split-user=alice', next(bob)).error, undefined);
    assert.equal(
      checkFilter('baggage:queue-split-user^=bo', next(bob)).error,
      'Overlaps the split of bob on orders: a message with baggage:queue-split-user=… would match both (their values are not shown). ' +
        'Add baggage:queue-split-user=<a value other than theirs> to your new split, so that no message can match both.',
    );
    // The raw baggage header and one of its members: not decided exactly, said with the reason.
    const raw = theirs({ anyOf: [{ baggage: { exists: true } }] });
    assert.equal(
      checkFilter('baggage:queue-split-user=alice', next(raw)).error,
      'May overlap the split of bob on orders: one filter reads "baggage:queue-split-user" and the other "baggage", which are parts of the same baggage header; ' +
        'whether one message can satisfy both is not decided exactly, so it is treated as an overlap. ' +
        'No term added to your new split on the keys the split of bob reads separates them (the two read the same part of the message differently): ' +
        'filter on what tells your messages apart (e.g. x-queue-split-user=<your name> on the messages you produce), or have the split of bob narrowed.',
    );
  });
  test('my own other split is shown in full: its filter, the witness and the change', () => {
    const own = mine({ anyOf: [{ tenant: { prefix: 'alice-' } }] });
    assert.equal(
      checkFilter('tenant~="alice-[0-9]+"', next(own)).error,
      'Overlaps your split qs-mine (tenant^=alice-) on orders: a message with headers tenant="alice-0" would match both. ' +
        'No term added to your new split on the keys your split qs-mine reads separates them (every message yours can match, theirs can match too): ' +
        'filter on what tells your messages apart (e.g. x-queue-split-user=<your name> on the messages you produce), or have your split qs-mine narrowed.',
    );
    const body = mine({ anyOf: [{ 'body:$.customer.id': { regex: 'c-[0-9]+' } }] });
    assert.match(
      checkFilter('body:$.customer.id^=c-1', next(body)).error!,
      /a message with no headers and body \{"customer":\{"id":"c-1"\}\} would match both/,
    );
  });
  test('routes on other queues or in a final phase do not count', () => {
    assert.equal(checkFilter('team=red,x-queue-split-user=alice', context).error, undefined);
  });
  test("a parsed filter (a launch configuration's) is checked the same way", () => {
    assert.match(
      checkOverlap({ anyOf: [{ 'x-queue-split-user': { prefix: 'b' } }] }, context).error!,
      /the split of bob/,
    );
    assert.deepEqual(checkOverlap({ team: 'blue', 'x-queue-split-user': 'alice' }, context).filter, {
      team: 'blue',
      'x-queue-split-user': 'alice',
    });
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

describe('whether a split restarts the workload', () => {
  const orders = { kind: 'Deployment' as const, name: 'orders-app' };
  test('the first split of a workload does', () => {
    assert.equal(restartsWorkload([], orders), true);
    assert.equal(restartsWorkload([split({ workload: 'billing', phase: 'Active' })], orders), true);
    assert.equal(restartsWorkload([split({ kind: 'StatefulSet', phase: 'Active' })], orders), true);
  });
  test('one more split of a workload already split does not', () => {
    assert.equal(restartsWorkload([split({ phase: 'Active', owner: 'bob' })], orders), false);
    assert.equal(restartsWorkload([split({ owner: 'bob' })], orders), false, 'a split still pending');
  });
  test('ended or deleted splits do not count', () => {
    for (const phase of ['Stopped', 'Failed', 'Rejected'] as const)
      assert.equal(restartsWorkload([split({ phase })], orders), true, phase);
    assert.equal(restartsWorkload([split({ phase: 'Active', deleting: true })], orders), true);
  });
});
