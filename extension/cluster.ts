// The extension's one handle on "which cluster and namespace": the kubeconfig files (the setting,
// the Kubernetes extension's, $KUBECONFIG or ~/.kube/config; watched, so `kubectl config
// use-context` is followed), the context pinned with "Select Context/Namespace…" (remembered per
// workspace; Unpin follows the kubeconfig again) over the settings over the kubeconfig's current
// context, the lazily loaded Kubernetes module, and the namespace watch shared by everything that
// wants live state.
import * as os from 'node:os';
import * as vscode from 'vscode';
import { resolveKubeconfigFiles, type KubeconfigFiles } from '../core/kubeconfig';
import type * as Kube from './kube';
import { KubeconfigWatcher } from './kubeconfigWatch';
import { KubernetesExtensionFollower } from './kubernetesExtension';
import { parseNamespacesSetting, resolveNamespaces, type NamespaceSet } from './model/namespaces';
import type { Selection } from './model/selection';
import type { KubeTargetInfo } from './model/types';
import type { SelectionStore } from './selectionStore';
import { affectsTarget, settings } from './settings';

type KubeModule = typeof Kube;

/** A watch nobody holds any more keeps running this long, so collapsing and re-expanding is instant. */
const WATCH_LINGER_MS = 30_000;

interface SharedWatch {
  key: string;
  watch: Kube.NamespaceWatch;
  holders: number;
  linger?: NodeJS.Timeout;
}

export class ClusterService implements vscode.Disposable {
  private kubeModule: Promise<KubeModule> | undefined;
  /** The live namespace watches, by key (kubeconfig files, context, namespace). */
  private readonly shared = new Map<string, SharedWatch>();
  private readonly targetChanged = new vscode.EventEmitter<void>();
  /** The selected context/namespace (or a setting that decides it) changed. */
  readonly onDidChangeTarget = this.targetChanged.event;
  private readonly watchChanged = new vscode.EventEmitter<void>();
  /** A namespace watch started or stopped (follow `currentWatch` again). */
  readonly onDidChangeWatch = this.watchChanged.event;
  private readonly subscriptions: vscode.Disposable[] = [];
  private identity: { key: string; owner: Promise<string>; known?: string } | undefined;
  private readonly ownerChanged = new vscode.EventEmitter<void>();
  /** The owner of "my" splits became known for the current target. */
  readonly onDidChangeOwner = this.ownerChanged.event;
  private readonly watcher: KubeconfigWatcher;
  private readonly kubernetesExtension: KubernetesExtensionFollower;
  /** What the last look at the kubeconfig found (the target, or why there is none). */
  private seen: string | undefined;
  private rechecks: Promise<void> = Promise.resolve();
  /** The key of the selected namespace's watch in `shared` (for the status bar). */
  private selectedWatchKey: string | undefined;

  constructor(
    private readonly store: SelectionStore,
    private readonly log: vscode.LogOutputChannel,
    kubernetesExtension?: KubernetesExtensionFollower,
  ) {
    this.watcher = new KubeconfigWatcher((files) => this.recheck(`${files.join(', ')} changed`), log);
    this.kubernetesExtension = kubernetesExtension ?? new KubernetesExtensionFollower(log);
    this.subscriptions.push(
      this.targetChanged,
      this.watchChanged,
      this.ownerChanged,
      this.watcher,
      this.kubernetesExtension,
      this.kubernetesExtension.onDidChange((what) =>
        this.recheck(`the Kubernetes extension changed its ${what}`),
      ),
      vscode.workspace.onDidChangeConfiguration((e) => {
        if (!affectsTarget(e)) return;
        this.log.info('a setting that chooses the cluster, namespace or owner changed: looking again');
        this.fireTargetChanged();
      }),
    );
    void this.store.get().then((selection) => setPinnedKey(selection));
  }

  /**
   * The kubeconfig files in use now (see core/kubeconfig.ts), watched from the first look on.
   * Waits a few seconds at most, once, for the Kubernetes extension if it is installed.
   */
  async kubeconfigFiles(): Promise<KubeconfigFiles> {
    await this.kubernetesExtension.ready();
    const folder = vscode.workspace.workspaceFolders?.find((f) => f.uri.scheme === 'file');
    const source = resolveKubeconfigFiles({
      setting: settings.kubeconfig(),
      env: process.env.KUBECONFIG,
      home: os.homedir(),
      kubernetesExtension: this.kubernetesExtension.state.kubeconfig,
      baseDir: folder?.uri.fsPath,
    });
    this.watcher.watch(source.files);
    return source;
  }

