// QueueSplit objects as the controller uses them: listed across namespaces, validated against
// the one schema in core/, their status written through the status subresource, and a
// finalizer that keeps a deleted split visible (Draining) until its route is drained.
import { CustomObjectsApi, type KubeConfig } from '@kubernetes/client-node';
import {
  QUEUE_SPLIT_GROUP,
  QUEUE_SPLIT_PLURAL,
  QUEUE_SPLIT_VERSION,
  queueSplitSpecSchema,
  type QueueSplit,
  type QueueSplitStatus,
} from '../../core/crd/queueSplitSchema';
import { isNotFound, mergePatch } from '../kube/client';

export const SPLIT_FINALIZER = 'queuesplit.dev/drain';
const api = { group: QUEUE_SPLIT_GROUP, version: QUEUE_SPLIT_VERSION, plural: QUEUE_SPLIT_PLURAL };

export class SplitObjects {
  private readonly custom: CustomObjectsApi;

  constructor(kc: KubeConfig) {
    this.custom = kc.makeApiClient(CustomObjectsApi);
  }

  /** Every QueueSplit; objects whose spec does not parse are returned separately to be rejected. */
  async list(): Promise<{ valid: QueueSplit[]; invalid: { split: QueueSplit; problem: string }[] }> {
    const list = (await this.custom.listClusterCustomObject(api)) as { items: QueueSplit[] };
    const valid: QueueSplit[] = [];
    const invalid: { split: QueueSplit; problem: string }[] = [];
    for (const item of list.items) {
      const parsed = queueSplitSpecSchema.safeParse(item.spec);
      if (parsed.success) valid.push({ ...item, spec: parsed.data });
      else
        invalid.push({
          split: item,
          problem: parsed.error.issues.map((i) => `spec.${i.path.join('.')}: ${i.message}`).join('; '),
        });
    }
    return { valid, invalid };
  }

  async writeStatus(split: QueueSplit, status: QueueSplitStatus): Promise<void> {
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
