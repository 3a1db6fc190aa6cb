// The extension's one handle on "which cluster and namespace": the user's selection (made with
// "Select Context/Namespace…", remembered per workspace) over the settings, the lazily loaded
// Kubernetes module, and the namespace watch shared by everything that wants live state.
import * as vscode from 'vscode';
import type * as Kube from './kube';
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

  constructor(
    private readonly store: SelectionStore,
    private readonly log: vscode.LogOutputChannel,
  ) {
    this.subscriptions.push(
      this.targetChanged,
      this.watchChanged,
      this.ownerChanged,
      vscode.workspace.onDidChangeConfiguration((e) => {
        if (!affectsTarget(e)) return;
        this.log.info('a setting that chooses the cluster, namespace or owner changed: looking again');
        this.fireTargetChanged();
      }),
    );
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

  /** Resolves once the choice is saved for this workspace (see selectionStore.ts). */
  async select(selection: Selection): Promise<void> {
    try {
      await this.store.save(selection);
    } finally {
      // Applied even when saving failed: the error says it may not survive a reload.
      this.fireTargetChanged();
    }
  }

  /** Forget live state and look again (after an install, on "Refresh"). */
  refresh(): void {
    this.fireTargetChanged();
  }

  private fireTargetChanged(): void {
    this.identity = undefined;
    void this.dropWatch();
    this.targetChanged.fire();
  }

  async connection(): Promise<Kube.KubeConnection> {
    const kube = await this.kube();
    return kube.connect(settings.kubeconfig(), await this.selection(), {
      context: settings.context(),
      namespace: settings.namespace(),
    });
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
    const key = `${settings.kubeconfig()}|${connection.target.context}`;
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
    const key = `${settings.kubeconfig()}|${connection.target.context}|${connection.target.namespace}`;
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
