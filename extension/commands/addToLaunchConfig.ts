// Queue Split: Add Queue Split to Launch Configuration — names a split in a configuration's env
// (`QUEUE_SPLIT`, a form every debugger accepts) and defines it in .vscode/queue-split.json, or
// creates launch.json with a Node.js configuration doing so. Both files are edited as text, so
// comments survive. The workload is inferred from the workspace.
// Queue Split: Migrate Launch Configurations — moves old inline `queueSplit` blocks (which VS Code
// flags "not allowed") the same way. See docs/launch-configurations.md.
import * as vscode from 'vscode';
import { SPLIT_ENV_MARKER, SPLITS_FILE, SPLITS_FILE_SEGMENTS } from '../model/launchSplits';
import { DEFAULT_FILTER_KEY } from '../../core/filter';
import { inferWorkload } from '../model/startSplit';
import { UserError } from '../notifications';
import type { Services } from '../services';
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

async function pickFolder(): Promise<vscode.WorkspaceFolder | undefined> {
  const folder =
    vscode.workspace.workspaceFolders?.length === 1
      ? vscode.workspace.workspaceFolders[0]
      : await vscode.window.showWorkspaceFolderPick({
          placeHolder: vscode.l10n.t("Which folder's launch.json?"),
        });
  if (folder === undefined && (vscode.workspace.workspaceFolders?.length ?? 0) === 0)
    throw new UserError(
      vscode.l10n.t('No folder is open.'),
      vscode.l10n.t('Open the folder of the service you debug, then run this again.'),
    );
  return folder;
}

async function readText(uri: vscode.Uri): Promise<string | undefined> {
  try {
    return new TextDecoder().decode(await vscode.workspace.fs.readFile(uri));
  } catch {
    return undefined;
  }
}

/**
 * Refuses while the user has unsaved changes in a file this command writes: they would be
 * overwritten, or saved with a half-written result. Checked before anything is written.
 */
function refuseUnsaved(...uris: vscode.Uri[]): void {
  for (const uri of uris) {
    const open = vscode.workspace.textDocuments.find((d) => d.uri.toString() === uri.toString());
    if (open?.isDirty === true)
      throw new UserError(
        vscode.l10n.t('{0} has unsaved changes: nothing was changed.', vscode.workspace.asRelativePath(uri)),
        vscode.l10n.t('Save or revert it, then run this again.'),
      );
  }
}

/**
 * Writes a file on disk; an editor that has it open (without unsaved changes: refuseUnsaved)
 * reloads it. (Written through the open document and saved, a save VS Code declined left the
 * change unsaved in the editor while the command said it was done.)
 */
async function writeText(uri: vscode.Uri, text: string): Promise<void> {
  await vscode.workspace.fs.writeFile(uri, new TextEncoder().encode(text));
}

/** The split names the splits file defines; a file that does not parse is not edited. */
async function existingSplits(splitsText: string | undefined): Promise<string[]> {
  if (splitsText === undefined) return [];
  const file = (await import('../model/launchEdit')).parseSplitsFile(splitsText);
  if (!file.ok)
    throw new UserError(
      file.errors.join(' '),
      vscode.l10n.t('Fix {0} first; nothing was changed.', SPLITS_FILE),
    );
  return Object.keys(file.splits);
}

async function showAt(uri: vscode.Uri, needle: string): Promise<void> {
  const editor = await vscode.window.showTextDocument(uri, { preview: false });
  const at = editor.document.getText().indexOf(needle);
  if (at < 0) return;
  const position = editor.document.positionAt(at);
  editor.selection = new vscode.Selection(position, position);
  editor.revealRange(new vscode.Range(position, position));
}

/** `configuration`: the launch configuration to add to, instead of asking (links, tests). */
export interface AddToLaunchArgs {
  configuration?: string;
}

