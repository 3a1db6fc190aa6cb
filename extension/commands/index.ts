// Registers every command of the palette and the view (package.json `contributes.commands`).
// Each command module is small and loads heavy code (Kubernetes, brokers) only when it runs.
import * as vscode from 'vscode';
import type { TreeNode } from '../model/tree';
import type { Services } from '../services';
import type { BlockedRef } from '../model/blocked';
import { addToLaunchConfig, migrateLaunchConfigs, type AddToLaunchArgs } from './addToLaunchConfig';
import { registerBlockedContext, rejectBlockedMessage, retryBlockedMessage } from './blockedMessage';
import { openSetting } from '../notifications';
import { guarded } from './guard';
import { installController, type InstallArgs } from './installController';
import { openKubeconfig } from './openKubeconfig';
import { selectContext, unpinContext } from './selectContext';
import { sendTestMessage } from './sendTestMessage';
import { showSplitDetails } from './showDetails';
import { startSplit } from './startSplit';
import { stopAllMySplits, stopSplit } from './stopSplit';
import { writeQueueConfig, type WriteQueueConfigArgs } from './writeQueueConfig';

export function registerCommands(services: Services, refresh: () => void): vscode.Disposable[] {
  const register = <A extends unknown[], R>(id: string, body: (...args: A) => Promise<R>) =>
    vscode.commands.registerCommand(id, guarded(services, id, body));
  return [
    register('queueSplit.startSplit', (node?: TreeNode) => startSplit(services, node)),
    register('queueSplit.stopSplit', (arg?: TreeNode | string) => stopSplit(services, arg)),
    register('queueSplit.stopAllMySplits', () => stopAllMySplits(services)),
    register('queueSplit.sendTestMessage', (node?: TreeNode) => sendTestMessage(services, node)),
    register('queueSplit.showSplitDetails', (arg?: TreeNode | string) => showSplitDetails(services, arg)),
    register('queueSplit.selectContext', () => selectContext(services)),
    register('queueSplit.unpinContext', () => unpinContext(services)),
    register('queueSplit.openKubeconfig', () => openKubeconfig(services)),
    register('queueSplit.openSetting', async (setting?: string) => openSetting(setting ?? 'queueSplit')),
    register('queueSplit.installController', (args?: InstallArgs) => installController(services, args)),
    register('queueSplit.addToLaunchConfig', (args?: AddToLaunchArgs) => addToLaunchConfig(services, args)),
    register('queueSplit.migrateLaunchConfigs', (folder?: vscode.Uri) =>
      migrateLaunchConfigs(services, folder),
    ),
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
