// The "Queue Splits" view. The root is one probe of the cluster (installed? anything
// annotated?) that decides between the tree and a welcome view (context key queueSplit.state,
// one per failure class: model/viewState.ts); a failure the welcome text cannot name in full
// (which plugin, verb and resource) is also a notification with the buttons that fix it. The
// namespace watch starts when the context node is expanded and stops a little after it is
// collapsed. Nodes and their looks come from model/tree.ts.
import * as vscode from 'vscode';
import type { ClusterService } from '../cluster';
import type { KubeProblem, NamespaceState, NamespaceWatch } from '../kube';
import type { Fix } from '../model/fixes';
import {
  childrenOf,
  contextFromText,
  contextNode,
  lookOf,
  type QueueNode,
  type RouteNode,
  type TreeNode,
  type TreeSnapshot,
} from '../model/tree';
import type { KubeTargetInfo } from '../model/types';
import type { SessionView } from '../model/sidecarView';
import { notifiesOf, viewStateOf, type ViewState } from '../model/viewState';
import { explain, fixAction, type Notifier } from '../notifications';
import { sessionKey } from '../sidecar/splitSession';
import type { SessionManager, SessionsChange } from '../sidecar/splitSessions';
import { RESTRICTED_MESSAGE } from '../trust';

export type { ViewState } from '../model/viewState';

const FIRST_LIST_WAIT_MS = 10_000;

export interface SplitsTreeOptions {
  /** 'tree': a session's change redraws the whole tree (the behaviour before the route rows
   * redrew alone; the bench's baseline). Default 'route': only that split's route rows. */
  redraw?: 'route' | 'tree';
}

export class SplitsTreeProvider implements vscode.TreeDataProvider<TreeNode>, vscode.Disposable {
  private readonly changed = new vscode.EventEmitter<TreeNode | TreeNode[] | undefined>();
  readonly onDidChangeTreeData = this.changed.event;
  /**
   * The route rows shown, by id, each one object for as long as the row exists: VS Code finds
   * the row to redraw by the identity of the element fired (ExtHostTreeView), so a row that
   * redraws alone must be fired as the very object getChildren gave it.
   */
  private readonly routes = new Map<string, RouteNode>();
  private view: vscode.TreeView<TreeNode> | undefined;
  private root:
    { state: ViewState; target?: KubeTargetInfo; message?: string; problem?: unknown } | undefined;
  private held: { watch: NamespaceWatch; release: () => void; listener: { dispose(): void } } | undefined;
  private namespaceState: NamespaceState | undefined;
  private readonly subscriptions: vscode.Disposable[] = [];

  constructor(
    private readonly cluster: ClusterService,
    private readonly sessions: SessionManager,
    private readonly log: vscode.LogOutputChannel,
    private readonly notifier: Notifier,
    private readonly options: SplitsTreeOptions = {},
  ) {
    this.subscriptions.push(
      this.changed,
      cluster.onDidChangeTarget(() => this.refresh()),
      sessions.onDidChange((change) => this.sessionsChanged(change)),
      cluster.onDidChangeOwner(() => this.changed.fire(undefined)),
      vscode.workspace.onDidGrantWorkspaceTrust(() => {
        if (this.view !== undefined) this.view.message = undefined;
      }),
    );
  }

  /** Creates the view; the caller registers the returned disposables with the extension. */
  createView(id: string): vscode.TreeView<TreeNode> {
    const view = vscode.window.createTreeView(id, { treeDataProvider: this, showCollapseAll: true });
    this.view = view;
    this.subscriptions.push(
      // The welcome views' buttons that act on the problem at hand (package.json viewsWelcome).
      vscode.commands.registerCommand('queueSplit.copyRoleBindingCommand', () =>
        this.runCopyFix('roleBinding'),
      ),
      vscode.commands.registerCommand('queueSplit.copyLoginCommand', () => this.runCopyFix('login')),
      view.onDidCollapseElement((e) => {
        if (e.element.kind === 'context') this.releaseWatch();
      }),
      view.onDidChangeVisibility((e) => {
        if (!e.visible) this.releaseWatch();
        else this.changed.fire(undefined);
      }),
    );
    void this.setState('loading');
    return view;
  }

  /** Looks at the cluster again (Refresh, target change, after an install). */
  refresh(): void {
    this.root = undefined;
    this.releaseWatch();
    this.namespaceState = undefined;
    this.routes.clear();
    this.changed.fire(undefined);
  }

