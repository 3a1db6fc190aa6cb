// Workspace Trust (package.json `capabilities.untrustedWorkspaces`: limited). In Restricted Mode
// Queue Split shows the cluster's splits, their details and its log, switches context, stops your
// splits and keeps broker passwords; whatever acts on the cluster or the brokers for you with
// this workspace's files and settings (a split, a test message, the controller install) or
// prepares a debug launch (VS Code starts none in Restricted Mode) asks for trust first.
// Settings that only a trusted workspace may set are `restrictedConfigurations` there; the
// kubeconfig, the sidecar's Node and the install image are `machine`-scoped: never a workspace's.
import * as vscode from 'vscode';
import { UserError } from './notifications';

/** The Queue Splits view's message in Restricted Mode (vscode.l10n is ready when this loads). */
export const RESTRICTED_MESSAGE = vscode.l10n.t(
  'Restricted Mode: you see the splits and can stop yours. Trust the workspace to start a split or send a test message.',
);

/**
 * Throws, with the way to trust the workspace, unless it is trusted. `message`: the whole
 * localized sentence ("Trust the workspace to start a split: …"), each its own translation.
 */
export function requireTrust(message: string): void {
  if (vscode.workspace.isTrusted) return;
  throw new UserError(message, vscode.l10n.t('Manage Workspace Trust, then try again.'), [
    {
      title: vscode.l10n.t('Manage Workspace Trust'),
      run: () => vscode.commands.executeCommand('workbench.trust.manage'),
    },
  ]);
}
