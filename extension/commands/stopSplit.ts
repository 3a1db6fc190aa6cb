// Queue Split: Stop Split / Stop All My Splits. With a sidecar in this window the sidecar stops
// delivering, deletes the split and reports the drain; otherwise the split is deleted directly
// and followed until the controller has drained it. Progress shows what the drain waits on.
import * as vscode from 'vscode';
import type { TreeNode } from '../model/tree';
import { isMine } from '../model/owner';
import { UserError } from '../notifications';
import type { Services } from '../services';
import { chooseMySplit } from './pickers';

export async function stopSplit(services: Services, arg?: TreeNode | string): Promise<void> {
  const api = await services.cluster.api();
  let name: string | undefined;
  let uid: string | undefined;
  let namespace: string | undefined;
  if (typeof arg === 'string') name = arg;
  else if (arg?.kind === 'route') {
    if (!arg.mine)
      throw new UserError(
        vscode.l10n.t("This is {0}'s split, not yours.", arg.split.spec.owner),
        vscode.l10n.t('Ask {0} to stop it, or delete it with kubectl if you are sure.', arg.split.spec.owner),
      );
    name = arg.split.metadata.name;
    uid = arg.split.metadata.uid;
    namespace = arg.split.metadata.namespace;
  } else {
    const choice = await chooseMySplit(services, api, vscode.l10n.t('Stop Split'));
    if (choice === undefined) return;
    name = choice.name;
    uid = choice.split?.metadata.uid;
  }
  await services.sessions.stopByName(name, uid, namespace);
}

export async function stopAllMySplits(services: Services): Promise<void> {
  const api = await services.cluster.api();
  const owner = await services.cluster.owner();
  const mine = (await api.listSplits()).filter(
    (s) => isMine(s, owner) && s.metadata.deletionTimestamp === undefined,
  );
  const sessions = services.sessions.list().filter((s) => s.live);
  const names = new Map<string, string | undefined>(mine.map((s) => [s.metadata.name, s.metadata.uid]));
  if (names.size === 0 && sessions.length === 0) {
    services.notifier.info(vscode.l10n.t('You have no splits in namespace {0}.', api.target.namespace));
    return;
  }
  services.log.info(`stopping ${names.size + sessions.length} split(s) of ${owner}`);
  await Promise.all([
    ...sessions.map((s) => services.sessions.stop(s)),
    ...[...names]
      .filter(([name]) => !sessions.some((s) => s.name === name))
      .map(([name, uid]) => services.sessions.stopByName(name, uid)),
  ]);
}
