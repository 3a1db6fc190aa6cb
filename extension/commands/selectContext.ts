// Queue Split: Select Context/Namespace… — the kubeconfig context, then the namespace (a list
// when RBAC allows listing namespaces, else typed). The choice is pinned for this workspace: it
// stays when the kubeconfig's current context changes, until "Unpin Context" (also offered at the
// top of the context pick while something is pinned).
import * as vscode from 'vscode';
import type { Services } from '../services';
import { settings } from '../settings';

export async function selectContext(services: Services): Promise<void> {
  const kube = await services.cluster.kube();
  const source = await services.cluster.kubeconfigFiles();
  const contexts = kube.listContexts(source);
  if (contexts.length === 0) {
    services.notifier.error(
      vscode.l10n.t('Your kubeconfig has no contexts.'),
      vscode.l10n.t(
        "Add one (e.g. with your cloud provider's CLI), or point queueSplit.kubeconfig at another kubeconfig.",
      ),
    );
    return;
  }
  const pinned = (await services.cluster.selection()).context;
  const kubeconfigCurrent = contexts.find((c) => c.current)?.name;
  const current = pinned ?? (settings.context() || kubeconfigCurrent);
  type Item = vscode.QuickPickItem & { value?: (typeof contexts)[number] };
  const items: Item[] = [
    ...(pinned !== undefined
      ? [
          {
            label: `$(pinned) ${vscode.l10n.t('Unpin: follow the kubeconfig')}`,
            description:
              kubeconfigCurrent !== undefined
                ? vscode.l10n.t('its current context is {0}', kubeconfigCurrent)
                : undefined,
            detail: vscode.l10n.t('{0} is pinned for this workspace', pinned),
          },
          { label: '', kind: vscode.QuickPickItemKind.Separator },
        ]
      : []),
    ...contexts.map((c) => ({
      label: c.name,
      description: [
        c.cluster,
        ...(c.namespace !== undefined ? [vscode.l10n.t('namespace {0}', c.namespace)] : []),
        ...(c.current ? [vscode.l10n.t("kubeconfig's current")] : []),
      ].join(' · '),
      ...(c.name === current
        ? {
            detail:
              pinned !== undefined
                ? `$(pinned) ${vscode.l10n.t('pinned')}`
                : `$(check) ${vscode.l10n.t('selected')}`,
          }
        : {}),
      value: c,
    })),
  ];
  const pickedContext = await vscode.window.showQuickPick(items, {
    title: vscode.l10n.t('Queue Split: Kubernetes context'),
    placeHolder: vscode.l10n.t('The cluster your workloads run in (the pick is pinned for this workspace)'),
    ignoreFocusOut: true,
  });
  if (pickedContext === undefined) return;
  if (pickedContext.value === undefined) {
    await unpinContext(services);
    return;
  }
  const context = pickedContext.value.name;
  const api = new kube.ClusterApi(kube.connect(source, { context }, { namespace: settings.namespace() }));
  const fallback = api.target.namespace;
  let namespaces: string[] | undefined;
  try {
    namespaces = await api.listNamespaces();
  } catch (err) {
    services.log.warn(`cannot list namespaces: ${err instanceof Error ? err.message : String(err)}`);
  }
  let namespace: string | undefined;
  if (namespaces !== undefined && namespaces.length > 0) {
    const other = `$(edit) ${vscode.l10n.t('Another namespace…')}`;
    const picked = await vscode.window.showQuickPick(
      [
        ...namespaces.map((n) => ({
          label: n,
          ...(n === fallback ? { description: vscode.l10n.t('current') } : {}),
        })),
        { label: other },
      ],
      { title: vscode.l10n.t('Queue Split: namespace in {0}', context), ignoreFocusOut: true },
    );
    if (picked === undefined) return;
    namespace = picked.label === other ? undefined : picked.label;
  }
  namespace ??= await vscode.window.showInputBox({
    title: vscode.l10n.t('Queue Split: namespace in {0}', context),
    prompt: vscode.l10n.t('The namespace of the workloads you debug'),
    value: fallback,
    ignoreFocusOut: true,
    validateInput: (v) =>
      /^[a-z0-9]([-a-z0-9]*[a-z0-9])?$/.test(v)
        ? undefined
        : vscode.l10n.t(
            'Not a namespace name: lowercase letters, digits and "-", starting and ending with a letter or digit.',
          ),
  });
  if (namespace === undefined) return;
  await services.cluster.select({ context, namespace });
  services.log.info(`selected context ${context}, namespace ${namespace}`);
}

/** Queue Split: Unpin Context — the kubeconfig's current context (and its namespace) again. */
export async function unpinContext(services: Services): Promise<void> {
  const pinned = await services.cluster.selection();
  if (pinned.context === undefined && pinned.namespace === undefined) {
    services.log.info('unpin: nothing is pinned');
    return;
  }
  await services.cluster.unpin();
  services.log.info(
    `unpinned context ${pinned.context ?? '(none)'}, namespace ${pinned.namespace ?? '(none)'}: following the kubeconfig's current context`,
  );
}
