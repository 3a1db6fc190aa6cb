// Entry point of the VS Code extension. It only wires things together: each feature lives in
// its own module and registers its disposables with the one owner passed in here (the
// ExtensionContext). Nothing heavy loads here: the Kubernetes client and the broker clients are
// imported on first use (see cluster.ts and commands/sendTestMessage.ts).
import { performance } from 'node:perf_hooks';
import * as vscode from 'vscode';
import { BrokerSecrets } from './brokerSecrets';
import { ClusterService } from './cluster';
import { registerCommands } from './commands';
import { QueueSplitDebugProvider } from './debug/provider';
import { DetailsPanels } from './details';
import { registerLogging } from './logging';
import { Notifier } from './notifications';
import type { Services } from './services';
import { SelectionStore } from './selectionStore';
import { SessionManager } from './sidecar/splitSessions';
import { registerStatusBar } from './statusBar';
import { SplitsTreeProvider } from './tree/provider';

export const VIEW_ID = 'queueSplit.splits';

/** For tests: what activation built (the session manager is how host tests see sidecars). */
export interface QueueSplitApi {
  services: Services;
  /** The debug configuration provider registered for every debug type ('*'). */
  debug: QueueSplitDebugProvider;
  /** The Queue Splits view's data: host tests read its rows as the user sees them. */
  tree: SplitsTreeProvider;
  /** The split details panels: host tests read what an open one shows. */
  details: DetailsPanels;
  activationMs: number;
}

export function activate(context: vscode.ExtensionContext): QueueSplitApi {
  const started = performance.now();
  const log = registerLogging(context);
  const notifier = new Notifier(log);
  const cluster = new ClusterService(
    new SelectionStore(context.storageUri, context.workspaceState, log),
    log,
  );
  const brokerSecrets = new BrokerSecrets(context, notifier);
  const sessions = new SessionManager(context, cluster, log, notifier, brokerSecrets);
  const details = new DetailsPanels({ context, log, notifier, cluster, sessions, brokerSecrets });
  const services: Services = { context, log, notifier, cluster, sessions, details, brokerSecrets };
  const tree = new SplitsTreeProvider(cluster, sessions, log, notifier);
  const debug = new QueueSplitDebugProvider(services);

  // Disposed in reverse order: sessions (a stop request to every sidecar) go last but one.
  context.subscriptions.push(
    cluster,
    sessions,
    details,
    tree,
    tree.createView(VIEW_ID),
    ...registerCommands(services, () => cluster.refresh()),
    ...debug.register(),
    ...registerStatusBar(cluster, sessions),
  );
  const activationMs = performance.now() - started;
  log.info(
    `Queue Split ${context.extension.packageJSON.version as string} activated in ${activationMs.toFixed(1)} ms`,
  );
  return { services, debug, tree, details, activationMs };
}

export function deactivate(): void {
  // Disposables registered on the context are released by VS Code.
}
