// The "Queue Splits" view. The root is one probe of the cluster (installed? anything
// annotated?) that decides between the tree and a welcome view (context key queueSplit.state,
// one per failure class: model/viewState.ts); a failure the welcome text cannot name in full
// (which plugin, verb and resource) is also a notification with the buttons that fix it. The
// namespace watch starts when the context node is expanded and stops a little after it is
// collapsed. With several namespaces (queueSplit.namespaces, model/namespaces.ts) the context node
// has a node per namespace: each one's watch starts when it is expanded and stops a little after
// it is collapsed, and a namespace that fails (a 403) says so on its own node while the others
// work. Nodes and their looks come from model/tree.ts.
import * as vscode from 'vscode';
import type { ClusterService } from '../cluster';
import type { KubeProblem, NamespaceState, NamespaceWatch } from '../kube';
import type { Fix } from '../model/fixes';
import type { NamespaceSet, NamespacesParse } from '../model/namespaces';
import {
  childrenOf,
  contextFromText,
  contextNode,
  lookOf,
  namespaceNode,
  type NodeLook,
  type NamespaceNode,
  type NoticeNode,
  namespaceOfNode,
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
   * What VS Code has of the tree, kept so that a change redraws only the rows it changed
   * (redrawChanged). VS Code forgets the handle of every row under what it redraws until it has
   * fetched them again, and an inline action clicked in that moment runs without its row (the
   * command then acts in the selected namespace), so redraws are as small as the change.
   *  1. `given`: each row as one object for as long as it is shown: VS Code finds the row to
   *     redraw by the identity of the element fired (ExtHostTreeView), so it is updated in place.
   *  2. `shown`: the ids of the children VS Code fetched, by parent id ('' for the root); a parent
   *     whose children changed is redrawn whole, and what was under it forgotten until fetched.
   *  3. `looks`: each row's look as VS Code last got it (getTreeItem); a row whose look changed
   *     is redrawn alone.
   */
  private readonly given = new Map<string, TreeNode>();
  private readonly shown = new Map<string, string[]>();
  private readonly looks = new Map<string, string>();
  /** The parent of each row given, by id ('' for the root's). */
  private readonly parents = new Map<string, string>();
  private view: vscode.TreeView<TreeNode> | undefined;
  private root: Root | undefined;
  /** The watches held, by namespace (the expanded ones), and the state each last reported. */
  private readonly held = new Map<
    string,
    { watch: NamespaceWatch; release: () => void; listener: { dispose(): void } }
  >();
  private readonly namespaceStates = new Map<string, NamespaceState>();
  /** Holds being taken, by namespace (getChildren may be asked twice before one is held). */
  private readonly holding = new Map<string, Promise<void>>();
  /** Namespace nodes the user expanded: they stay open when the tree redraws (their error). */
  private readonly expanded = new Set<string>();
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
      cluster.onDidChangeOwner(() => this.redrawChanged()),
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
        else if (e.element.kind === 'namespace') {
          this.expanded.delete(e.element.id);
          this.releaseWatch(e.element.namespace);
        }
      }),
      view.onDidExpandElement((e) => {
        if (e.element.kind === 'namespace') this.expanded.add(e.element.id);
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
    this.namespaceStates.clear();
    this.given.clear();
    this.shown.clear();
    this.looks.clear();
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
    const rows = [...this.given.values()].filter(
      (route): route is RouteNode =>
        route.kind === 'route' &&
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
   * A watch or the owner changed: redraw the rows whose look changed, and the parents whose
   * children changed (with what is under them), not the whole tree (see `given`).
   */
  private redrawChanged(): void {
    if (this.root?.target === undefined) return;
    const redraw: TreeNode[] = [];
    for (const [parentId, ids] of [...this.shown]) {
      // The root's children come from the probe, which no watch changes.
      const parent = parentId === '' ? undefined : this.given.get(parentId);
      if (parent === undefined) continue;
      const children = this.childrenNow(parent);
      if (children.length !== ids.length || children.some((c, i) => c.id !== ids[i])) {
        redraw.push(parent);
        this.forgetUnder(parent.id);
        continue;
      }
      for (const child of children) {
        const look = JSON.stringify(this.lookNow(child));
        const known = this.adopt(child);
        if (this.looks.get(child.id) !== look) redraw.push(known);
      }
    }
    // A row under a parent that is redrawn is fetched again with it.
    const ids = new Set(redraw.map((n) => n.id));
    const top = redraw.filter((n) => !this.ancestors(n.id).some((a) => ids.has(a)));
    if (top.length > 0) this.changed.fire(top);
  }

  /** The ids of the parents of row `id`, nearest first. */
  private ancestors(id: string): string[] {
    const out: string[] = [];
    for (let at = this.parents.get(id); at !== undefined && at !== ''; at = this.parents.get(at))
      out.push(at);
    return out;
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
      const more = (this.root?.set?.namespaces.length ?? 1) - 1;
      this.view.description =
        target !== undefined
          ? `${viewDescription(target)}${more > 0 ? ` ${vscode.l10n.t('(+{0} namespaces)', more)}` : ''}`
          : undefined;
      // Only over the tree: a message would hide the welcome views of the other states.
      this.view.message = state === 'ready' && !vscode.workspace.isTrusted ? RESTRICTED_MESSAGE : undefined;
    }
  }

  /** The snapshot of the selected namespace, or of `namespace`. */
  private snapshot(selected: KubeTargetInfo, namespace = selected.namespace): TreeSnapshot {
    const target = namespace === selected.namespace ? selected : { ...selected, namespace };
    const state = this.namespaceStates.get(namespace);
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
      workloads: state?.workloads ?? [],
      splits: state?.splits ?? [],
      sessions,
      lingering,
      loading: state?.loading ?? true,
    };
  }

  async getChildren(node?: TreeNode): Promise<TreeNode[]> {
    if (node === undefined) return this.record(undefined, await this.rootChildren());
    const target = this.root?.target;
    if (target === undefined) return [];
    const several = (this.root?.set?.namespaces.length ?? 1) > 1;
    if (node.kind === 'namespace' || (node.kind === 'context' && !several))
      await this.holdWatch(node.kind === 'namespace' ? node.namespace : target.namespace);
    const children = this.record(node, this.childrenNow(node));
    // A namespace's row says how many workloads it has once its watch listed them: redrawn now,
    // as its rows appear, rather than at the watch's next change, when a row may be clicked.
    if (node.kind === 'namespace') setTimeout(() => this.redrawChanged(), 0);
    return children;
  }

  /** The children of `node` as the namespaces' states say now (fresh objects). */
  private childrenNow(node: TreeNode): TreeNode[] {
    const root = this.root;
    const target = root?.target;
    if (root === undefined || target === undefined) return [];
    if (node.kind === 'context' && root.set !== undefined && root.set.namespaces.length > 1)
      return [
        ...this.setNotices(node.id, root),
        ...root.set.namespaces.map((ns) => this.namespaceNodeOf(target, ns)),
      ];
    const namespace = node.kind === 'namespace' ? node.namespace : namespaceOfRow(node, target);
    const children = childrenOf(this.snapshot(target, namespace), node);
    const notices: NoticeNode[] = node.kind === 'context' ? this.setNotices(node.id, root) : [];
    const error = this.namespaceStates.get(namespace)?.error;
    if ((node.kind === 'context' || node.kind === 'namespace') && error !== undefined) {
      notices.push({
        kind: 'notice',
        id: `${node.id}/error`,
        text: error.message,
        detail: error.suggestedAction,
        severity: 'error',
      });
    }
    // A namespace whose watch failed shows its error alone: "Loading…" under it would promise a
    // list that is not coming (rows it listed before the failure stay).
    const listed = error !== undefined && children.every((c) => c.kind === 'notice') ? [] : children;
    return [...notices, ...listed];
  }

  /** Children as VS Code gets them: the objects it already has, brought up to date (see `given`). */
  private record(parent: TreeNode | undefined, children: TreeNode[]): TreeNode[] {
    const parentId = parent?.id ?? '';
    const ids = new Set(children.map((c) => c.id));
    for (const id of this.shown.get(parentId) ?? []) if (!ids.has(id)) this.forget(id);
    this.shown.set(parentId, [...ids]);
    return children.map((child) => {
      this.parents.set(child.id, parentId);
      return this.adopt(child);
    });
  }

  /** The object VS Code already has for `node`'s row, brought up to date; or `node`, from now on. */
  private adopt(node: TreeNode): TreeNode {
    const known = this.given.get(node.id);
    if (known === undefined || known.kind !== node.kind) {
      this.given.set(node.id, node);
      return node;
    }
    // Optional fields (a route's session, linger) must not outlive the data that set them.
    for (const key of Object.keys(known)) Reflect.deleteProperty(known, key);
    return Object.assign(known, node);
  }

  /** A row that is not shown any more, and everything under it. */
  private forget(id: string): void {
    this.forgetUnder(id);
    this.given.delete(id);
    this.looks.delete(id);
    this.parents.delete(id);
  }

  /** What was fetched under row `id` (VS Code forgets it when the row is redrawn). */
  private forgetUnder(id: string): void {
    for (const child of this.shown.get(id) ?? []) this.forget(child);
    this.shown.delete(id);
  }

  /** A namespace's node with what its watch last said (its error shows on the node itself). */
  private namespaceNodeOf(target: KubeTargetInfo, namespace: string): NamespaceNode {
    const state = this.namespaceStates.get(namespace);
    return namespaceNode(target, namespace, {
      ...(state?.error !== undefined
        ? { error: { message: state.error.message, suggestedAction: state.error.suggestedAction } }
        : {}),
      ...(state !== undefined && !state.loading ? { workloads: state.workloads.length } : {}),
    });
  }

  /** What the view says about queueSplit.namespaces itself: entries left out, "*" refused. */
  private setNotices(parentId: string, root: Root): NoticeNode[] {
    const notices: NoticeNode[] = [];
    if (root.set?.cannotList === true)
      notices.push({
        kind: 'notice',
        id: `${parentId}/cannot-list`,
        text: vscode.l10n.t('Your credentials may not list namespaces: showing {0} only', root.set.selected),
        detail: vscode.l10n.t(
          'queueSplit.namespaces is ["*"] (every namespace you can list), but listing namespaces is refused. Name the namespaces instead: Queue Split: Show Namespaces… (right-click the context).',
        ),
        severity: 'warning',
      });
    for (const bad of root.invalid ?? [])
      notices.push({
        kind: 'notice',
        id: `${parentId}/invalid-ns:${bad.value}`,
        text: vscode.l10n.t('queueSplit.namespaces: {0} is left out', bad.value),
        detail:
          bad.reason === 'not-a-name'
            ? vscode.l10n.t(
                'It is not a namespace name (lowercase letters, digits and "-"). Fix or remove it in the setting, or choose with Queue Split: Show Namespaces….',
              )
            : vscode.l10n.t(
                'Each entry must be a namespace name in quotes, or "*". Fix or remove it in the setting.',
              ),
        severity: 'warning',
      });
    return notices;
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

  private async probe(): Promise<Root> {
    let api;
    try {
      api = await this.cluster.api();
    } catch (err) {
      return { state: 'noCluster', message: err instanceof Error ? err.message : String(err), problem: err };
    }
    const target = api.target;
    let set: Root['set'];
    let invalid: Root['invalid'];
    try {
      ({ invalid, ...set } = await this.cluster.namespaceSet());
    } catch (err) {
      // "*" and the namespace list failing otherwise than a 403: the selected namespace, said in the log.
      this.log.warn(`cannot list namespaces: ${err instanceof Error ? err.message : String(err)}`);
    }
    if (set !== undefined && set.namespaces.length > 1) return this.probeSeveral(target, set, invalid ?? []);
    try {
      const probe = await api.probe();
      this.log.info(`cluster ${target.context}/${target.namespace}: ${probe.state}`);
      // Which splits are mine: the view re-renders when the SelfSubjectReview answers.
      this.cluster.owner().catch((err: unknown) => {
        this.log.warn(
          `cannot tell which splits are yours: ${err instanceof Error ? err.message : String(err)}`,
        );
      });
      return {
        state: probe.state,
        target,
        ...(set !== undefined ? { set } : {}),
        ...(invalid !== undefined ? { invalid } : {}),
      };
    } catch (err) {
      const message = err instanceof Error ? err.message : String(err);
      this.log.warn(`cluster ${target.context}/${target.namespace}: ${message}`);
      return { state: viewStateOf((err as { kind?: unknown }).kind), target, message, problem: err };
    }
  }

  /**
   * Several namespaces: the tree shows when any of them can be read; a namespace that cannot is
   * said on its own node. The controller missing is cluster-wide (the CRD), so it is said once.
   */
  private async probeSeveral(
    target: KubeTargetInfo,
    set: NamespaceSet,
    invalid: NamespacesParse['invalid'],
  ): Promise<Root> {
    const probes = await Promise.allSettled(
      set.namespaces.map(async (ns) => (await this.cluster.api(ns)).probe()),
    );
    this.log.info(
      `cluster ${target.context}, namespaces ${set.namespaces.join(', ')}: ${probes.map((p) => (p.status === 'fulfilled' ? p.value.state : 'failed')).join(', ')}`,
    );
    const ready = { state: 'ready' as const, target, set, invalid };
    if (probes.some((p) => p.status === 'fulfilled' && p.value.state === 'controllerMissing'))
      return { state: 'controllerMissing', target };
    if (probes.some((p) => p.status === 'fulfilled')) {
      this.cluster.owner().catch((err: unknown) => {
        this.log.warn(
          `cannot tell which splits are yours: ${err instanceof Error ? err.message : String(err)}`,
        );
      });
      return ready;
    }
    const first = probes.find((p): p is PromiseRejectedResult => p.status === 'rejected');
    const err: unknown = first?.reason;
    const message = err instanceof Error ? err.message : String(err);
    return { state: viewStateOf((err as { kind?: unknown }).kind), target, message, problem: err };
  }

  /** Holds the watch of `namespace` (the context's or a namespace node's expansion). */
  private holdWatch(namespace: string): Promise<void> {
    if (this.held.has(namespace)) return Promise.resolve();
    let holding = this.holding.get(namespace);
    if (holding === undefined) {
      holding = this.startHolding(namespace).finally(() => this.holding.delete(namespace));
      this.holding.set(namespace, holding);
    }
    return holding;
  }

  private async startHolding(namespace: string): Promise<void> {
    const { watch, release } = await this.cluster.holdWatch(namespace);
    if (this.held.has(namespace)) {
      release();
      return;
    }
    const listener = watch.onChange((state) => {
      this.namespaceStates.set(namespace, state);
      this.redrawChanged();
    });
    this.held.set(namespace, { watch, release, listener });
    this.namespaceStates.set(namespace, watch.current);
    if (watch.current.loading && watch.current.error === undefined) {
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
      this.namespaceStates.set(namespace, watch.current);
    }
  }

  /** Lets go of one namespace's watch, or of all of them. */
  private releaseWatch(namespace?: string): void {
    for (const [ns, held] of [...this.held]) {
      if (namespace !== undefined && ns !== namespace) continue;
      this.held.delete(ns);
      held.listener.dispose();
      held.release();
    }
  }

  getTreeItem(node: TreeNode): vscode.TreeItem {
    const look = this.lookNow(node);
    this.looks.set(node.id, JSON.stringify(look));
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
        title: vscode.l10n.t('Show Split Details'),
        arguments: [node],
      };
    return item;
  }

  /** How `node`'s row looks now. */
  private lookNow(node: TreeNode): NodeLook {
    const target = this.root?.target ?? { context: '', namespace: '' };
    const look = lookOf(this.snapshot(target, namespaceOfRow(node, target)), node);
    if (node.kind === 'namespace') {
      Object.assign(look, namespaceWords(node));
      if (this.expanded.has(node.id)) look.collapsible = 'expanded';
    }
    const shown = this.root?.set?.namespaces.length ?? 1;
    if (node.kind === 'context' && shown > 1) {
      const from = contextFromText(node.target);
      look.description = `${vscode.l10n.t('{0} namespaces, {1} selected', shown, node.target.namespace)}${from !== undefined ? ` · ${from}` : ''}`;
    }
    return look;
  }

  dispose(): void {
    this.releaseWatch();
    for (const s of this.subscriptions) s.dispose();
  }
}

