// The `vscode` module for test/bench/ui-redraw.bench.ts: enough of the API for the extension's
// session manager, Queue Splits tree and status bar to run in a plain Node process, and the part
// of VS Code's extension host they drive, done as VS Code 1.100.3 does it (code-server 4.100.3,
// out/vs/workbench/api/node/extensionHostProcess.js), so that its cost is counted:
//   - a tree view (ExtHostTreeView) takes onDidChangeTreeData through Event.debounce(200 ms,
//     leading): the first change at once, later ones merged until 200 ms pass without one. A
//     change of the whole tree then fetches every expanded node again (getChildren, getTreeItem
//     for each child); a change of elements calls getTreeItem for each element it has (found
//     by identity). Each item is serialized, as it crosses to the renderer.
//   - a status bar item (ExtHostStatusBarEntry) sends its entry to the renderer on a
//     setTimeout(0) after a property changes (serialized here).
// Not modelled: the IPC itself and everything in the renderer (VS Code's other processes).
// Installed by install(): `require('vscode')` answers this module from then on.
import Module from 'node:module';

/** What VS Code's extension-host side did, since the last reset. */
export const counters = {
  treeFullRefreshes: 0,
  treeElementRefreshes: 0,
  treeItemsSent: 0,
  statusBarEntriesSent: 0,
  reset(): void {
    this.treeFullRefreshes = 0;
    this.treeElementRefreshes = 0;
    this.treeItemsSent = 0;
    this.statusBarEntriesSent = 0;
  },
};

type Listener<T> = (e: T) => unknown;

export class Disposable {
  constructor(private readonly callOnDispose: () => unknown) {}
  static from(...items: { dispose(): unknown }[]): Disposable {
    return new Disposable(() => items.forEach((i) => i.dispose()));
  }
  dispose(): void {
    this.callOnDispose();
  }
}

export class EventEmitter<T> {
  private listeners = new Set<Listener<T>>();
  readonly event = (listener: Listener<T>, thisArg?: unknown, disposables?: Disposable[]): Disposable => {
    const bound: Listener<T> = (e) => listener.call(thisArg, e);
    this.listeners.add(bound);
    const d = new Disposable(() => this.listeners.delete(bound));
    disposables?.push(d);
    return d;
  };
  fire(data: T): void {
    for (const l of [...this.listeners]) l(data);
  }
  dispose(): void {
    this.listeners.clear();
  }
}

export class ThemeColor {
  constructor(readonly id: string) {}
}
export class ThemeIcon {
  constructor(
    readonly id: string,
    readonly color?: ThemeColor,
  ) {}
}
export class MarkdownString {
  constructor(readonly value = '') {}
}
export enum TreeItemCollapsibleState {
  None = 0,
  Collapsed = 1,
  Expanded = 2,
}
export enum StatusBarAlignment {
  Left = 1,
  Right = 2,
}
export enum ProgressLocation {
  SourceControl = 1,
  Window = 10,
  Notification = 15,
}
export class TreeItem {
  id?: string;
  description?: string;
  tooltip?: string | MarkdownString;
  iconPath?: ThemeIcon;
  contextValue?: string;
  command?: unknown;
  constructor(
    readonly label: string,
    readonly collapsibleState = TreeItemCollapsibleState.None,
  ) {}
}

/** What ExtHostTreeView sends for an item (the fields the renderer gets). */
function sendItem(item: TreeItem): void {
  JSON.stringify({
    id: item.id,
    label: item.label,
    description: item.description,
    tooltip: item.tooltip instanceof MarkdownString ? { value: item.tooltip.value } : item.tooltip,
    icon: item.iconPath?.id,
    color: item.iconPath?.color?.id,
    contextValue: item.contextValue,
    collapsibleState: item.collapsibleState,
    command: item.command !== undefined,
  });
  counters.treeItemsSent++;
}

interface TreeProvider<T> {
  onDidChangeTreeData: (l: Listener<T | T[] | undefined>) => Disposable;
  getChildren(node?: T): Promise<T[]> | T[];
  getTreeItem(node: T): TreeItem;
}

/** VS Code's Event.debounce(event, merge, 200, leading = true) as ExtHostTreeView uses it. */
function debounced<T>(onFire: (elements: (T | undefined)[]) => void): Listener<T | T[] | undefined> {
  let merged: (T | undefined)[] | undefined;
  let handle: NodeJS.Timeout | undefined;
  let calls = 0;
  return (e) => {
    if (Array.isArray(e) && e.length === 0) return;
    calls++;
    merged ??= [];
    if (Array.isArray(e)) merged.push(...e);
    else merged.push(e);
    if (handle === undefined) {
      onFire(merged);
      merged = undefined;
    }
    clearTimeout(handle);
    handle = setTimeout(() => {
      const out = merged;
      merged = undefined;
      handle = undefined;
      if (calls > 1 && out !== undefined) onFire(out);
      calls = 0;
    }, 200);
  };
}

