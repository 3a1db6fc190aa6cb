// Read-only YAML documents for "Show Split Details" (`queuesplit:/<namespace>/<name>.yaml`).
// They follow the cluster: the namespace watch (when running) and the sidecar sessions refresh
// every open one.
import * as vscode from 'vscode';
import type { QueueSplit } from '../core/crd/queueSplitSchema';
import type { ClusterService } from './cluster';
import { isMine } from './model/owner';
import type { SessionManager } from './sidecar/splitSessions';

export const DETAILS_SCHEME = 'queuesplit';

export function detailsUri(context: string, namespace: string, name: string): vscode.Uri {
  return vscode.Uri.from({
    scheme: DETAILS_SCHEME,
    path: `/${namespace}/${name}.yaml`,
    query: new URLSearchParams({ context }).toString(),
  });
}

export class DetailsProvider implements vscode.TextDocumentContentProvider, vscode.Disposable {
  private readonly changed = new vscode.EventEmitter<vscode.Uri>();
  readonly onDidChange = this.changed.event;
  private readonly subscriptions: vscode.Disposable[] = [];
  private watchListener: { dispose(): void } | undefined;

  constructor(
    private readonly cluster: ClusterService,
    private readonly sessions: SessionManager,
  ) {
    this.subscriptions.push(
      this.changed,
      sessions.onDidChange(() => this.refreshAll()),
      cluster.onDidChangeTarget(() => this.refreshAll()),
      cluster.onDidChangeWatch(() => this.refreshAll()),
    );
  }

  private openUris(): vscode.Uri[] {
    return vscode.workspace.textDocuments.filter((d) => d.uri.scheme === DETAILS_SCHEME).map((d) => d.uri);
  }

  refreshAll(): void {
    this.followWatch();
    for (const uri of this.openUris()) this.changed.fire(uri);
  }

  /** Re-render on namespace watch events while the watch runs (the tree holds it). */
  private followWatch(): void {
    const watch = this.cluster.currentWatch;
    this.watchListener?.dispose();
    this.watchListener = watch?.onChange(() => {
      for (const uri of this.openUris()) this.changed.fire(uri);
    });
  }

  async provideTextDocumentContent(uri: vscode.Uri): Promise<string> {
    const [, namespace, file] = uri.path.split('/');
    const name = (file ?? '').replace(/\.yaml$/, '');
    const context = new URLSearchParams(uri.query).get('context') ?? '';
    const watch = this.cluster.currentWatch;
    let split: QueueSplit | undefined = watch?.current.splits.find(
      (s) => s.metadata.name === name && s.metadata.namespace === namespace,
    );
    if (split === undefined) {
      try {
        const api = await this.cluster.api();
        if (api.target.namespace === namespace && api.target.context === context)
          split = await api.getSplit(name);
      } catch (err) {
        return `# Cannot read QueueSplit ${name}: ${err instanceof Error ? err.message : String(err)}\n`;
      }
    }
    const session = this.sessions.byName(context, namespace ?? '', name);
    const { detailsYaml } = await import('./model/details');
    return detailsYaml(split, {
      mine: split !== undefined ? isMine(split, await this.cluster.owner().catch(() => '')) : true,
      ...(session !== undefined ? { session: session.view } : {}),
      name,
      namespace: namespace ?? '',
      context,
    });
  }

  dispose(): void {
    this.watchListener?.dispose();
    for (const s of this.subscriptions) s.dispose();
  }
}
