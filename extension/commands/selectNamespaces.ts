// Queue Split: Show Namespaces… — which namespaces the Queue Splits view shows besides the
// selected one (queueSplit.namespaces, model/namespaces.ts): a multi-select of the namespaces the
// user may list, with "All namespaces I can list"; when RBAC refuses listing namespaces (the
// queuesplit-developer role grants no cluster-wide list: deploy/), it says so and the names are
// typed. Written to the workspace's settings when a folder is open (a cloned workspace choosing
// namespaces is harmless: the kubeconfig, whose credentials decide what is readable, stays
// machine-scoped), else to the user's.
import * as vscode from 'vscode';
import {
  ALL_NAMESPACES,
  namespacesSettingValue,
  parseNamespacesSetting,
  parseTypedNamespaces,
} from '../model/namespaces';
import type { Services } from '../services';
import { settings } from '../settings';

type Item = vscode.QuickPickItem & { namespace?: string; all?: true };

export async function selectNamespaces(services: Services): Promise<void> {
  const api = await services.cluster.api();
  const { context, namespace: selected } = api.target;
  const current = parseNamespacesSetting(settings.namespaces()).setting;
  const chosen = new Set(current.kind === 'list' ? current.names : []);
  let listable: string[] | undefined;
  try {
    listable = await api.listNamespaces();
  } catch (err) {
    services.log.warn(`cannot list namespaces: ${err instanceof Error ? err.message : String(err)}`);
  }
  let value: string[] | undefined;
  if (listable === undefined) value = await typed(context, selected, [...chosen]);
  else {
    const items: Item[] = [
      {
        label: vscode.l10n.t('$(globe) All namespaces I can list'),
        description: vscode.l10n.t('{0} now', listable.length),
        all: true,
        picked: current.kind === 'all',
      },
      { label: '', kind: vscode.QuickPickItemKind.Separator },
      ...listable.map((n): Item => ({
        label: n,
        namespace: n,
        ...(n === selected ? { description: vscode.l10n.t('selected: always shown') } : {}),
        picked: n === selected || chosen.has(n) || current.kind === 'all',
      })),
    ];
    const picked = await vscode.window.showQuickPick(items, {
      title: vscode.l10n.t('Queue Split: namespaces to show in {0}', context),
      placeHolder: vscode.l10n.t(
        'Each one gets its own node in the Queue Splits view, loaded when you expand it',
      ),
      canPickMany: true,
      ignoreFocusOut: true,
    });
    if (picked === undefined) return;
    const all = picked.some((i) => i.all === true);
    const names = picked.flatMap((i) => (i.namespace !== undefined ? [i.namespace] : []));
    // Only the selected namespace: the setting's default, the flat tree.
    value = namespacesSettingValue(names.length === 1 && names[0] === selected ? [] : names, all);
  }
  if (value === undefined) return;
  const target =
    vscode.workspace.workspaceFolders !== undefined
      ? vscode.ConfigurationTarget.Workspace
      : vscode.ConfigurationTarget.Global;
  await vscode.workspace
    .getConfiguration('queueSplit')
    .update('namespaces', value.length > 0 ? value : undefined, target);
  services.log.info(
    `queueSplit.namespaces is now ${value.length > 0 ? JSON.stringify(value) : 'unset (the selected namespace only)'}`,
  );
}

/** RBAC refuses listing namespaces: the names typed, comma-separated. */
async function typed(context: string, selected: string, chosen: string[]): Promise<string[] | undefined> {
  const text = await vscode.window.showInputBox({
    title: vscode.l10n.t('Queue Split: namespaces to show in {0}', context),
    prompt: vscode.l10n.t(
      'Your credentials may not list the namespaces of {0}, so type their names, separated by commas ({1} for every namespace you can list, {2} is always shown).',
      context,
      ALL_NAMESPACES,
      selected,
    ),
    value: chosen.join(', '),
    ignoreFocusOut: true,
    validateInput: (v) => {
      const parsed = parseTypedNamespaces(v);
      return 'bad' in parsed
        ? vscode.l10n.t('"{0}" is not a namespace name: lowercase letters, digits and "-" only.', parsed.bad)
        : undefined;
    },
  });
  if (text === undefined) return undefined;
  const parsed = parseTypedNamespaces(text);
  if ('bad' in parsed) return undefined;
  return namespacesSettingValue(
    parsed.names.filter((n) => n !== ALL_NAMESPACES),
    parsed.names.includes(ALL_NAMESPACES),
  );
}