  /** Sessions of this window changed (already coalesced by the SessionManager): a session only
   * shows on its split's route rows, so only those redraw. */
  private sessionsChanged(change: SessionsChange): void {
    const target = this.root?.target;
    if (this.options.redraw === 'tree' || target === undefined) {
      this.changed.fire(undefined);
      return;
    }
    const rows = [...this.routes.values()].filter((route) =>
      change.keys.has(
        sessionKey(
          target.context,
          route.split.metadata.namespace ?? target.namespace,
          route.split.metadata.name,
        ),
      ),
    );
    if (rows.length > 0) this.changed.fire(rows);
  }

  /**
   * The welcome views key on queueSplit.state. VS Code hides welcome content while a view has
   * a `message`, so the detail of a problem goes to the log and the view's description only.
   */
  private async setState(state: ViewState, detail?: string, target?: KubeTargetInfo): Promise<void> {
    // The problem's buttons first, so that the welcome view never shows a stale one.
    const fixes = this.problemFixes();
    await vscode.commands.executeCommand(
      'setContext',
      'queueSplit.problemHasLogin',
      fixes.some((f) => f.kind === 'copy' && f.title.includes('Login')),
    );
    await vscode.commands.executeCommand(
      'setContext',
      'queueSplit.problemHasRoleBinding',
      fixes.some((f) => f.kind === 'copy' && f.title.includes('RoleBinding')),
    );
    await vscode.commands.executeCommand('setContext', 'queueSplit.state', state);
    if (detail !== undefined) this.log.warn(`Queue Splits view: ${detail}`);
    if (this.view !== undefined) {
      this.view.description = target !== undefined ? viewDescription(target) : undefined;
      // Only over the tree: a message would hide the welcome views of the other states.
      this.view.message = state === 'ready' && !vscode.workspace.isTrusted ? RESTRICTED_MESSAGE : undefined;
    }
  }

  private snapshot(target: KubeTargetInfo): TreeSnapshot {
    const sessions = new Map<string, SessionView>();
    const lingering = new Map<string, number>();
    const now = Date.now();
    for (const s of this.sessions.list()) {
      if (s.request.target.context !== target.context || s.request.target.namespace !== target.namespace)
        continue;
      sessions.set(s.name, s.view);
      if (s.lingerUntil !== undefined) lingering.set(s.name, s.lingerUntil - now);
    }
    return {
      target,
      // Until the SelfSubjectReview answers, nothing is shown as mine.
      owner: this.cluster.knownOwner ?? '',
      workloads: this.namespaceState?.workloads ?? [],
      splits: this.namespaceState?.splits ?? [],
      sessions,
      lingering,
      loading: this.namespaceState?.loading ?? true,
    };
  }

  async getChildren(node?: TreeNode): Promise<TreeNode[]> {
    if (node === undefined) return this.rootChildren();
    const target = this.root?.target;
    if (target === undefined) return [];
    if (node.kind === 'context') await this.holdWatch();
    const children = childrenOf(this.snapshot(target), node).map((child) => this.known(child));
    if (node.kind === 'queue') this.forgetRoutesGone(node, children);
    const error = this.namespaceState?.error;
    if (node.kind === 'context' && error !== undefined) {
      return [
        {
          kind: 'notice',
          id: `${node.id}/error`,
          text: error.message,
          detail: error.suggestedAction,
          severity: 'error',
        },
        ...children,
      ];
    }
    return children;
  }

  /** The object VS Code already has for a route row, brought up to date; other nodes as they are. */
  private known(node: TreeNode): TreeNode {
    if (node.kind !== 'route') return node;
    const known = this.routes.get(node.id);
    if (known === undefined) {
      this.routes.set(node.id, node);
      return node;
    }
    // Every field of a RouteNode is set by the assign but the optional ones.
    delete known.session;
    delete known.lingerLeftMs;
    delete known.now;
    return Object.assign(known, node);
  }

  /** Route rows of `queue` that are not among its children any more (their split is gone). */
  private forgetRoutesGone(queue: QueueNode, children: readonly TreeNode[]): void {
    const ids = new Set(children.map((c) => c.id));
    for (const [id, route] of this.routes) {
      const { kind, name } = route.split.spec.workload;
      if (
        route.queue === queue.queue.name &&
        kind === queue.workload.kind &&
        name === queue.workload.name &&
        !ids.has(id)
      )
        this.routes.delete(id);
    }
  }

  private async rootChildren(): Promise<TreeNode[]> {
    if (this.root === undefined) {
      const root = await this.probe();
      this.root = root;
      await this.setState(root.state, root.message, root.target);
      if (root.problem !== undefined && notifiesOf(root.state)) {
        const e = explain(root.problem);
        this.notifier.error(e.message, e.suggestedAction, ...e.actions);
      }
    }
    return this.root.state === 'ready' && this.root.target !== undefined
      ? [contextNode(this.root.target)]
      : [];
  }

