// Names of the Kubernetes objects a split creates, and of the QueueSplit itself, in the scheme of
// core/nameScheme.ts (which every provider names its broker resources with, in its own module:
// core/providers/<provider>/names.ts).
import { digest } from './hash';
import { boundedName, NAME_SCHEME, readablePart, type WorkloadIdentity } from './nameScheme';

export { MAX_NAME_LENGTH, type RouteIdentity } from './nameScheme';

export interface WorkloadObjectIdentity extends WorkloadIdentity {
  /** Only for readability: the hash comes from the UID. */
  workloadName: string;
}

export interface KubernetesObjectNames {
  /** The per-workload queue-agent Deployment. */
  agentDeployment: string;
  /** ConfigMap with the controller's desired state for the agent. */
  stateConfigMap: string;
  /** ConfigMap the agent writes its observed state to. */
  agentStatusConfigMap: string;
  /** ConfigMap that outlives a handback listing broker resources kept because they were not
   * proven empty (they may hold messages). */
  cleanupConfigMap: string;
  /** ConfigMap in the controller's namespace holding the digest of the state document
   * (agent/controller/stateSeal.ts): tenants cannot write there. */
  stateSeal: string;
  /** Lease held by the controller for the workload. */
  lease: string;
  /** ServiceAccount of the queue-agent. */
  agentServiceAccount: string;
}

export function kubernetesObjectNames(id: WorkloadObjectIdentity): KubernetesObjectNames {
  const inputs = [id.installId, id.workloadUid];
  return {
    agentDeployment: boundedName('agent', id.workloadName, inputs),
    stateConfigMap: boundedName('state', id.workloadName, inputs),
    agentStatusConfigMap: boundedName('status', id.workloadName, inputs),
    cleanupConfigMap: boundedName('cleanup', id.workloadName, inputs),
    stateSeal: boundedName('seal', id.workloadName, inputs),
    lease: boundedName('lease', id.workloadName, inputs),
    agentServiceAccount: boundedName('sa', id.workloadName, inputs),
  };
}

/** Name of the QueueSplit object the extension creates for one developer's split. */
export function queueSplitName(input: { owner: string; workloadName: string; routeId: string }): string {
  const readable = `${readablePart(input.owner, 16)}-${readablePart(input.workloadName, 16)}`;
  return boundedName('split', readable, [input.owner, input.workloadName, input.routeId]);
}

const LABEL_VALUE = /^(?:[A-Za-z0-9](?:[A-Za-z0-9._-]{0,61}[A-Za-z0-9])?)?$/;

/** Any text as a valid label value: unchanged when already valid, otherwise sanitised + hashed. */
export function labelValue(text: string): string {
  if (LABEL_VALUE.test(text)) return text;
  const readable = readablePart(text, 40);
  const hash = digest([NAME_SCHEME, 'label', text], 12);
  return readable === '' ? hash : `${readable}-${hash}`;
}

/** Route ids are random (chosen by the extension) and stable for the life of a split. */
export const ROUTE_ID_PATTERN = /^[a-z2-7]{16,32}$/;

/**
 * A route id from caller-supplied random bytes (keeps this module free of I/O): pass 16 bytes
 * from crypto.randomBytes for 80 random bits; fewer bytes give an id ROUTE_ID_PATTERN rejects.
 */
export function routeIdFromRandomBytes(bytes: Uint8Array): string {
  const alphabet = 'abcdefghijklmnopqrstuvwxyz234567';
  let id = '';
  for (const byte of bytes.slice(0, 16)) id += alphabet[byte & 31];
  return id;
}

/** The pod label whose value is the queue-agent Deployment's name: its selector, and its NetworkPolicy's. */
export const AGENT_POD_LABEL = 'queuesplit.dev/agent';
