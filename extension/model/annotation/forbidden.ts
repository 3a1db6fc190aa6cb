// The refusal of "Apply" in words a developer acts on: which right is missing (the developer
// role reads workloads, it never edits them), how to check it, what to ask for, and the way
// around it. Pure; extension/kube/cluster.ts raises it on a 403.
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
    message: `Your credentials (context "${target.context}") may not patch ${resource}/${target.name} in namespace ${target.namespace}: writing the ${QUEUE_CONFIG_ANNOTATION} annotation needs that right (the queuesplit-developer role only reads workloads).`,
    suggestedAction: `Use "Copy as Patch" and have it applied by whoever manages the ${target.kind} (its GitOps repository, or \`kubectl patch\`), or ask your cluster admin for the right: \`kubectl create role ${role} -n ${ns} --verb=get,patch --resource=${resource}\` and \`kubectl create rolebinding ${role} -n ${ns} --role=${role} --user=<you>\`. Check it with \`kubectl auth can-i patch ${resource}/${shellQuote(target.name)} -n ${ns}\`.`,
  };
}