  /**
   * A kubeconfig file (or the Kubernetes extension) changed: if that changes the target (the
   * kubeconfig's current context or its namespace when nothing is pinned, the server, the user,
   * or whether it loads at all), everything looks again. Not a token refresh that leaves them be.
   */
  private recheck(reason: string): void {
    this.rechecks = this.rechecks
      .then(async () => {
        if (this.seen === undefined) return; // nobody looked since the last change: nothing to update
        const look = await this.look();
        if (this.seen === undefined) return;
        if (look.fingerprint === this.seen) {
          this.log.info(`${reason}: the target is the same (${describeLook(look)})`);
          return;
        }
        this.log.info(`${reason}: now ${describeLook(look)}, looking again`);
        this.fireTargetChanged();
      })
      .catch((err: unknown) => this.log.warn(`${reason}, but looking again failed: ${String(err)}`));
  }

  /** @kubernetes/client-node and friends, evaluated on first use only. */
  kube(): Promise<KubeModule> {
    this.kubeModule ??= import('./kube').then((module) => {
      this.log.debug('Kubernetes module loaded');
      return module;
    });
    return this.kubeModule;
  }

  selection(): Promise<Selection> {
    return this.store.get();
  }

  /** Pins the context/namespace; resolves once saved for this workspace (see selectionStore.ts). */
  async select(selection: Selection): Promise<void> {
    try {
      await this.store.save(selection);
    } finally {
      // Applied even when saving failed: the error says it may not survive a reload.
      setPinnedKey(selection);
      this.fireTargetChanged();
    }
  }

  /** Forgets the pinned context/namespace: the kubeconfig's current context is followed again. */
  async unpin(): Promise<void> {
    await this.select({});
  }

  /** Forget live state and look again (after an install, on "Refresh"). */
  refresh(): void {
    this.fireTargetChanged();
  }

  private fireTargetChanged(): void {
    this.seen = undefined;
    this.identity = undefined;
    void this.dropWatch();
    this.targetChanged.fire();
  }

  async connection(): Promise<Kube.KubeConnection> {
    const look = await this.look();
    // What the views are built on, until the target next changes (recheck compares with it).
    this.seen ??= look.fingerprint;
    if ('error' in look) throw look.error;
    return look.connection;
  }

  private async look(): Promise<
    { connection: Kube.KubeConnection; fingerprint: string } | { error: unknown; fingerprint: string }
  > {
    const kube = await this.kube();
    const source = await this.kubeconfigFiles();
    try {
      const connection = kube.connect(source, await this.selection(), {
        context: settings.context(),
        namespace: settings.namespace(),
      });
      const { target, kc } = connection;
      return { connection, fingerprint: JSON.stringify([source, target, kc.getCurrentUser()?.name]) };
    } catch (error) {
      return { error, fingerprint: JSON.stringify([source, error instanceof Error ? error.message : error]) };
    }
  }

  /**
   * The cluster calls for the selected namespace, or for `namespace` (a tree row's, when the view
   * shows several: model/namespaces.ts) with the same kubeconfig, context and user.
   */
  async api(namespace?: string): Promise<Kube.ClusterApi> {
    const kube = await this.kube();
    return new kube.ClusterApi(inNamespace(await this.connection(), namespace));
  }

  /**
   * The namespaces the view shows: queueSplit.namespaces with the selected namespace; for "*"
   * the namespaces the user may list (asked each time: the view asks once per refresh).
   */
  async namespaceSet(): Promise<
    NamespaceSet & { invalid: ReturnType<typeof parseNamespacesSetting>['invalid'] }
  > {
    const { setting, invalid } = parseNamespacesSetting(settings.namespaces());
    const selected = (await this.connection()).target.namespace;
    let listable: string[] | undefined;
    if (setting.kind === 'all') listable = await (await this.api()).listNamespaces();
    return { ...resolveNamespaces(setting, selected, listable), invalid };
  }

  /**
   * Whose splits are "mine": the queueSplit.owner setting (for members of queuesplit:admins
   * acting for somebody), else the Kubernetes user name from a SelfSubjectReview, asked once
   * per kubeconfig and context. Never the OS user name: every dev container is `vscode`.
   */
  async owner(): Promise<string> {
    const setting = settings.ownerSetting();
    if (setting !== '') return setting;
    const connection = await this.connection();
    const key = JSON.stringify([connection.kubeconfig.files, connection.target.context]);
    if (this.identity?.key !== key) {
      const kube = await this.kube();
      const identity: NonNullable<ClusterService['identity']> = {
        key,
        owner: new kube.ClusterApi(connection).whoAmI(),
      };
      this.identity = identity;
      identity.owner.then(
        (owner) => {
          identity.known = owner;
          if (this.identity === identity) this.ownerChanged.fire();
        },
        // A refusal is shown where the owner is needed (commands); ask again next time.
        () => {
          if (this.identity === identity) this.identity = undefined;
        },
      );
    }
    return this.identity.owner;
  }

