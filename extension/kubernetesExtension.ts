// Following the Kubernetes extension (ms-kubernetes-tools.vscode-kubernetes-tools), when it is
// installed, through its published API (the npm package vscode-kubernetes-tools-api: types only
// here, nothing of it is bundled). Its Configuration API v1_1 gives the kubeconfig it uses
// (getKubeconfigPath: its vs-kubernetes.kubeconfig setting or the file picked with its "Set
// Kubeconfig", else $KUBECONFIG, else ~/.kube/config) and says when the user switches kubeconfig,
// context or namespace there. Its context and namespace switches are written to that kubeconfig
// (it runs `kubectl config use-context` / `set-context --current --namespace`), so Queue Split
// reads them from the file; the events only make it look again at once.
//
// The package's own helper (`k8s.extension`) activates the Kubernetes extension as soon as it is
// imported. Queue Split does not: it asks only when it first needs its kubeconfig (ClusterService),
// and waits a bounded time, since that extension's activation can take a while.
import * as vscode from 'vscode';
import type { API, APIBroker } from 'vscode-kubernetes-tools-api';
import type { ConfigurationV1_1 } from 'vscode-kubernetes-tools-api/js/configuration/v1_1';

export const KUBERNETES_EXTENSION_ID = 'ms-kubernetes-tools.vscode-kubernetes-tools';
/** How long the first look waits for the Kubernetes extension to activate. */
const FIRST_ACTIVATION_WAIT_MS = 5_000;

export interface KubernetesExtensionState {
  /** Its kubeconfig (a host path, maybe a $KUBECONFIG-style list); undefined: not followed. */
  kubeconfig?: string;
  /** Why it is not followed, for the log (not installed, API unavailable, WSL path). */
  why?: string;
}

export class KubernetesExtensionFollower implements vscode.Disposable {
  private api: ConfigurationV1_1 | undefined;
  private started: Promise<void> | undefined;
  private why: string | undefined;
  private readonly changed = new vscode.EventEmitter<string>();
  /** The Kubernetes extension switched kubeconfig, context or namespace (the argument says which). */
  readonly onDidChange = this.changed.event;
  private readonly subscriptions: vscode.Disposable[] = [this.changed];

  constructor(
    private readonly log: Pick<vscode.LogOutputChannel, 'info' | 'warn'>,
    private readonly extensionId: string = KUBERNETES_EXTENSION_ID,
  ) {
    // Installed (or removed) while the window is open: look again.
    this.subscriptions.push(
      vscode.extensions.onDidChange(() => {
        if (this.started === undefined) return;
        const installed = vscode.extensions.getExtension(this.extensionId) !== undefined;
        if (installed === (this.why !== 'not installed')) return;
        this.api = undefined;
        this.why = undefined;
        this.started = this.connect();
        this.changed.fire(installed ? 'installed' : 'removed');
      }),
    );
  }

  /**
   * Connects to the Kubernetes extension's API if it is installed (activating it), waiting at
   * most a few seconds; if it comes later, onDidChange fires then.
   */
  async ready(): Promise<void> {
    this.started ??= this.connect();
    let timer: NodeJS.Timeout | undefined;
    await Promise.race([
      this.started,
      new Promise<void>((resolve) => {
        timer = setTimeout(resolve, FIRST_ACTIVATION_WAIT_MS);
      }),
    ]);
    clearTimeout(timer);
  }

  /** What to follow now (call ready() first). */
  get state(): KubernetesExtensionState {
    if (this.api === undefined) return this.why !== undefined ? { why: this.why } : {};
    let path;
    try {
      path = this.api.getKubeconfigPath();
    } catch (err) {
      return { why: `its getKubeconfigPath failed: ${err instanceof Error ? err.message : String(err)}` };
    }
    if (path.pathType !== 'host') {
      // A path inside WSL cannot be read from here.
      return { why: `its kubeconfig is inside WSL (${path.wslPath})` };
    }
    return { kubeconfig: path.hostPath };
  }

  private async connect(): Promise<void> {
    const extension = vscode.extensions.getExtension<APIBroker | undefined>(this.extensionId);
    if (extension === undefined) {
      this.why = 'not installed';
      return;
    }
    let broker: APIBroker | undefined;
    try {
      broker = extension.isActive ? extension.exports : await extension.activate();
    } catch (err) {
      this.why = `it failed to activate: ${err instanceof Error ? err.message : String(err)}`;
      this.log.warn(`Kubernetes extension: ${this.why}; using Queue Split's own kubeconfig lookup`);
      return;
    }
    if (broker === undefined || typeof broker.get !== 'function') {
      this.why = 'it publishes no API broker';
      this.log.warn(`Kubernetes extension: ${this.why}; using Queue Split's own kubeconfig lookup`);
      return;
    }
    const result = broker.get('configuration', 'v1_1') as API<ConfigurationV1_1>;
    if (!result.available) {
      this.why = `its configuration API v1_1 is unavailable (${result.reason})`;
      this.log.warn(`Kubernetes extension: ${this.why}; using Queue Split's own kubeconfig lookup`);
      return;
    }
    const api = result.api;
    this.api = api;
    this.why = undefined;
    this.subscriptions.push(
      api.onDidChangeKubeconfigPath(() => this.changed.fire('kubeconfig')),
      api.onDidChangeContext(() => this.changed.fire('context')),
      api.onDidChangeNamespace(() => this.changed.fire('namespace')),
    );
    this.log.info(`following the Kubernetes extension's kubeconfig (${describe(this.state)})`);
    // ready() may have stopped waiting: whoever looked without it looks again.
    this.changed.fire('connected');
  }

  dispose(): void {
    for (const s of this.subscriptions) s.dispose();
  }
}

function describe(state: KubernetesExtensionState): string {
  return state.kubeconfig ?? state.why ?? 'nothing';
}
