// The status bar item for my splits: phase and messages delivered to my process; click → details.
// Fed by this window's sidecars and, while the namespace watch runs, my other live splits there.
import * as vscode from 'vscode';
import type { ClusterService } from './cluster';
import { isMine } from './model/owner';
import { splitPhase } from './model/phases';
import { totalDelivered } from './model/sidecarView';
import { statusBarLook, type MySplitSummary } from './model/statusBar';
import type { SessionManager } from './sidecar/splitSessions';

export function registerStatusBar(cluster: ClusterService, sessions: SessionManager): vscode.Disposable[] {
  const item = vscode.window.createStatusBarItem('queueSplit.status', vscode.StatusBarAlignment.Left, 50);
  item.name = 'Queue Split';
  item.command = 'queueSplit.showSplitDetails';
  let watchListener: { dispose(): void } | undefined;

  const update = () => {
    const summaries = new Map<string, MySplitSummary>();
    for (const s of sessions.list()) {
      if (!s.live) continue;
      summaries.set(s.name, {
        name: s.name,
        workload: s.request.workload.name,
        queues: s.request.queues,
        phase: s.view.phase ?? (s.view.stage === 'active' ? 'Active' : 'Pending'),
        ...(s.view.mode !== 'env' ? { delivered: totalDelivered(s.view) } : {}),
        ...(s.view.routed !== undefined ? { routed: s.view.routed } : {}),
        ...(s.lingerUntil !== undefined ? { lingerLeftMs: s.lingerUntil - Date.now() } : {}),
        ...(s.view.blocked[0] !== undefined ? { blocked: s.view.blocked[0] } : {}),
      });
    }
    const owner = cluster.knownOwner;
    for (const split of cluster.currentWatch?.current.splits ?? []) {
      if (owner === undefined || !isMine(split, owner) || summaries.has(split.metadata.name)) continue;
      summaries.set(split.metadata.name, {
        name: split.metadata.name,
        workload: split.spec.workload.name,
        queues: split.spec.queues,
        phase: splitPhase(split),
        ...(split.status?.delivered !== undefined ? { routed: split.status.delivered } : {}),
      });
    }
    const look = statusBarLook([...summaries.values()]);
    item.text = look.text;
    item.tooltip = look.tooltip;
    item.backgroundColor = look.background !== undefined ? new vscode.ThemeColor(look.background) : undefined;
    if (look.visible) item.show();
    else item.hide();
  };
  const followWatch = () => {
    watchListener?.dispose();
    watchListener = cluster.currentWatch?.onChange(update);
  };
  update();
  return [
    item,
    sessions.onDidChange(update),
    cluster.onDidChangeTarget(() => {
      followWatch();
      update();
    }),
    cluster.onDidChangeWatch(() => {
      followWatch();
      update();
      // My splits in the watch are known once the owner is (onDidChangeOwner updates again).
      if (cluster.currentWatch !== undefined) cluster.owner().catch(() => undefined);
    }),
    cluster.onDidChangeOwner(update),
    { dispose: () => watchListener?.dispose() },
  ];
}
