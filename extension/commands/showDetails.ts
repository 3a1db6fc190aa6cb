// Queue Split: Show Split Details — the QueueSplit and the sidecar's state as live YAML.
import * as vscode from 'vscode';
import { detailsUri } from '../details';
import type { TreeNode } from '../model/tree';
import type { Services } from '../services';
import { chooseMySplit } from './pickers';

export async function showSplitDetails(services: Services, arg?: TreeNode | string): Promise<void> {
  const api = await services.cluster.api();
  let name: string | undefined;
  let namespace = api.target.namespace;
  let context = api.target.context;
  if (typeof arg === 'string') name = arg;
  else if (arg?.kind === 'route') {
    name = arg.split.metadata.name;
    namespace = arg.split.metadata.namespace ?? namespace;
  } else {
    const live = services.sessions.list().filter((s) => s.live);
    if (live.length === 1 && live[0] !== undefined) {
      name = live[0].name;
      namespace = live[0].request.target.namespace;
      context = live[0].request.target.context;
    } else {
      const choice = await chooseMySplit(services, api, 'Show Split Details');
      if (choice === undefined) return;
      name = choice.name;
    }
  }
  const document = await vscode.workspace.openTextDocument(detailsUri(context, namespace, name));
  await vscode.languages.setTextDocumentLanguage(document, 'yaml');
  await vscode.window.showTextDocument(document, { preview: true, preserveFocus: false });
}
