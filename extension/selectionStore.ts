// Where this workspace's "Select Context/Namespace…" choice is kept, durable the moment save()
// resolves. workspaceState alone is not: the workbench writes it out some time after update()
// resolves (a browser workbench such as code-server flushes it to IndexedDB about 100 ms later),
// so a window reloaded right after the pick came back to the old target. The choice is written
// to a small file in the extension's workspace storage folder; the memento is still updated and
// read when there is no workspace (no storage folder) and for choices saved before the file.
import * as vscode from 'vscode';
import { formatSelection, parseSelection, type Selection } from './model/selection';

const MEMENTO_KEY = 'queueSplit.selection';
const FILE_NAME = 'selection.json';

export class SelectionStore {
  private current: Selection;
  private readonly loaded: Promise<void>;
  /** Writes run one after another: they share the temporary file. */
  private writes: Promise<void> = Promise.resolve();

  constructor(
    private readonly storageUri: vscode.Uri | undefined,
    // Only what is used, so the extension-host test can hand in its own.
    private readonly memento: Pick<vscode.Memento, 'get' | 'update'>,
    private readonly log: Pick<vscode.LogOutputChannel, 'warn'>,
  ) {
    this.current = memento.get<Selection>(MEMENTO_KEY) ?? {};
    this.loaded = this.load();
  }

  async get(): Promise<Selection> {
    await this.loaded;
    return this.current;
  }

  /** Applies the selection and resolves once it is on disk (or fails saying it is not). */
  async save(selection: Selection): Promise<void> {
    await this.loaded;
    this.current = selection;
    await this.memento.update(MEMENTO_KEY, selection);
    const folder = this.storageUri;
    if (folder === undefined) return;
    const write = this.writes.then(() => this.write(folder, selection));
    this.writes = write.catch(() => undefined);
    await write;
  }

  private async write(folder: vscode.Uri, selection: Selection): Promise<void> {
    const file = vscode.Uri.joinPath(folder, FILE_NAME);
    const temp = vscode.Uri.joinPath(folder, `${FILE_NAME}.tmp`);
    try {
      await vscode.workspace.fs.createDirectory(folder);
      // Written aside and renamed over the old file, so a crash mid-write leaves the old choice.
      await vscode.workspace.fs.writeFile(temp, new TextEncoder().encode(formatSelection(selection)));
      await vscode.workspace.fs.rename(temp, file, { overwrite: true });
    } catch (err) {
      const reason = err instanceof Error ? err.message : String(err);
      throw new Error(
        vscode.l10n.t(
          'The selected context and namespace apply now but could not be saved to {0} ({1}), so a reloaded window may not remember them. Make that folder writable, then select again.',
          file.fsPath,
          reason,
        ),
      );
    }
  }

  private async load(): Promise<void> {
    if (this.storageUri === undefined) return;
    const file = vscode.Uri.joinPath(this.storageUri, FILE_NAME);
    let bytes: Uint8Array;
    try {
      bytes = await vscode.workspace.fs.readFile(file);
    } catch (err) {
      // No file: nothing chosen yet, or chosen by a version that kept it in the memento only.
      if (err instanceof vscode.FileSystemError && err.code === 'FileNotFound') return;
      this.log.warn(`could not read ${file.fsPath} (${String(err)}); using the selection VS Code kept`);
      return;
    }
    const parsed = parseSelection(new TextDecoder().decode(bytes));
    if ('problem' in parsed) {
      this.log.warn(
        `ignoring ${file.fsPath}: ${parsed.problem}; using the selection VS Code kept. ` +
          'Run "Select Context/Namespace…" to rewrite it.',
      );
      return;
    }
    this.current = parsed.selection;
  }
}
