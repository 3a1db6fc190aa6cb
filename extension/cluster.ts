// The extension's one handle on "which cluster and namespace": the user's selection (made with
// "Select Context/Namespace…", remembered per workspace) over the settings, the lazily loaded
// Kubernetes module, and the namespace watch shared by everything that wants live state.
import * as vscode from 'vscode';
import type * as Kube from './kube';
import type { KubeTargetInfo } from './model/types';
import { affectsTarget, settings } from './settings';

type KubeModule = typeof Kube;

const SELECTION_KEY = 'queueSplit.selection';
/** A watch nobody holds any more keeps running this long, so collapsing and re-expanding is instant. */
const WATCH_LINGER_MS = 30_000;

export interface Selection {
  context?: string;
  namespace?: string;
}

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

  constructor(
    private readonly memento: vscode.Memento,
    private readonly log: vscode.LogOutputChannel,
  ) {
    this.subscriptions.push(
      this.targetChanged,
      this.watchChanged,
      vscode.workspace.onDidChangeConfiguration((e) => {
        if (affectsTarget(e)) this.fireTargetChanged();
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

  get selection(): Selection {
    return this.memento.get<Selection>(SELECTION_KEY) ?? {};
  }

  async select(selection: Selection): Promise<void> {
    await this.memento.update(SELECTION_KEY, selection);
    this.fireTargetChanged();
  }

  /** Forget live state and look again (after an install, on "Refresh"). */
  refresh(): void {
    this.fireTargetChanged();
  }

  private fireTargetChanged(): void {
    void this.dropWatch();
    this.targetChanged.fire();
  }

  async connection(): Promise<Kube.KubeConnection> {
    const kube = await this.kube();
    return kube.connect(settings.kubeconfig(), this.selection, {
      context: settings.context(),
      namespace: settings.namespace(),
    });
  }

  async api(): Promise<Kube.ClusterApi> {
    const kube = await this.kube();
    return new kube.ClusterApi(await this.connection());
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
