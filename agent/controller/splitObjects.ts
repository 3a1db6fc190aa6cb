// QueueSplit objects as the controller uses them: listed across namespaces, validated against
// the one schema in core/, their status written through the status subresource, and a
// finalizer that keeps a deleted split visible (Draining) until its route is drained.
import { CustomObjectsApi, type KubeConfig } from '@kubernetes/client-node';
import {
  QUEUE_SPLIT_GROUP,
  QUEUE_SPLIT_PLURAL,
  QUEUE_SPLIT_VERSION,
  type QueueSplit,
  type QueueSplitStatus,
} from '../../core/crd/queueSplitSchema';
import { filterSpecFields, validateQueueSplitSpec } from '../../core/crd/validateQueueSplit';
import { formatFieldError } from '../../core/result';
import { isNotFound, mergePatch } from '../kube/client';
import { keepTransitionTimes } from './splitStatus';

export const SPLIT_FINALIZER = 'queuesplit.dev/drain';
const api = { group: QUEUE_SPLIT_GROUP, version: QUEUE_SPLIT_VERSION, plural: QUEUE_SPLIT_PLURAL };

export class SplitObjects {
  private readonly custom: CustomObjectsApi;

  /** `namespaces`: the watched namespaces of a namespaced install; undefined: all of them. */
  constructor(
    kc: KubeConfig,
    private readonly namespaces?: readonly string[],
  ) {
    this.custom = kc.makeApiClient(CustomObjectsApi);
  }

  /** Callers write only a status that differs from the split's (sameStatus); a condition that did
   * not transition keeps its time. */
  async writeStatus(split: QueueSplit, next: QueueSplitStatus): Promise<void> {
    const status = keepTransitionTimes(split.status, next);
    try {
      await this.custom.patchNamespacedCustomObjectStatus(
        { ...api, namespace: split.metadata.namespace!, name: split.metadata.name, body: { status } },
        mergePatch,
      );
      split.status = status;
    } catch (err) {
      if (!isNotFound(err)) throw err;
    }
  }

  async addFinalizer(split: QueueSplit): Promise<void> {
    if (split.metadata.deletionTimestamp || split.metadata.finalizers?.includes(SPLIT_FINALIZER)) return;
    const finalizers = [...(split.metadata.finalizers ?? []), SPLIT_FINALIZER];
    await this.patchMeta(split, { finalizers, resourceVersion: split.metadata.resourceVersion });
    split.metadata.finalizers = finalizers;
  }

  async removeFinalizer(split: QueueSplit): Promise<void> {
    if (!split.metadata.finalizers?.includes(SPLIT_FINALIZER)) return;
    const finalizers = split.metadata.finalizers.filter((f) => f !== SPLIT_FINALIZER);
    await this.patchMeta(split, { finalizers, resourceVersion: split.metadata.resourceVersion });
    split.metadata.finalizers = finalizers;
  }

  private async patchMeta(split: QueueSplit, metadata: Record<string, unknown>): Promise<void> {
    try {
      await this.custom.patchNamespacedCustomObject(
        { ...api, namespace: split.metadata.namespace!, name: split.metadata.name, body: { metadata } },
        mergePatch,
      );
    } catch (err) {
      // A conflict means the object changed since this pass read it; the next pass retries.
      if (!isNotFound(err) && (err as { code?: number }).code !== 409) throw err;
    }
  }
}

export interface ClassifiedSplits {
  valid: QueueSplit[];
  /** Objects the full validator refuses, with every problem as `path: problem Fix: fix`. */
  invalid: { split: QueueSplit; problem: string }[];
  /** The API server does not serve QueueSplits (the CRD is not installed). */
  apiMissing?: true;
}

/**
 * Every object goes through validateQueueSplitSpec, not just the zod schema: zod drops a
 * "__proto__" filter key (widening the filter to every message) and cannot check key bytes or
 * the filter's total size. A refused object is reported on its status, never silently skipped.
 */
export function classifySplits(items: readonly QueueSplit[]): ClassifiedSplits {
  const result: ClassifiedSplits = { valid: [], invalid: [] };
  for (const item of items) {
    const parsed = validateQueueSplitSpec(item.spec);
    if (parsed.ok) {
      const { filter, ...rest } = parsed.value;
      result.valid.push({ ...item, spec: { ...rest, ...filterSpecFields(filter) } });
    } else
      result.invalid.push({
        split: item,
        problem: parsed.errors.map(formatFieldError).join(' | '),
      });
  }
  return result;
}
