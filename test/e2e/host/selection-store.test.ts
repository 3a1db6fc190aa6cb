// The workspace's context/namespace choice (extension/selectionStore.ts) with the real
// `vscode.workspace.fs`: it is on disk when save() resolves, a choice kept only in the memento
// (older versions) is still used, a damaged file is ignored with a warning, and a folder that
// cannot be written fails the save with the path and the fix while the choice still applies.
import assert from 'node:assert/strict';
import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import { after, describe, it } from 'mocha';
import * as vscode from 'vscode';
import { SelectionStore } from '../../../extension/selectionStore';

const MEMENTO_KEY = 'queueSplit.selection';

/** workspaceState's get/update over a Map (the store uses nothing else). */
function memento(initial: Record<string, unknown> = {}) {
  const values = new Map(Object.entries(initial));
  return {
    values,
    get: <T>(key: string): T | undefined => values.get(key) as T | undefined,
    update: async (key: string, value: unknown) => {
      values.set(key, value);
    },
  } as Pick<vscode.Memento, 'get' | 'update'> & { values: Map<string, unknown> };
}

function recorder() {
  const warnings: string[] = [];
  return { warnings, warn: (message: string) => void warnings.push(message) };
}

describe('selection store', () => {
  const root = fs.mkdtempSync(path.join(os.tmpdir(), 'qs-selection-store-'));
  after(() => fs.rmSync(root, { recursive: true, force: true }));
  let n = 0;
  const folder = () => vscode.Uri.file(path.join(root, `ws-${++n}`, 'queuesplit.queue-split'));

  it('the choice is in the file when save resolves, and a new window reads it from there', async () => {
    const storage = folder();
    await new SelectionStore(storage, memento(), recorder()).save({
      context: 'qs-second',
      namespace: 'team-a',
    });
    const written = JSON.parse(
      fs.readFileSync(path.join(storage.fsPath, 'selection.json'), 'utf8'),
    ) as unknown;
    assert.deepEqual(written, { context: 'qs-second', namespace: 'team-a' });
    // The memento lost it (not flushed before the reload): the file still has it.
    const again = new SelectionStore(storage, memento({ [MEMENTO_KEY]: { context: 'stale' } }), recorder());
    assert.deepEqual(await again.get(), { context: 'qs-second', namespace: 'team-a' });
  });

  it('a choice an older version kept in the memento only is still used', async () => {
    const store = new SelectionStore(
      folder(),
      memento({ [MEMENTO_KEY]: { context: 'old', namespace: 'ns' } }),
      recorder(),
    );
    assert.deepEqual(await store.get(), { context: 'old', namespace: 'ns' });
  });

  it('without a workspace folder the memento keeps it', async () => {
    const state = memento();
    const store = new SelectionStore(undefined, state, recorder());
    await store.save({ context: 'c', namespace: 'n' });
    assert.deepEqual(await store.get(), { context: 'c', namespace: 'n' });
    assert.deepEqual(state.values.get(MEMENTO_KEY), { context: 'c', namespace: 'n' });
  });

  it('a damaged file is ignored with a warning naming it, and the memento is used', async () => {
    const storage = folder();
    fs.mkdirSync(storage.fsPath, { recursive: true });
    fs.writeFileSync(path.join(storage.fsPath, 'selection.json'), '{"context": 7}');
    const log = recorder();
    const store = new SelectionStore(storage, memento({ [MEMENTO_KEY]: { context: 'kept' } }), log);
    assert.deepEqual(await store.get(), { context: 'kept' });
    assert.equal(log.warnings.length, 1);
    assert.match(log.warnings[0]!, /selection\.json: "context" is not a non-empty string/);
  });

  it('a folder that cannot be written fails the save with the path and the fix; the choice applies', async () => {
    const storage = folder();
    // A file where the storage folder should be: nothing can be created under it.
    fs.mkdirSync(path.dirname(storage.fsPath), { recursive: true });
    fs.writeFileSync(storage.fsPath, '');
    const store = new SelectionStore(storage, memento(), recorder());
    await assert.rejects(store.save({ context: 'c', namespace: 'n' }), (err: Error) => {
      assert.match(err.message, /could not be saved to .*selection\.json/);
      assert.match(err.message, /Make that folder writable, then select again/);
      return true;
    });
    assert.deepEqual(await store.get(), { context: 'c', namespace: 'n' });
  });
});
