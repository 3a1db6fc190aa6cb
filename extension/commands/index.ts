// Registers every command of the palette and the view (package.json `contributes.commands`).
// Each command module is small and loads heavy code (Kubernetes, brokers) only when it runs.
import * as vscode from 'vscode';
import type { TreeNode } from '../model/tree';
import type { Services } from '../services';
import type { BlockedRef } from '../model/blocked';
import { requireTrust } from '../trust';
import { addToLaunchConfig, migrateLaunchConfigs, type AddToLaunchArgs } from './addToLaunchConfig';
import { registerBlockedContext, rejectBlockedMessage, retryBlockedMessage } from './blockedMessage';
import { openSetting } from '../notifications';
import { setBrokerPassword } from './brokerPassword';
import { guarded } from './guard';
import { installController, type InstallArgs } from './installController';
import { openKubeconfig } from './openKubeconfig';
import { selectContext, unpinContext } from './selectContext';
import { selectNamespaces } from './selectNamespaces';
import { sendTestMessage } from './sendTestMessage';
import { showSplitDetails } from './showDetails';
import { startSplit } from './startSplit';
import { stopAllMySplits, stopSplit } from './stopSplit';
import { writeQueueConfig, type WriteQueueConfigArgs } from './writeQueueConfig';

export function registerCommands(services: Services, refresh: () => void): vscode.Disposable[] {
  const register = <A extends unknown[], R>(id: string, body: (...args: A) => Promise<R>) =>
    vscode.commands.registerCommand(id, guarded(services, id, body));
  // Restricted Mode (trust.ts): these act with this workspace's files and settings.
  return [
    register('queueSplit.startSplit', (node?: TreeNode) => {
      requireTrust(
        vscode.l10n.t(
          'Trust the workspace to start a split: it acts on your cluster and brokers with this workspace’s files and settings.',
        ),
      );
      return startSplit(services, node);
    }),
    register('queueSplit.stopSplit', (arg?: TreeNode | string) => stopSplit(services, arg)),
    register('queueSplit.stopAllMySplits', () => stopAllMySplits(services)),
    register('queueSplit.sendTestMessage', (node?: TreeNode) => {
      requireTrust(
        vscode.l10n.t(
          'Trust the workspace to send a test message: it acts on your cluster and brokers with this workspace’s files and settings.',
        ),
      );
      return sendTestMessage(services, node);
    }),
    register('queueSplit.showSplitDetails', (arg?: TreeNode | string) => showSplitDetails(services, arg)),
    register('queueSplit.selectContext', () => selectContext(services)),
    register('queueSplit.selectNamespaces', () => selectNamespaces(services)),
    register('queueSplit.unpinContext', () => unpinContext(services)),
    register('queueSplit.openKubeconfig', () => openKubeconfig(services)),
    register('queueSplit.openSetting', async (setting?: string) => openSetting(setting ?? 'queueSplit')),
    register('queueSplit.installController', (args?: InstallArgs) => {
      requireTrust(
        vscode.l10n.t(
          'Trust the workspace to install the controller: it acts on your cluster and brokers with this workspace’s files and settings.',
        ),
      );
      return installController(services, args);
    }),
    register('queueSplit.addToLaunchConfig', (args?: AddToLaunchArgs) => {
      requireTrust(
        vscode.l10n.t(
          'Trust the workspace to add Queue Split to a launch configuration: VS Code starts no debug session in Restricted Mode.',
        ),
      );
      return addToLaunchConfig(services, args);
    }),
    register('queueSplit.migrateLaunchConfigs', (folder?: vscode.Uri) => {
      requireTrust(
        vscode.l10n.t(
          'Trust the workspace to migrate its launch configurations: VS Code starts no debug session in Restricted Mode.',
        ),
      );
      return migrateLaunchConfigs(services, folder);
    }),
    register('queueSplit.setBrokerPassword', () => setBrokerPassword(services)),
    register('queueSplit.retryBlockedMessage', (arg?: TreeNode | BlockedRef) =>
      retryBlockedMessage(services, arg),
    ),
    register('queueSplit.rejectBlockedMessage', (arg?: TreeNode | BlockedRef) =>
      rejectBlockedMessage(services, arg),
    ),
    register('queueSplit.writeQueueConfig', (arg?: TreeNode | WriteQueueConfigArgs) =>
      writeQueueConfig(services, arg),
    ),
    registerBlockedContext(services),
    register('queueSplit.refresh', async () => refresh()),
  ];
}