  /** The owner if already known (views render synchronously); undefined until owner() resolved. */
  get knownOwner(): string | undefined {
    const setting = settings.ownerSetting();
    return setting !== '' ? setting : this.identity?.known;
  }

  /** The target without contacting the cluster (kubeconfig only); undefined if it cannot load. */
  async target(): Promise<KubeTargetInfo | undefined> {
    try {
      return (await this.connection()).target;
    } catch {
      return undefined;
    }
  }

  /**
   * Holds the live watch of the selected namespace, or of `namespace` (started on first hold).
   * Call release() when done; a watch stops a little after its last holder lets go, so only the
   * namespaces somebody looks at (expanded in the tree, a details page) are watched.
   */
  async holdWatch(namespace?: string): Promise<{ watch: Kube.NamespaceWatch; release: () => void }> {
    const base = await this.connection();
    const connection = inNamespace(base, namespace);
    const key = JSON.stringify([
      connection.kubeconfig.files,
      connection.target.context,
      connection.target.namespace,
    ]);
    let shared = this.shared.get(key);
    if (shared === undefined) {
      const kube = await this.kube();
      const again = this.shared.get(key);
      if (again !== undefined) shared = again;
      else {
        const watch = new kube.NamespaceWatch(connection, (line) => this.log.info(line));
        shared = { key, watch, holders: 0 };
        this.shared.set(key, shared);
        if (connection.target.namespace === base.target.namespace) this.selectedWatchKey = key;
        void watch.start();
        this.watchChanged.fire();
      }
    }
    const held = shared;
    held.holders += 1;
    if (held.linger !== undefined) {
      clearTimeout(held.linger);
      held.linger = undefined;
    }
    let released = false;
    return {
      watch: held.watch,
      release: () => {
        if (released) return;
        released = true;
        held.holders -= 1;
        if (held.holders === 0 && this.shared.get(held.key) === held) {
          held.linger = setTimeout(() => {
            if (this.shared.get(held.key) === held && held.holders === 0) void this.dropWatch(held);
          }, WATCH_LINGER_MS);
        }
      },
    };
  }

  /** The running watch of the selected namespace, if any (never starts one). */
  get currentWatch(): Kube.NamespaceWatch | undefined {
    return this.selectedWatchKey !== undefined ? this.shared.get(this.selectedWatchKey)?.watch : undefined;
  }

  /** Stops one watch, or every watch (the target changed). */
  private async dropWatch(one?: SharedWatch): Promise<void> {
    const dropped = one !== undefined ? [one] : [...this.shared.values()];
    if (one === undefined) this.selectedWatchKey = undefined;
    if (dropped.length === 0) return;
    for (const shared of dropped) {
      this.shared.delete(shared.key);
      if (shared.linger !== undefined) clearTimeout(shared.linger);
      this.log.info(`stopped watching ${shared.watch.namespace}`);
    }
    this.watchChanged.fire();
    await Promise.all(dropped.map((shared) => shared.watch.stop()));
  }

  dispose(): void {
    void this.dropWatch();
    for (const s of this.subscriptions) s.dispose();
  }
}

/** The connection with another namespace as its target (same kubeconfig, context and user). */
function inNamespace(connection: Kube.KubeConnection, namespace: string | undefined): Kube.KubeConnection {
  if (namespace === undefined || namespace === connection.target.namespace) return connection;
  return { ...connection, target: { ...connection.target, namespace } };
}

/** `queueSplit.pinned`: a context is pinned for this workspace (enables "Unpin Context"). */
function setPinnedKey(selection: Selection): void {
  void vscode.commands.executeCommand('setContext', 'queueSplit.pinned', selection.context !== undefined);
}

function describeLook(look: { connection: Kube.KubeConnection } | { error: unknown }): string {
  if ('error' in look)
    return `no target: ${look.error instanceof Error ? look.error.message : String(look.error)}`;
  const { target } = look.connection;
  const from =
    target.contextFrom === 'pinned'
      ? 'pinned'
      : target.contextFrom === 'setting'
        ? 'queueSplit.context'
        : "kubeconfig's current";
  return `context ${target.context} (${from}), namespace ${target.namespace}`;
}
