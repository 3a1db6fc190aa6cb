// The refusal of "Apply" in words a developer acts on: which right is missing (the developer
// role reads workloads, it never edits them), how to check it, what to ask for, and the way
// around it. Pure; extension/kube/cluster.ts raises it on a 403.
import * as l10n from '@vscode/l10n';
import { QUEUE_CONFIG_ANNOTATION } from '../../../core/queueConfig/schema';
import { shellQuote } from './render';

export interface AnnotateTarget {
  kind: 'Deployment' | 'StatefulSet';
  name: string;
  namespace: string;
  context: string;
}

export const resourceOfKind = (kind: AnnotateTarget['kind']) =>
  kind === 'Deployment' ? 'deployments.apps' : 'statefulsets.apps';

export function annotateForbidden(target: AnnotateTarget): { message: string; suggestedAction: string } {
  const resource = resourceOfKind(target.kind);
  const ns = shellQuote(target.namespace);
  const role = 'queue-config-writer';
  return {
    message: l10n.t(
      'Your credentials (context "{0}") may not patch {1}/{2} in namespace {3}: writing the {4} annotation needs that right (the queuesplit-developer role only reads workloads).',
      target.context,
      resource,
      target.name,
      target.namespace,
      QUEUE_CONFIG_ANNOTATION,
    ),
    suggestedAction: l10n.t(
      'Use "Copy as Patch" and have it applied by whoever manages the {0} (its GitOps repository, or `kubectl patch`), or ask your cluster admin for the right: `kubectl create role {1} -n {2} --verb=get,patch --resource={3}` and `kubectl create rolebinding {4} -n {5} --role={6} --user=<you>`. Check it with `kubectl auth can-i patch {7}/{8} -n {9}`.',
      target.kind,
      role,
      ns,
      resource,
      role,
      ns,
      role,
      resource,
      shellQuote(target.name),
      ns,
    ),
  };
}
