// What every feature gets handed at activation: the one owner of disposables (the
// ExtensionContext), the log, the notifier, the cluster handle, the session manager and the
// split details panels, broker passwords kept in VS Code's secret storage.
import type * as vscode from 'vscode';
import type { BrokerSecrets } from './brokerSecrets';
import type { ClusterService } from './cluster';
import type { DetailsPanels } from './details';
import type { Notifier } from './notifications';
import type { SessionManager } from './sidecar/splitSessions';

export interface Services {
  context: vscode.ExtensionContext;
  log: vscode.LogOutputChannel;
  notifier: Notifier;
  cluster: ClusterService;
  sessions: SessionManager;
  details: DetailsPanels;
  brokerSecrets: BrokerSecrets;
}
