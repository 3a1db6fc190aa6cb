// Creating and reading QueueSplit objects in tests, as a developer's tools would.
import { randomBytes } from 'node:crypto';
import { AppsV1Api, CustomObjectsApi, type KubeConfig } from '@kubernetes/client-node';
import { mergePatch } from '../../agent/kube/client';
import {
  QUEUE_SPLIT_API_VERSION,
  QUEUE_SPLIT_GROUP,
  QUEUE_SPLIT_KIND,
  QUEUE_SPLIT_PLURAL,
  QUEUE_SPLIT_VERSION,
  type QueueSplit,
} from '../../core/crd/queueSplitSchema';
import { queueSplitName, routeIdFromRandomBytes } from '../../core/names';
import { RETRY_ANNOTATION } from '../../core/state/operatorRetry';
import { pollUntil } from './poll';

import { filterSpecFields } from '../../core/crd/validateQueueSplit';
import type { RouteFilter } from '../../core/filter';

export const queueSplitApi = {
  group: QUEUE_SPLIT_GROUP,
  version: QUEUE_SPLIT_VERSION,
  plural: QUEUE_SPLIT_PLURAL,
};

export async function createSplit(
  kc: KubeConfig,
  namespace: string,
  spec: {
    workload: string;
    kind?: 'Deployment' | 'StatefulSet';
    queues: string[];
    /** Exact header values (spec.filter) or any filter (spec.match when it needs one). */
    filter: RouteFilter;
    owner: string;
    leaseSeconds?: number;
    /** Another split's route id, as someone copying it would (default: a fresh one). */
    routeId?: string;
    /** The route's session key (core/sessionSecret.ts): a stream for whoever holds its secret. */
    publicKey?: string;
  },
): Promise<QueueSplit> {
  const routeId = spec.routeId ?? routeIdFromRandomBytes(randomBytes(16));
  const body: QueueSplit = {
    apiVersion: QUEUE_SPLIT_API_VERSION,
    kind: QUEUE_SPLIT_KIND,
    metadata: {
      name: queueSplitName({ owner: spec.owner, workloadName: spec.workload, routeId }),
      namespace,
    },
    spec: {
      workload: { kind: spec.kind ?? 'Deployment', name: spec.workload },
      queues: spec.queues,
      ...filterSpecFields(spec.filter),
      owner: spec.owner,
      routeId,
      lease: {
        renewTime: new Date().toISOString().replace(/\.\d{3}Z$/, 'Z'),
        durationSeconds: spec.leaseSeconds ?? 300,
      },
      ...(spec.publicKey ? { session: { publicKey: spec.publicKey } } : {}),
    },
  };
  return (await kc
    .makeApiClient(CustomObjectsApi)
    .createNamespacedCustomObject({ ...queueSplitApi, namespace, body })) as QueueSplit;
}

/** The split, or undefined when there is none; `api` names another group (the sidecar suite's). */
export async function getSplit(
  kc: KubeConfig,
  namespace: string,
  name: string,
  api: typeof queueSplitApi = queueSplitApi,
): Promise<QueueSplit | undefined> {
  try {
    return (await kc
      .makeApiClient(CustomObjectsApi)
      .getNamespacedCustomObject({ ...api, namespace, name })) as QueueSplit;
  } catch (err) {
    if ((err as { code?: number }).code === 404) return undefined;
    throw err;
  }
}

export async function deleteSplit(kc: KubeConfig, namespace: string, name: string): Promise<void> {
  await kc
    .makeApiClient(CustomObjectsApi)
    .deleteNamespacedCustomObject({ ...queueSplitApi, namespace, name });
}

export function waitForSplitPhase(
  kc: KubeConfig,
  namespace: string,
  name: string,
  phase: string,
  timeoutMs = 120_000,
) {
  return pollUntil(
    `QueueSplit ${name} phase ${phase}`,
    async () => {
      const s = await getSplit(kc, namespace, name);
      return { phase: s?.status?.phase, message: s?.status?.conditions?.[0]?.message, split: s };
    },
    (s) => s.phase === phase,
    timeoutMs,
  ).then((s) => s.split!);
}

export function waitForSplitGone(kc: KubeConfig, namespace: string, name: string, timeoutMs = 120_000) {
  return pollUntil(
    `QueueSplit ${name} gone (drained)`,
    async () => {
      const s = await getSplit(kc, namespace, name);
      return s ? { phase: s.status?.phase, message: s.status?.conditions?.[0]?.message } : 'gone';
    },
    (s) => s === 'gone',
    timeoutMs,
  );
}

/** What a developer asks for: their split of `workload`, filtered on their x-queue-split-user. */
export interface UserSplit {
  workload: string;
  user: string;
  kind?: 'Deployment' | 'StatefulSet';
  /** Default: the one queue the fixture apps declare, `orders`. */
  queues?: string[];
  leaseSeconds?: number;
  publicKey?: string;
}

export function splitFor(kc: KubeConfig, namespace: string, s: UserSplit): Promise<QueueSplit> {
  return createSplit(kc, namespace, {
    workload: s.workload,
    kind: s.kind,
    queues: s.queues ?? ['orders'],
    filter: { 'x-queue-split-user': s.user },
    owner: s.user,
    leaseSeconds: s.leaseSeconds,
    publicKey: s.publicKey,
  });
}

/** `user`'s split of `workload`, once it is Active (its status then names the shadows). */
export async function activeSplit(
  kc: KubeConfig,
  namespace: string,
  s: UserSplit,
  timeoutMs = 120_000,
): Promise<QueueSplit> {
  const split = await splitFor(kc, namespace, s);
  return waitForSplitPhase(kc, namespace, split.metadata.name, 'Active', timeoutMs);
}

/** Deletes a split and waits until it is gone (its routes drained, its finalizer removed). */
export async function removeSplit(
  kc: KubeConfig,
  namespace: string,
  name: string,
  timeoutMs = 120_000,
): Promise<void> {
  await deleteSplit(kc, namespace, name);
  await waitForSplitGone(kc, namespace, name, timeoutMs);
}

/** The operator's retry of a Degraded split, as its status tells them (README "When a split is Degraded"). */
export async function operatorRetry(kc: KubeConfig, namespace: string, workload: string): Promise<void> {
  await kc
    .makeApiClient(AppsV1Api)
    .patchNamespacedDeployment(
      { name: workload, namespace, body: { metadata: { annotations: { [RETRY_ANNOTATION]: 'now' } } } },
      mergePatch,
    );
}
