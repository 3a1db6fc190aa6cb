// What "Install Controller into Cluster…" will apply, in words for the confirmation dialog.
import * as l10n from '@vscode/l10n';

export interface ManifestLike {
  apiVersion: string;
  kind: string;
  metadata: { name: string; namespace?: string };
  spec?: unknown;
}

interface ContainerLike {
  image?: string;
}

function deploymentDetail(m: ManifestLike): string {
  const spec = m.spec as
    { replicas?: number; template?: { spec?: { containers?: ContainerLike[] } } } | undefined;
  const image = spec?.template?.spec?.containers?.[0]?.image;
  return `${image !== undefined ? `image ${image}` : ''}${spec?.replicas !== undefined ? `, ${spec.replicas} replica${spec.replicas === 1 ? '' : 's'}` : ''}`;
}

/** One line per object, in apply order: "CustomResourceDefinition queuesplits.queuesplit.dev". */
export function describeManifests(objects: readonly ManifestLike[]): string[] {
  return objects.map((m) => {
    const where = m.metadata.namespace !== undefined ? ` in namespace ${m.metadata.namespace}` : '';
    const detail = m.kind === 'Deployment' ? ` (${deploymentDetail(m)})` : '';
    return `${m.kind} ${m.metadata.name}${where}${detail}`;
  });
}

export function installConfirmation(
  context: string,
  server: string | undefined,
  objects: readonly ManifestLike[],
): string {
  return [
    server !== undefined
      ? l10n.t('Install the Queue Split controller into the cluster of context "{0}" ({1})?', context, server)
      : l10n.t('Install the Queue Split controller into the cluster of context "{0}"?', context),
    '',
    l10n.t('With your Kubernetes credentials (it needs cluster-admin rights), this creates or replaces:'),
    ...describeManifests(objects).map((line) => `• ${line}`),
    '',
    l10n.t(
      'The controller watches QueueSplit resources in every namespace and scales, patches and restores the workloads being split. It never reads Secrets, and an admission policy (queuesplit-controller-confinement) lets it create and change only its own qs-* objects, run only the agent image it is installed with, and change only the cutover fields of your workloads. Developers need the queuesplit-developer ClusterRole bound in their namespaces to create splits.',
    ),
  ].join('\n');
}
