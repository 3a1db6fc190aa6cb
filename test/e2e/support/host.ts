// What the extension-host test files share: the activated extension, the settings a file sets
// (globally, as a developer's settings.json would, and put back after), a node debug launch, and
// the clean-up every file's `after` does. Bundled into the extension-host tests.
import assert from 'node:assert/strict';
import { randomBytes } from 'node:crypto';
import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';
import * as vscode from 'vscode';
import type { QueueSplitApi } from '../../../extension/extension';
import { screenshotMarker } from '../host/markers';
import { bounded } from './bounded';

export async function activateExtension(): Promise<QueueSplitApi> {
  const ext = vscode.extensions.getExtension<QueueSplitApi>('queuesplit.queue-split');
  assert.ok(ext);
  return ext.activate();
}

/** The settings a test file sets, each remembered so that `reset` puts every one back. */
export class HostSettings {
  private readonly keys = new Set<string>();

  async set(values: Record<string, unknown>): Promise<void> {
    const config = vscode.workspace.getConfiguration('queueSplit');
    for (const [key, value] of Object.entries(values)) {
      this.keys.add(key);
      await config.update(key, value, vscode.ConfigurationTarget.Global);
    }
  }

  /** A split fixture's cluster (test/e2e/support/cluster.ts), its owner, a 30 s lease, and `extra`. */
  forCluster(
    fixture: { services: { kubeconfig: string }; namespace: string; owner: string },
    extra: Record<string, unknown> = {},
  ): Promise<void> {
    return this.set({
      kubeconfig: fixture.services.kubeconfig,
      namespace: fixture.namespace,
      owner: fixture.owner,
      leaseSeconds: 30,
      ...extra,
    });
  }

  async reset(): Promise<void> {
    const config = vscode.workspace.getConfiguration('queueSplit');
    for (const key of this.keys) await config.update(key, undefined, vscode.ConfigurationTarget.Global);
  }
}

/** Starts a node debug session of `program` named `name`, with the other launch fields given. */
export function launchNode(
  name: string,
  program: string,
  fields: Record<string, unknown>,
  folder?: vscode.WorkspaceFolder,
): Thenable<boolean> {
  return vscode.debug.startDebugging(folder, { type: 'node', request: 'launch', name, program, ...fields });
}

/**
 * A file's clean-up, each step bounded: debugging stopped, the editors closed (when it opened
 * some), its settings put back, its files removed, and its namespace deleted.
 */
export async function leaveHost(options: {
  settings: HostSettings;
  closeEditors?: boolean;
  remove: readonly string[];
  fixture: { close(): Promise<void> } | undefined;
}): Promise<void> {
  await bounded('stop debugging', () => vscode.debug.stopDebugging());
  if (options.closeEditors)
    await bounded('close editors', () => vscode.commands.executeCommand('workbench.action.closeAllEditors'));
  await bounded('reset settings', () => options.settings.reset());
  for (const file of options.remove) fs.rmSync(file, { recursive: true, force: true });
  const { fixture } = options;
  if (fixture) await bounded('delete the namespace', () => fixture.close());
}

/**
 * A screenshot of this workbench as it is now, taken by the runner outside VS Code (the page
 * is its): test-results/e2e/<workbench>/NN-<name>.png. Resolves once it is saved.
 */
export async function screenshot(name: string, timeoutMs = 20_000): Promise<string> {
  const done = path.join(os.tmpdir(), `qs-e2e-shot-${randomBytes(6).toString('hex')}`);
  console.log(`${screenshotMarker}${JSON.stringify({ name, done })}`);
  const deadline = Date.now() + timeoutMs;
  while (Date.now() < deadline) {
    if (fs.existsSync(done)) {
      const size = fs.statSync(done).size;
      fs.rmSync(done, { force: true });
      return `${name}: ${size} bytes`;
    }
    if (fs.existsSync(`${done}.failed`)) {
      const why = fs.readFileSync(`${done}.failed`, 'utf8');
      fs.rmSync(`${done}.failed`, { force: true });
      throw new Error(`the runner could not take screenshot "${name}": ${why}`);
    }
    await sleep(100);
  }
  throw new Error(`the runner did not take screenshot "${name}" within ${timeoutMs / 1000}s`);
}
