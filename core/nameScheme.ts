// The naming scheme of every resource a split creates (docs/design.md §7): bounded,
// deterministic, and derived through a hash of install id, workload UID, logical queue,
// activation epoch and route id — never from a user's topic or queue name — so cleanup can only
// ever touch what a split made. Each provider names its broker resources with it
// (core/providers/<provider>/names.ts); core/names.ts names the Kubernetes objects.
//
// Shape: `qs-<role>-<readable>-<hash>`, lowercase [a-z0-9-], at most 63 characters. That one
// shape satisfies the strictest consumer (a DNS-1123 label / label value) and therefore also
// Kafka topics and groups (≤ 249, [a-zA-Z0-9._-]) and RabbitMQ queues (≤ 255 bytes).
import { digest } from './hash';

/** Bumped if the scheme changes, so old and new names can never collide. */
export const NAME_SCHEME = 'names-v1';
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

/** `qs-<role>-<readable>-<hash of the scheme, the role and the inputs>`. */
export function boundedName(role: string, readable: string, hashInputs: readonly string[]): string {
  const middle = readablePart(readable);
  const hash = digest([NAME_SCHEME, role, ...hashInputs], HASH_LENGTH);
  return middle === '' ? `qs-${role}-${hash}` : `qs-${role}-${middle}-${hash}`;
}

/** The hash inputs of a queue's resources in one activation epoch. */
export function queueInputs(id: QueueIdentity): string[] {
  return [id.installId, id.workloadUid, id.queue, String(id.epoch)];
}

/** The hash inputs of a route's resources on one queue. */
export function routeInputs(id: RouteIdentity): string[] {
  return [...queueInputs(id), id.routeId];
}
