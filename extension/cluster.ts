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
  private shared: SharedWatch | undefined;
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

  async api(): Promise<Kube.ClusterApi> {
    const kube = await this.kube();
    return new kube.ClusterApi(await this.connection());
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
   * Holds the live watch of the current namespace (started on first hold). Call release() when
   * done; the watch stops a little after its last holder lets go.
   */
  async holdWatch(): Promise<{ watch: Kube.NamespaceWatch; release: () => void }> {
    const connection = await this.connection();
    const key = JSON.stringify([
      connection.kubeconfig.files,
      connection.target.context,
      connection.target.namespace,
    ]);
    if (this.shared?.key !== key) {
      await this.dropWatch();
      const kube = await this.kube();
      const watch = new kube.NamespaceWatch(connection, (line) => this.log.info(line));
      this.shared = { key, watch, holders: 0 };
      void watch.start();
      this.watchChanged.fire();
    }
    const shared = this.shared;
    shared.holders += 1;
    if (shared.linger !== undefined) {
      clearTimeout(shared.linger);
      shared.linger = undefined;
    }
    let released = false;
    return {
      watch: shared.watch,
      release: () => {
        if (released) return;
        released = true;
        shared.holders -= 1;
        if (shared.holders === 0 && this.shared === shared) {
          shared.linger = setTimeout(() => {
            if (this.shared === shared && shared.holders === 0) void this.dropWatch();
          }, WATCH_LINGER_MS);
        }
      },
    };
  }

  /** The running watch, if any (never starts one). */
  get currentWatch(): Kube.NamespaceWatch | undefined {
    return this.shared?.watch;
  }

  private async dropWatch(): Promise<void> {
    const shared = this.shared;
    this.shared = undefined;
    if (shared === undefined) return;
    if (shared.linger !== undefined) clearTimeout(shared.linger);
    this.log.info('stopped watching the namespace');
    this.watchChanged.fire();
    await shared.watch.stop();
  }

  dispose(): void {
    void this.dropWatch();
    for (const s of this.subscriptions) s.dispose();
  }
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
