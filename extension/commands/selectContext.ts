// Queue Split: Select Context/Namespace… — the kubeconfig context, then the namespace (a list
// when RBAC allows listing namespaces, else typed). Remembered for this workspace.
import * as vscode from 'vscode';
import type { Services } from '../services';
import { settings } from '../settings';

export async function selectContext(services: Services): Promise<void> {
  const kube = await services.cluster.kube();
  const contexts = kube.listContexts(settings.kubeconfig());
  if (contexts.length === 0) {
    services.notifier.error(
      'Your kubeconfig has no contexts.',
      "Add one (e.g. with your cloud provider's CLI), or point queueSplit.kubeconfig at another kubeconfig.",
    );
    return;
  }
  const current =
    (await services.cluster.selection()).context ??
    (settings.context() || contexts.find((c) => c.current)?.name);
  const pickedContext = await vscode.window.showQuickPick(
    contexts.map((c) => ({
      label: c.name,
      description: `${c.cluster}${c.namespace !== undefined ? ` · namespace ${c.namespace}` : ''}`,
      ...(c.name === current ? { detail: '$(check) selected' } : {}),
      value: c,
    })),
    {
      title: 'Queue Split: Kubernetes context',
      placeHolder: 'The cluster your workloads run in',
      ignoreFocusOut: true,
    },
  );
  if (pickedContext === undefined) return;
  const context = pickedContext.value.name;
  const api = new kube.ClusterApi(
    kube.connect(settings.kubeconfig(), { context }, { namespace: settings.namespace() }),
  );
  const fallback = api.target.namespace;
  let namespaces: string[] | undefined;
  try {
    namespaces = await api.listNamespaces();
  } catch (err) {
    services.log.warn(`cannot list namespaces: ${err instanceof Error ? err.message : String(err)}`);
  }
  let namespace: string | undefined;
  if (namespaces !== undefined && namespaces.length > 0) {
    const other = '$(edit) Another namespace…';
    const picked = await vscode.window.showQuickPick(
      [
        ...namespaces.map((n) => ({ label: n, ...(n === fallback ? { description: 'current' } : {}) })),
        { label: other },
      ],
      { title: `Queue Split: namespace in ${context}`, ignoreFocusOut: true },
    );
    if (picked === undefined) return;
    namespace = picked.label === other ? undefined : picked.label;
  }
  namespace ??= await vscode.window.showInputBox({
    title: `Queue Split: namespace in ${context}`,
    prompt: 'The namespace of the workloads you debug',
    value: fallback,
    ignoreFocusOut: true,
    validateInput: (v) => (/^[a-z0-9]([-a-z0-9]*[a-z0-9])?$/.test(v) ? undefined : 'Not a namespace name.'),
  });
  if (namespace === undefined) return;
  await services.cluster.select({ context, namespace });
  services.log.info(`selected context ${context}, namespace ${namespace}`);
}
