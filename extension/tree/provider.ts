// The "Queue Splits" view. The root is one probe of the cluster (installed? anything
// annotated?) that decides between the tree and a welcome view (context key queueSplit.state);
// the namespace watch starts when the context node is expanded and stops a little after it is
// collapsed. Nodes and their looks come from model/tree.ts.
import * as vscode from 'vscode';
import type { ClusterService } from '../cluster';
import type { NamespaceState, NamespaceWatch } from '../kube';
import { childrenOf, contextNode, lookOf, type TreeNode, type TreeSnapshot } from '../model/tree';
import type { KubeTargetInfo } from '../model/types';
import type { SessionView } from '../model/sidecarView';
import type { SessionManager } from '../sidecar/splitSessions';
import { RESTRICTED_MESSAGE } from '../trust';

export type ViewState =
  'loading' | 'noCluster' | 'unreachable' | 'controllerMissing' | 'noWorkloads' | 'ready';

const FIRST_LIST_WAIT_MS = 10_000;

export class SplitsTreeProvider implements vscode.TreeDataProvider<TreeNode>, vscode.Disposable {
  private readonly changed = new vscode.EventEmitter<TreeNode | undefined>();
  readonly onDidChangeTreeData = this.changed.event;
  private view: vscode.TreeView<TreeNode> | undefined;
  private root: { state: ViewState; target?: KubeTargetInfo; message?: string } | undefined;
  private held: { watch: NamespaceWatch; release: () => void; listener: { dispose(): void } } | undefined;
  private namespaceState: NamespaceState | undefined;
  private readonly subscriptions: vscode.Disposable[] = [];

  constructor(
    private readonly cluster: ClusterService,
    private readonly sessions: SessionManager,
    private readonly log: vscode.LogOutputChannel,
  ) {
    this.subscriptions.push(
      this.changed,
      cluster.onDidChangeTarget(() => this.refresh()),
      sessions.onDidChange(() => this.changed.fire(undefined)),
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
    this.changed.fire(undefined);
  }

  /**
   * The welcome views key on queueSplit.state. VS Code hides welcome content while a view has
   * a `message`, so the detail of a problem goes to the log and the view's description only.
   */
  private async setState(state: ViewState, detail?: string, target?: KubeTargetInfo): Promise<void> {
    await vscode.commands.executeCommand('setContext', 'queueSplit.state', state);
    if (detail !== undefined) this.log.warn(`Queue Splits view: ${detail}`);
    if (this.view !== undefined) {
      this.view.description = target !== undefined ? `${target.context} · ${target.namespace}` : undefined;
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
    const children = childrenOf(this.snapshot(target), node);
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

  private async rootChildren(): Promise<TreeNode[]> {
    if (this.root === undefined) {
      this.root = await this.probe();
      await this.setState(this.root.state, this.root.message, this.root.target);
    }
    return this.root.state === 'ready' && this.root.target !== undefined
      ? [contextNode(this.root.target)]
      : [];
  }

  private async probe(): Promise<{ state: ViewState; target?: KubeTargetInfo; message?: string }> {
    let api;
    try {
      api = await this.cluster.api();
    } catch (err) {
      return { state: 'noCluster', message: err instanceof Error ? err.message : String(err) };
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
      const kind = (err as { kind?: unknown }).kind;
      if (kind === 'crd-missing') return { state: 'controllerMissing', target, message };
      return { state: 'unreachable', target, message };
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
