// Watches the kubeconfig files in use, wherever they are (usually outside the workspace, so not
// with VS Code's workspace watcher): each file's folder with fs.watch, filtered by the file's
// name. The folder, not the file: `kubectl config use-context` rewrites the file in place, but
// other tools write a new file and rename it over the old one, which a watch on the old file
// (its inode) would miss; a folder watch also sees a listed file that appears later. A folder
// that does not exist (yet) is polled instead. Changes are reported once things settle.
import * as fs from 'node:fs';
import * as path from 'node:path';
import type * as vscode from 'vscode';

/** Quiet time after the last event before reporting (kubectl writes lock, file, unlock). */
const SETTLE_MS = 150;
const POLL_MS = 1_000;

export class KubeconfigWatcher implements vscode.Disposable {
  private key = '';
  private closers: (() => void)[] = [];
  private timer: NodeJS.Timeout | undefined;
  private pending = new Set<string>();

  constructor(
    private readonly onChange: (files: string[]) => void,
    private readonly log: Pick<vscode.LogOutputChannel, 'info' | 'warn'>,
  ) {}

  /** Watches exactly these files from now on (no-op when they are the ones watched). */
  watch(files: readonly string[]): void {
    const absolute = [...new Set(files.map((f) => path.resolve(f)))];
    const key = absolute.join('\n');
    if (key === this.key) return;
    this.close();
    this.key = key;
    const byFolder = new Map<string, Set<string>>();
    for (const file of absolute) {
      const folder = path.dirname(file);
      const names = byFolder.get(folder) ?? new Set<string>();
      names.add(path.basename(file));
      byFolder.set(folder, names);
    }
    for (const [folder, names] of byFolder) this.watchFolder(folder, names);
    this.log.info(`watching the kubeconfig ${absolute.join(', ')}`);
  }

  private watchFolder(folder: string, names: Set<string>): void {
    const report = (name: string) => {
      this.pending.add(path.join(folder, name));
      if (this.timer !== undefined) clearTimeout(this.timer);
      this.timer = setTimeout(() => {
        this.timer = undefined;
        const changed = [...this.pending];
        this.pending.clear();
        this.onChange(changed);
      }, SETTLE_MS);
    };
    const poll = () => {
      for (const name of names) {
        const file = path.join(folder, name);
        const listener = (current: fs.Stats, previous: fs.Stats) => {
          if (current.mtimeMs !== previous.mtimeMs || current.size !== previous.size) report(name);
        };
        fs.watchFile(file, { interval: POLL_MS, persistent: false }, listener);
        this.closers.push(() => fs.unwatchFile(file, listener));
      }
    };
    let watcher: fs.FSWatcher;
    try {
      watcher = fs.watch(folder, { persistent: false }, (_event, filename) => {
        // Some platforms do not say which file changed: then any may have.
        const name = filename?.toString();
        if (name === undefined || name === '') for (const n of names) report(n);
        else if (names.has(name)) report(name);
      });
    } catch (err) {
      if ((err as NodeJS.ErrnoException).code !== 'ENOENT')
        this.log.warn(`cannot watch ${folder} (${String(err)}); polling the kubeconfig there instead`);
      poll();
      return;
    }
    watcher.on('error', (err) => {
      // The folder went away (or the watch broke): poll from now on.
      this.log.warn(`the watch of ${folder} stopped (${String(err)}); polling the kubeconfig there instead`);
      watcher.close();
      poll();
      for (const n of names) report(n);
    });
    this.closers.push(() => watcher.close());
  }

  private close(): void {
    for (const close of this.closers) close();
    this.closers = [];
    if (this.timer !== undefined) clearTimeout(this.timer);
    this.timer = undefined;
    this.pending.clear();
    this.key = '';
  }

  dispose(): void {
    this.close();
  }
}
