// The namespaces the Queue Splits view shows (extension/model/namespaces.ts): the
// queueSplit.namespaces setting read, "*" (all I can list) with and without the right to list,
// the selected namespace kept visible, the picker's typed names.
import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import {
  namespacesSettingValue,
  parseNamespacesSetting,
  parseTypedNamespaces,
  resolveNamespaces,
} from '../../../extension/model/namespaces';

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
