// Whether a pod that carries the queue-agent's labels is the queue-agent (README "Trust
// boundaries"): anyone who may create pods in the namespace can copy the labels. The sidecar
// never sends it a secret anyway (it signs a challenge bound to the pod: core/sessionSecret.ts),
// but it also refuses to stream from a pod that is not run by the agent's Deployment: the pod
// must be controlled by a ReplicaSet of that Deployment (a forged controller reference to the
// real ReplicaSet makes that ReplicaSet delete a pod too many), and run its ServiceAccount and
// image. Only what the developer role may read is used (pods, deployments).
import type { V1Deployment, V1Pod } from '@kubernetes/client-node';
import { AGENT_POD_LABEL } from '../core/names';

/** Why `pod` is not a pod of the queue-agent Deployment `deployment` (undefined: it is). */
export function notTheAgent(pod: V1Pod, deployment: V1Deployment | undefined): string | undefined {
  const agent = pod.metadata?.labels?.[AGENT_POD_LABEL];
  if (!agent) return `it has no ${AGENT_POD_LABEL} label`;
  if (!deployment) return `no queue-agent Deployment ${agent} exists`;
  if (deployment.metadata?.labels?.['queuesplit.dev/component'] !== 'queue-agent')
    return `Deployment ${agent} is not a queue-agent`;
  const hash = pod.metadata?.labels?.['pod-template-hash'];
  const owner = pod.metadata?.ownerReferences?.find((o) => o.controller);
  if (!owner || owner.kind !== 'ReplicaSet' || !hash || owner.name !== `${agent}-${hash}`)
    return `it is not controlled by a ReplicaSet of Deployment ${agent}`;
  const template = deployment.spec?.template.spec;
  if ((pod.spec?.serviceAccountName ?? 'default') !== template?.serviceAccountName)
    return `it runs as ServiceAccount ${pod.spec?.serviceAccountName ?? 'default'}, not ${template?.serviceAccountName}`;
  if (pod.spec?.containers[0]?.image !== template?.containers[0]?.image)
    return `it runs image ${pod.spec?.containers[0]?.image}, not the queue-agent's`;
  return undefined;
}