  /** The fixes of the problem the view shows, if any. */
  private problemFixes(): readonly Fix[] {
    const fixes = (this.root?.problem as KubeProblem | undefined)?.fixes;
    return Array.isArray(fixes) ? fixes : [];
  }

  /** A welcome button: the copy fix of the problem at hand (by what it copies: titles are localized). */
  private async runCopyFix(copies: 'roleBinding' | 'login'): Promise<void> {
    const found = this.problemFixes().find((f) => f.kind === 'copy' && f.copies === copies);
    if (found !== undefined) await fixAction(found).run();
    else
      this.notifier.info(
        copies === 'roleBinding'
          ? vscode.l10n.t('The Queue Splits view shows no problem with a RoleBinding command any more.')
          : vscode.l10n.t('The Queue Splits view shows no problem with a Login command any more.'),
      );
  }

  private async probe(): Promise<{
    state: ViewState;
    target?: KubeTargetInfo;
    message?: string;
    problem?: unknown;
  }> {
    let api;
    try {
      api = await this.cluster.api();
    } catch (err) {
      return { state: 'noCluster', message: err instanceof Error ? err.message : String(err), problem: err };
    }
    const target = api.target;
    try {
      const probe = await api.probe();
      this.log.info(`cluster ${target.context}/${target.namespace}: ${probe.state}`);
      // Which splits are mine: the view re-renders when the SelfSubjectReview answers.
      this.cluster.owner().catch((err: unknown) => {
        this.log.warn(
          `cannot tell which splits are yours: ${err instanceof Error ? err.message : String(err)}`,
        );
      });
      return { state: probe.state, target };
    } catch (err) {
      const message = err instanceof Error ? err.message : String(err);
      this.log.warn(`cluster ${target.context}/${target.namespace}: ${message}`);
      return { state: viewStateOf((err as { kind?: unknown }).kind), target, message, problem: err };
    }
  }

  private async holdWatch(): Promise<void> {
    if (this.held !== undefined) return;
    const { watch, release } = await this.cluster.holdWatch();
    if (this.held !== undefined) {
      release();
      return;
    }
    const listener = watch.onChange((state) => {
      this.namespaceState = state;
      this.changed.fire(undefined);
    });
    this.held = { watch, release, listener };
    this.namespaceState = watch.current;
    if (watch.current.loading) {
      // Show the first list rather than "Loading…" when it comes quickly.
      await new Promise<void>((resolve) => {
        const timer = setTimeout(resolve, FIRST_LIST_WAIT_MS);
        const once = watch.onChange((state) => {
          if (state.loading && state.error === undefined) return;
          clearTimeout(timer);
          once.dispose();
          resolve();
        });
      });
      this.namespaceState = watch.current;
    }
  }

  private releaseWatch(): void {
    const held = this.held;
    this.held = undefined;
    if (held === undefined) return;
    held.listener.dispose();
    held.release();
  }

  getTreeItem(node: TreeNode): vscode.TreeItem {
    const target = this.root?.target ?? { context: '', namespace: '' };
    const look = lookOf(this.snapshot(target), node);
    const item = new vscode.TreeItem(
      look.label,
      look.collapsible === 'none'
        ? vscode.TreeItemCollapsibleState.None
        : look.collapsible === 'expanded'
          ? vscode.TreeItemCollapsibleState.Expanded
          : vscode.TreeItemCollapsibleState.Collapsed,
    );
    item.id = node.id;
    if (look.description !== undefined) item.description = look.description;
    item.tooltip = new vscode.MarkdownString(look.tooltip);
    item.iconPath = new vscode.ThemeIcon(
      look.icon.id,
      look.icon.color !== undefined ? new vscode.ThemeColor(look.icon.color) : undefined,
    );
    item.contextValue = look.contextValue;
    if (node.kind === 'route')
      item.command = {
        command: 'queueSplit.showSplitDetails',
        title: 'Show Split Details',
        arguments: [node],
      };
    return item;
  }

  dispose(): void {
    this.releaseWatch();
    for (const s of this.subscriptions) s.dispose();
  }
}

/** The view's description: "qs-first (kubeconfig's current) · default", "qs-second (pinned) · team-a". */
function viewDescription(target: KubeTargetInfo): string {
  const from = contextFromText(target);
  return `${target.context}${from !== undefined ? ` (${from})` : ''} · ${target.namespace}`;
}