export class TreeViewStandIn<T> {
  /** The elements VS Code has, by identity (ExtHostTreeView's nodes map). */
  private readonly known = new Set<T>();
  private readonly subscription: Disposable;
  private fetching: Promise<void> = Promise.resolve();
  description?: string;
  readonly onDidCollapseElement = new EventEmitter<{ element: T }>().event;
  readonly onDidChangeVisibility = new EventEmitter<{ visible: boolean }>().event;

  constructor(private readonly provider: TreeProvider<T>) {
    this.subscription = provider.onDidChangeTreeData(
      debounced<T>((elements) => {
        this.fetching = this.fetching.then(() => this.refresh(elements));
      }),
    );
  }

  /** The view opened: VS Code fetches every expanded node. Resolves when all is fetched. */
  async open(): Promise<void> {
    this.fetching = this.fetching.then(() => this.refresh([undefined]));
    await this.fetching;
  }

  idle(): Promise<void> {
    return this.fetching;
  }

  private async refresh(elements: (T | undefined)[]): Promise<void> {
    if (elements.includes(undefined)) {
      counters.treeFullRefreshes++;
      this.known.clear();
      await this.fetch(undefined);
      return;
    }
    counters.treeElementRefreshes++;
    for (const element of new Set(elements)) {
      if (element !== undefined && this.known.has(element)) sendItem(this.provider.getTreeItem(element));
    }
  }

  private async fetch(parent: T | undefined): Promise<void> {
    for (const child of await this.provider.getChildren(parent)) {
      this.known.add(child);
      const item = this.provider.getTreeItem(child);
      sendItem(item);
      if (item.collapsibleState !== TreeItemCollapsibleState.None) await this.fetch(child);
    }
  }

  dispose(): void {
    this.subscription.dispose();
  }
}

class StatusBarItemStandIn {
  private fields: Record<string, unknown> = {};
  private visible = false;
  private timer: NodeJS.Timeout | undefined;
  constructor(readonly id: string) {}
  private set(key: string, value: unknown): void {
    this.fields[key] = value;
    this.update();
  }
  private update(): void {
    if (!this.visible) return;
    clearTimeout(this.timer);
    this.timer = setTimeout(() => {
      JSON.stringify({ id: this.id, ...this.fields });
      counters.statusBarEntriesSent++;
    }, 0);
  }
  set name(v: string) {
    this.set('name', v);
  }
  set text(v: string) {
    this.set('text', v);
  }
  set tooltip(v: string) {
    this.set('tooltip', v);
  }
  set command(v: string) {
    this.set('command', v);
  }
  set backgroundColor(v: ThemeColor | undefined) {
    this.set('backgroundColor', v?.id);
  }
  show(): void {
    this.visible = true;
    this.update();
  }
  hide(): void {
    this.visible = false;
  }
  dispose(): void {
    clearTimeout(this.timer);
  }
}

/** The tree views created, newest last: the bench opens them. */
export const treeViews: TreeViewStandIn<unknown>[] = [];

export const window = {
  createTreeView<T>(_id: string, options: { treeDataProvider: TreeProvider<T> }): TreeViewStandIn<T> {
    const view = new TreeViewStandIn(options.treeDataProvider);
    treeViews.push(view as TreeViewStandIn<unknown>);
    return view;
  },
  createStatusBarItem: (id: string) => new StatusBarItemStandIn(id),
  showInformationMessage: async () => undefined,
  showWarningMessage: async () => undefined,
  showErrorMessage: async () => undefined,
  withProgress: async <R>(_options: unknown, task: (progress: unknown, token: unknown) => Promise<R>) =>
    task(
      { report: () => undefined },
      { isCancellationRequested: false, onCancellationRequested: () => new Disposable(() => undefined) },
    ),
};

export const commands = {
  executeCommand: async () => undefined,
};

/** Every setting at its default (the code reads them with their defaults). */
export const workspace = {
  getConfiguration: () => ({ get: <V>(_key: string, fallback?: V) => fallback }),
};

/** From now on `require('vscode')` is this module. */
export function install(): void {
  type Resolve = (request: string, ...rest: unknown[]) => string;
  const m = Module as unknown as { _resolveFilename: Resolve };
  const original = m._resolveFilename;
  m._resolveFilename = function (request: string, ...rest: unknown[]) {
    return request === 'vscode' ? __filename : original.call(this, request, ...rest);
  };
}
