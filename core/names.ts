// Names of every resource a split creates (docs/design.md §7): bounded, deterministic, and derived
// through a hash of install id, workload UID, logical queue, activation epoch and route id — never
// from a user's topic or queue name — so cleanup can only ever touch what a split made.
//
// Shape: `qs-<role>-<readable>-<hash>`, lowercase [a-z0-9-], at most 63 characters. That one
// shape satisfies the strictest consumer (a DNS-1123 label / label value) and therefore also
// Kafka topics and groups (≤ 249, [a-zA-Z0-9._-]) and RabbitMQ queues (≤ 255 bytes).
import { digest } from './hash';

/** Bumped if the scheme changes, so old and new names can never collide. */
const SCHEME = 'names-v1';
export const MAX_NAME_LENGTH = 63;
const READABLE_MAX = 24;
const HASH_LENGTH = 20; // 100 bits: collisions are not a practical concern

export interface WorkloadIdentity {
  /** Identifies the Queue Split installation (several may share a broker). */
  installId: string;
  /** metadata.uid of the Deployment/StatefulSet: survives renames, differs after re-creation. */
  workloadUid: string;
}

export interface QueueIdentity extends WorkloadIdentity {
  /** The logical queue name from the declaration. */
  queue: string;
  /** Incremented on every activation, so a new split never reuses an old split's shadows. */
  epoch: number;
}

export interface RouteIdentity extends QueueIdentity {
  routeId: string;
}

/** Lowercase [a-z0-9-] without leading, trailing or doubled '-', cut to `max` characters. */
export function readablePart(text: string, max = READABLE_MAX): string {
  return text
    .toLowerCase()
    .replace(/[^a-z0-9]+/g, '-')
    .slice(0, max)
    .replace(/^-+|-+$/g, '');
}

function boundedName(role: string, readable: string, hashInputs: readonly string[]): string {
  const middle = readablePart(readable);
  const hash = digest([SCHEME, role, ...hashInputs], HASH_LENGTH);
  return middle === '' ? `qs-${role}-${hash}` : `qs-${role}-${middle}-${hash}`;
}

function queueInputs(id: QueueIdentity): string[] {
  return [id.installId, id.workloadUid, id.queue, String(id.epoch)];
}

export interface KafkaQueueNames {
  /** Topic the application consumes while split. */
  appShadowTopic: string;
  /** Group the redirected application uses on its shadow. */
  appShadowGroup: string;
  /** Group the queue-agent's pump consumes the source with. */
  splitterGroup: string;
  /** Transactional id of the pump's producer: a replacement agent fences the old one. */
  transactionalId: string;
  /** group.instance.id of the pump: static membership fences a stale consumer. */
  splitterInstanceId: string;
}

export function kafkaQueueNames(id: QueueIdentity): KafkaQueueNames {
  const inputs = queueInputs(id);
  return {
    appShadowTopic: boundedName('kapp', id.queue, inputs),
    appShadowGroup: boundedName('kappg', id.queue, inputs),
    splitterGroup: boundedName('ksplit', id.queue, inputs),
    transactionalId: boundedName('ktx', id.queue, inputs),
    splitterInstanceId: boundedName('kinst', id.queue, inputs),
  };
}

export interface KafkaRouteNames {
  sessionTopic: string;
  /** Group a developer's local consumer (or the sidecar) uses on the session topic. */
  sessionGroup: string;
  /** Deterministic group that moves a detached route's unconsumed suffix to the app shadow. */
  drainGroup: string;
}

export function kafkaRouteNames(id: RouteIdentity): KafkaRouteNames {
  const inputs = [...queueInputs(id), id.routeId];
  return {
    sessionTopic: boundedName('kses', id.queue, inputs),
    sessionGroup: boundedName('ksesg', id.queue, inputs),
    drainGroup: boundedName('kdrain', id.queue, inputs),
  };
}

export interface RabbitQueueNames {
  appShadowQueue: string;
  /** Classic exclusive queue held on the engine's connection: fences a stale agent. */
  lockQueue: string;
}

export function rabbitQueueNames(id: QueueIdentity): RabbitQueueNames {
  const inputs = queueInputs(id);
  return {
    appShadowQueue: boundedName('rapp', id.queue, inputs),
    lockQueue: boundedName('rlock', id.queue, inputs),
  };
}

export interface RabbitRouteNames {
  sessionQueue: string;
}

export function rabbitRouteNames(id: RouteIdentity): RabbitRouteNames {
  return { sessionQueue: boundedName('rses', id.queue, [...queueInputs(id), id.routeId]) };
}

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
  const hash = digest([SCHEME, 'label', text], 12);
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