interface Root {
  state: ViewState;
  target?: KubeTargetInfo;
  message?: string;
  problem?: unknown;
  /** The namespaces shown (several: a node each). */
  set?: NamespaceSet;
  invalid?: NamespacesParse['invalid'];
}

/** The namespace whose snapshot a row belongs to. */
function namespaceOfRow(node: TreeNode, target: KubeTargetInfo): string {
  return namespaceOfNode(node) ?? target.namespace;
}

/** A namespace node's words: selected, what failed, how many workloads. */
function namespaceWords(node: NamespaceNode): { description?: string; tooltip: string } {
  const parts: string[] = [];
  if (node.selected) parts.push(vscode.l10n.t('selected'));
  if (node.error !== undefined) parts.push(node.error.message);
  else if (node.workloads !== undefined)
    parts.push(
      node.workloads === 1 ? vscode.l10n.t('1 workload') : vscode.l10n.t('{0} workloads', node.workloads),
    );
  const tooltip = [
    vscode.l10n.t('**Namespace** {0} in context {1}', node.namespace, node.context),
    node.selected
      ? vscode.l10n.t('The selected namespace: palette commands and debug launches act here.')
      : vscode.l10n.t('Its workloads are loaded while it is expanded; right-click a workload to act here.'),
    ...(node.error !== undefined
      ? [
          vscode.l10n.t('**Cannot show it:** {0}', node.error.message),
          ...(node.error.suggestedAction !== undefined ? [node.error.suggestedAction] : []),
        ]
      : []),
  ].join('\n\n');
  return { ...(parts.length > 0 ? { description: parts.join(' · ') } : {}), tooltip };
}

/** The view's description: "qs-first (kubeconfig's current) · default", "qs-second (pinned) · team-a". */
function viewDescription(target: KubeTargetInfo): string {
  const from = contextFromText(target);
  return `${target.context}${from !== undefined ? ` (${from})` : ''} · ${target.namespace}`;
}
