// The namespaces the Queue Splits view shows (extension/model/namespaces.ts): the
// queueSplit.namespaces setting read, "*" (all I can list) with and without the right to list,
// the selected namespace kept visible, the picker's typed names; the tree's namespace level and
// the namespace a row's command acts in.
import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import {
  namespacesSettingValue,
  parseNamespacesSetting,
  parseTypedNamespaces,
  resolveNamespaces,
} from '../../../extension/model/namespaces';
import {
  childrenOf,
  lookOf,
  namespaceNode,
  namespaceOfNode,
  type TreeSnapshot,
} from '../../../extension/model/tree';
import { split, workload } from './fixtures';

describe('queueSplit.namespaces setting', () => {
  test('unset or empty: the selected namespace only (the flat tree)', () => {
    for (const value of [undefined, null, [], [''], ['  ']])
      assert.deepEqual(parseNamespacesSetting(value), { setting: { kind: 'selected' }, invalid: [] });
  });
  test('names in the order written, duplicates once, trimmed', () => {
    assert.deepEqual(parseNamespacesSetting(['team-b', ' team-a ', 'team-b']), {
      setting: { kind: 'list', names: ['team-b', 'team-a'] },
      invalid: [],
    });
  });
  test('"*" anywhere means every namespace I can list', () => {
    assert.deepEqual(parseNamespacesSetting(['team-a', '*']).setting, { kind: 'all' });
    assert.deepEqual(parseNamespacesSetting('*').setting, { kind: 'all' });
  });
  test('bad entries are left out and named, the good ones still apply', () => {
    const parsed = parseNamespacesSetting(['Team_A', 42, 'team-b']);
    assert.deepEqual(parsed.setting, { kind: 'list', names: ['team-b'] });
    assert.deepEqual(parsed.invalid, [
      { value: 'Team_A', reason: 'not-a-name' },
      { value: '42', reason: 'not-a-string' },
    ]);
  });
});

describe('the namespaces shown', () => {
  test('selected only: one namespace, the flat tree', () => {
    assert.deepEqual(resolveNamespaces({ kind: 'selected' }, 'dev'), {
      namespaces: ['dev'],
      selected: 'dev',
    });
  });
  test('a list keeps its order and adds the selected namespace first when it is missing', () => {
    assert.deepEqual(resolveNamespaces({ kind: 'list', names: ['b', 'dev'] }, 'dev').namespaces, [
      'b',
      'dev',
    ]);
    assert.deepEqual(resolveNamespaces({ kind: 'list', names: ['b', 'c'] }, 'dev').namespaces, [
      'dev',
      'b',
      'c',
    ]);
  });
  test('all: the namespaces I can list, with the selected one', () => {
    assert.deepEqual(resolveNamespaces({ kind: 'all' }, 'b', ['a', 'b', 'c']), {
      namespaces: ['a', 'b', 'c'],
      selected: 'b',
    });
    assert.deepEqual(resolveNamespaces({ kind: 'all' }, 'x', ['a']).namespaces, ['x', 'a']);
  });
  test('all, when RBAC refuses listing namespaces: the selected one, and it says so', () => {
    assert.deepEqual(resolveNamespaces({ kind: 'all' }, 'dev', undefined), {
      namespaces: ['dev'],
      selected: 'dev',
      cannotList: true,
    });
  });
});

describe('the namespaces picker', () => {
  test('typed names: commas or spaces, duplicates once; the first bad one is named', () => {
    assert.deepEqual(parseTypedNamespaces('team-a, team-b  team-a,'), { names: ['team-a', 'team-b'] });
    assert.deepEqual(parseTypedNamespaces('team-a, Team_B'), { bad: 'Team_B' });
    assert.deepEqual(parseTypedNamespaces(''), { names: [] });
  });
  test('the value written: the names, or ["*"] for all', () => {
    assert.deepEqual(namespacesSettingValue(['b', 'a', 'b'], false), ['b', 'a']);
    assert.deepEqual(namespacesSettingValue(['b'], true), ['*']);
  });
});

describe('the namespace level of the tree', () => {
  const target = { context: 'kind', namespace: 'team-a' };
  const snapshot = (namespace: string, loading = false): TreeSnapshot => ({
    target: { ...target, namespace },
    owner: 'alice',
    workloads: loading ? [] : [{ ...workload(), namespace }],
    splits: [],
    sessions: new Map(),
    loading,
  });
  test("a namespace node's children are its workloads, as the flat tree's context had", () => {
    const node = namespaceNode(target, 'team-b');
    const children = childrenOf(snapshot('team-b'), node);
    assert.deepEqual(
      children.map((c) => c.id),
      ['wl:team-b/Deployment/orders-app'],
    );
    assert.deepEqual(
      childrenOf(snapshot('team-b', true), node).map((c) => (c.kind === 'notice' ? c.text : c.id)),
      ['Loading…'],
    );
  });
  test('the selected namespace opens; the others load when expanded; an error marks the node', () => {
    assert.equal(lookOf(snapshot('team-a'), namespaceNode(target, 'team-a')).collapsible, 'expanded');
    const other = lookOf(snapshot('team-b'), namespaceNode(target, 'team-b'));
    assert.equal(other.collapsible, 'collapsed');
    assert.equal(other.contextValue, 'namespace');
    const failed = lookOf(
      snapshot('team-b'),
      namespaceNode(target, 'team-b', { error: { message: 'may not list deployments.apps' } }),
    );
    assert.deepEqual(failed.icon, { id: 'error', color: 'errorForeground' });
    assert.equal(failed.contextValue, 'namespace.error');
  });
  test("a row's commands act in its namespace; rows without one in the selected namespace", () => {
    const node = namespaceNode(target, 'team-b');
    assert.equal(namespaceOfNode(node), 'team-b');
    const [wl] = childrenOf(snapshot('team-b'), node);
    assert.equal(namespaceOfNode(wl), 'team-b');
    const route = { kind: 'route' as const, id: 'r', split: split(), queue: 'orders', mine: true };
    assert.equal(namespaceOfNode(route), 'team-a');
    assert.equal(namespaceOfNode(undefined), undefined);
    assert.equal(namespaceOfNode({ kind: 'context', id: 'c', target }), undefined);
  });
});
