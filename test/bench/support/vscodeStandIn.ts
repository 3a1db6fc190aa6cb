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
//   - the rows' handles: a command run from a row finds its element by the row's handle, and a
//     change of the whole tree forgets every handle, a change of an element the handles of the
//     rows under it (ExtHostTreeView clearAll / clearChildren), until they are fetched again.
//     Each handle forgotten is recorded (`dropped`), so a test can tell which rows a click
//     could have lost (test/unit/extension/treeRowsKept.test.ts).
// Not modelled: the IPC itself and everything in the renderer (VS Code's other processes).
// Installed by install(): `require('vscode')` answers this module from then on.
import Module from 'node:module';
import * as l10nModule from '@vscode/l10n';

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
  /** The elements VS Code has, by identity (ExtHostTreeView's nodes map), with their ids. */
  private readonly known = new Map<T, string>();
  /** The children fetched, by parent (undefined: the root). */
  private readonly fetched = new Map<T | undefined, T[]>();
  private readonly subscription: Disposable;
  private fetching: Promise<void> = Promise.resolve();
  /** Ids of the rows whose handle a refresh forgot (a click on them then would find no element). */
  readonly dropped: string[] = [];
  description?: string;
  message?: string;
  readonly onDidCollapseElement = new EventEmitter<{ element: T }>().event;
  readonly onDidExpandElement = new EventEmitter<{ element: T }>().event;
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

  /** Resolves when the changes fired so far are fetched (after VS Code's 200 ms debounce). */
  async idle(): Promise<void> {
    await new Promise((resolve) => setTimeout(resolve, 250));
    await this.fetching;
  }

  /** The element a row's handle resolves to now (what a command run from the row gets). */
  element(id: string): T | undefined {
    for (const [element, known] of this.known) if (known === id) return element;
    return undefined;
  }

  private async refresh(elements: (T | undefined)[]): Promise<void> {
    if (elements.includes(undefined)) {
      counters.treeFullRefreshes++;
      this.dropped.push(...this.known.values());
      this.known.clear();
      this.fetched.clear();
      await this.fetch(undefined);
      return;
    }
    counters.treeElementRefreshes++;
    for (const element of new Set(elements)) {
      if (element === undefined || !this.known.has(element)) continue;
      const hadChildren = this.fetched.has(element);
      this.forgetChildren(element);
      const item = this.provider.getTreeItem(element);
      sendItem(item);
      if (hadChildren && item.collapsibleState !== TreeItemCollapsibleState.None) await this.fetch(element);
    }
  }

  private forgetChildren(parent: T): void {
    for (const child of this.fetched.get(parent) ?? []) {
      const id = this.known.get(child);
      if (id !== undefined) this.dropped.push(id);
      this.known.delete(child);
      this.forgetChildren(child);
    }
    this.fetched.delete(parent);
  }

  private async fetch(parent: T | undefined): Promise<void> {
    const children = await this.provider.getChildren(parent);
    this.fetched.set(parent, children);
    for (const child of children) {
      const item = this.provider.getTreeItem(child);
      this.known.set(child, item.id ?? item.label);
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
  registerCommand: () => new Disposable(() => undefined),
};

/** Every setting at its default (the code reads them with their defaults); a trusted workspace. */
export const workspace = {
  getConfiguration: () => ({ get: <V>(_key: string, fallback?: V) => fallback }),
  isTrusted: true,
  onDidGrantWorkspaceTrust: () => new Disposable(() => undefined),
};

/** vscode.l10n as @vscode/l10n does it without a bundle: the English text, arguments filled in. */
export const l10n = { t: l10nModule.t };

/** From now on `require('vscode')` is this module. */
export function install(): void {
  type Resolve = (request: string, ...rest: unknown[]) => string;
  const m = Module as unknown as { _resolveFilename: Resolve };
  const original = m._resolveFilename;
  m._resolveFilename = function (request: string, ...rest: unknown[]) {
    return request === 'vscode' ? __filename : original.call(this, request, ...rest);
  };
}
