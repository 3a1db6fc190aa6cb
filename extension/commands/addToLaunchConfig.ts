// Queue Split: Add Queue Split to Launch Configuration — inserts a queueSplit block into a
// configuration of .vscode/launch.json (as text, so comments survive), or creates launch.json
// with a Node.js configuration carrying one. The workload is inferred from the workspace.
import * as vscode from 'vscode';
import { blockValue, insertBlock, newLaunchJson } from '../model/launchEdit';
import { DEFAULT_FILTER_KEY } from '../../core/filter';
import { inferWorkload } from '../model/startSplit';
import { UserError } from '../notifications';
import type { Services } from '../services';
import { settings } from '../settings';
import { workloadCandidates } from '../workspace';

async function proposedWorkload(services: Services): Promise<string> {
  const candidates = await workloadCandidates(services.log);
  // Prefer what the cluster confirms; work offline with the strongest workspace hint.
  try {
    const api = await services.cluster.api();
    const inferred = inferWorkload(candidates, await api.listWorkloads()).inferred;
    if (inferred !== undefined) return `${inferred.workload.kind.toLowerCase()}/${inferred.workload.name}`;
  } catch (err) {
    services.log.info(
      `cluster not consulted for the workload: ${err instanceof Error ? err.message : String(err)}`,
    );
  }
  const best = [...candidates].sort((a, b) => a.strength - b.strength)[0];
  return best !== undefined
    ? `${(best.kind ?? 'Deployment').toLowerCase()}/${best.name}`
    : 'deployment/my-consumer';
}

export async function addToLaunchConfig(services: Services): Promise<void> {
  const folder =
    vscode.workspace.workspaceFolders?.length === 1
      ? vscode.workspace.workspaceFolders[0]
      : await vscode.window.showWorkspaceFolderPick({ placeHolder: "Which folder's launch.json?" });
  if (folder === undefined) {
    if ((vscode.workspace.workspaceFolders?.length ?? 0) === 0)
      throw new UserError(
        'No folder is open.',
        'Open the folder of the service you debug, then run this again.',
      );
    return;
  }
  const block = blockValue({
    workload: await proposedWorkload(services),
    headers: { [DEFAULT_FILTER_KEY]: settings.owner() },
    delivery: 'env',
  });
  const uri = vscode.Uri.joinPath(folder.uri, '.vscode', 'launch.json');
  let text: string | undefined;
  try {
    text = new TextDecoder().decode(await vscode.workspace.fs.readFile(uri));
  } catch {
    text = undefined;
  }
  if (text === undefined) {
    await vscode.workspace.fs.writeFile(uri, new TextEncoder().encode(newLaunchJson(block)));
    const editor = await vscode.window.showTextDocument(uri);
    const at = editor.document.getText().indexOf('"queueSplit"');
    if (at >= 0)
      editor.selection = new vscode.Selection(editor.document.positionAt(at), editor.document.positionAt(at));
    services.notifier.info(
      'Created .vscode/launch.json with a Node.js configuration that starts a split; adjust "program" and the queueSplit block.',
    );
    return;
  }
  const configurations =
    vscode.workspace.getConfiguration('launch', folder.uri).get<unknown[]>('configurations') ?? [];
  const names = configurations
    .map((c) => (typeof c === 'object' && c !== null ? (c as { name?: unknown }).name : undefined))
    .filter((n): n is string => typeof n === 'string');
  if (names.length === 0)
    throw new UserError(
      'launch.json has no configurations to add the block to.',
      'Add a configuration for your debugger first (Run → Add Configuration…).',
    );
  const name =
    names.length === 1
      ? names[0]
      : await vscode.window.showQuickPick(names, {
          title: 'Add Queue Split to which launch configuration?',
          ignoreFocusOut: true,
        });
  if (name === undefined) return;
  const insertion = insertBlock(text, name, block);
  if (insertion === undefined)
    throw new UserError(
      `Configuration "${name}" already has a queueSplit block, or it is not in ${vscode.workspace.asRelativePath(uri)}.`,
      'Edit the block by hand (the snippet "Queue Split block" helps).',
    );
  const document = await vscode.workspace.openTextDocument(uri);
  const edit = new vscode.WorkspaceEdit();
  edit.insert(uri, document.positionAt(insertion.offset), insertion.text);
  await vscode.workspace.applyEdit(edit);
  await document.save();
  const editor = await vscode.window.showTextDocument(document);
  const position = document.positionAt(insertion.offset + insertion.text.indexOf('"queueSplit"'));
  editor.selection = new vscode.Selection(position, position);
  editor.revealRange(new vscode.Range(position, position));
  services.notifier.info(
    `Added a queueSplit block to "${name}": the split starts with the debugger and stops with it.`,
  );
}