export async function addToLaunchConfig(services: Services, args: AddToLaunchArgs = {}): Promise<void> {
  const folder = await pickFolder();
  if (folder === undefined) return;
  const { addSplitTo, blockValue, newLaunchJson, splitNameFor, withSplit } =
    await import('../model/launchEdit');
  // Editing files needs no cluster: when the Kubernetes user name cannot be learnt now, no header
  // is written and the launch applies the default filter for the owner it learns then.
  const owner = await services.cluster.owner().catch((err: unknown) => {
    services.log.warn(
      `no default header written: ${err instanceof Error ? err.message : String(err)}; the launch uses ${DEFAULT_FILTER_KEY}=<your Kubernetes user name>`,
    );
    return undefined;
  });
  const block = blockValue({
    workload: await proposedWorkload(services),
    ...(owner !== undefined ? { headers: { [DEFAULT_FILTER_KEY]: owner } } : {}),
    delivery: 'env',
  });
  const launchUri = vscode.Uri.joinPath(folder.uri, '.vscode', 'launch.json');
  const splitsUri = vscode.Uri.joinPath(folder.uri, ...SPLITS_FILE_SEGMENTS);
  refuseUnsaved(launchUri, splitsUri);
  const [launchText, splitsText] = await Promise.all([readText(launchUri), readText(splitsUri)]);
  const taken = await existingSplits(splitsText);
  if (launchText === undefined) {
    const name = splitNameFor('Debug with Queue Split', taken);
    await writeText(splitsUri, withSplit(splitsText, name, block));
    await writeText(launchUri, newLaunchJson(name));
    await showAt(launchUri, SPLIT_ENV_MARKER);
    services.notifier.info(
      vscode.l10n.t(
        'Created .vscode/launch.json with a Node.js configuration that starts the split "{0}" of {1}; adjust "program" and the split.',
        name,
        SPLITS_FILE,
      ),
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
      vscode.l10n.t('launch.json has no configurations to add a split to.'),
      vscode.l10n.t('Add a configuration for your debugger first (Run → Add Configuration…).'),
    );
  const name =
    args.configuration !== undefined
      ? args.configuration
      : names.length === 1
        ? names[0]
        : await vscode.window.showQuickPick(names, {
            title: vscode.l10n.t('Add Queue Split to which launch configuration?'),
            ignoreFocusOut: true,
          });
  if (name === undefined) return;
  const result = addSplitTo(launchText, splitsText, name, block);
  if (!result.ok) throw new UserError(result.error, result.fix);
  await writeText(splitsUri, result.edit.splitsFile);
  await writeText(launchUri, result.edit.launchJson);
  await showAt(launchUri, SPLIT_ENV_MARKER);
  services.notifier.info(
    vscode.l10n.t(
      '"{0}" now starts the split "{1}" (defined in {2}): it starts with the debugger and stops with it.',
      name,
      result.edit.splitName,
      SPLITS_FILE,
    ),
  );
}

/** Moves every old inline queueSplit block of the folder's launch.json into the splits file. */
export async function migrateLaunchConfigs(services: Services, folderUri?: vscode.Uri): Promise<void> {
  const folder =
    folderUri !== undefined
      ? (vscode.workspace.getWorkspaceFolder(folderUri) ?? (await pickFolder()))
      : await pickFolder();
  if (folder === undefined) return;
  const { migrateInlineBlocks } = await import('../model/launchEdit');
  const launchUri = vscode.Uri.joinPath(folder.uri, '.vscode', 'launch.json');
  const splitsUri = vscode.Uri.joinPath(folder.uri, ...SPLITS_FILE_SEGMENTS);
  refuseUnsaved(launchUri, splitsUri);
  const [launchText, splitsText] = await Promise.all([readText(launchUri), readText(splitsUri)]);
  await existingSplits(splitsText);
  if (launchText === undefined)
    throw new UserError(
      vscode.l10n.t('{0} has no .vscode/launch.json.', folder.name),
      vscode.l10n.t('Nothing to migrate.'),
    );
  const migration = migrateInlineBlocks(launchText, splitsText);
  if (migration.migrated.length === 0) {
    services.notifier.info(
      vscode.l10n.t('No launch configuration has an old queueSplit block: nothing to migrate.'),
    );
    return;
  }
  await writeText(splitsUri, migration.splitsFile);
  await writeText(launchUri, migration.launchJson);
  services.log.info(
    `migrated ${migration.migrated.map((m) => `"${m.configuration}" → ${m.split}`).join(', ')} to ${SPLITS_FILE}`,
  );
  services.notifier.info(
    vscode.l10n.t(
      'Migrated {0} launch configuration(s): they name their split in env.{1}, defined in {2}.',
      migration.migrated.length,
      SPLIT_ENV_MARKER,
      SPLITS_FILE,
    ),
  );
}
