// The copies of ConfigMaps a split serves a workload (docs/design.md, "Queue names in mounted
// files"): a setting read from a mounted file is overridden by pointing its configMap volume at a
// copy of the ConfigMap with only that key's value changed. The copy is named qs-cfg-*, labelled
// as the controller's own (deploy/admissionPolicy.ts), owned by the workload (deleting the
// workload deletes it) and records a digest of the original's data, so a change to the original
// while split is seen as drift.
//
// Invariants:
//  1. A copy differs from its original in exactly the overridden values (configFile.ts rewrites
//     one value's text and nothing else).
//  2. A copy exists while a volume may name it: it is deleted only when the template names it no
//     more (prune after the volume points back).
//  3. The original is never written.
import { CoreV1Api, type KubeConfig, type V1ConfigMap } from '@kubernetes/client-node';
import { findSetting, rewriteSetting } from '../../core/queueConfig/configFile';
import type { FileSettingRef } from '../../core/queueConfig/settingRef';
import { digest } from '../../core/hash';
import { isConflict, isNotFound } from '../kube/client';

export const CONFIG_COPY_LABEL = 'queuesplit.dev/config-copy';
export const COPY_OF_ANNOTATION = 'queuesplit.dev/copy-of';
export const ORIGINAL_DIGEST_ANNOTATION = 'queuesplit.dev/original-digest';

/** A file setting of a container, and the value the split serves in it. */
export interface FileOverride {
  container: string;
  at: FileSettingRef;
  value: string;
}

export interface CopyOwner {
  apiVersion: string;
  kind: string;
  name: string;
  uid: string;
}

/** The copy's name: qs-cfg- (the controller's own, deploy/admissionPolicy.ts) and a digest of
 * the workload and volume, so each volume of each workload has one. */
export function copyName(workloadUid: string, volume: string): string {
  return `qs-cfg-${digest([workloadUid, volume], 20)}`;
}

/** A digest of a ConfigMap's data: what the copy was made from. */
export function dataDigest(cm: Pick<V1ConfigMap, 'data' | 'binaryData'>): string {
  const entries = (m: Record<string, string> | undefined) =>
    Object.entries(m ?? {})
      .sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0))
      .flatMap(([k, v]) => [k, v]);
  return digest(['data', ...entries(cm.data), 'binary', ...entries(cm.binaryData)], 32);
}

export class ConfigCopies {
  private readonly core: CoreV1Api;

  constructor(kc: KubeConfig) {
    this.core = kc.makeApiClient(CoreV1Api);
  }

  private async read(namespace: string, name: string): Promise<V1ConfigMap | undefined> {
    try {
      return await this.core.readNamespacedConfigMap({ name, namespace });
    } catch (err) {
      if (isNotFound(err)) return undefined;
      throw err;
    }
  }

  /** The copy `overrides` of one volume need: the original's data with their values set. */
  private async desired(namespace: string, overrides: readonly FileOverride[]): Promise<V1ConfigMap> {
    const original = overrides[0]!.at.configMap;
    const source = await this.read(namespace, original);
    if (!source) throw new Error(`ConfigMap ${namespace}/${original} is gone; the split cannot copy it`);
    const data = { ...source.data };
    for (const o of overrides) {
      const text = data[o.at.configMapKey];
      const found =
        text === undefined
          ? undefined
          : findSetting(text, o.at.format, o.at.key, `${o.at.path} (ConfigMap "${original}")`, '');
      if (!found?.ok)
        throw new Error(
          `${o.at.key} in ${o.at.path} (ConfigMap ${namespace}/${original}, key ${o.at.configMapKey}) cannot be set any more: ${found ? found.errors.map((e) => e.problem).join(' ') : 'the key is gone'}`,
        );
      data[o.at.configMapKey] = rewriteSetting(text!, found.value, o.value);
    }
    return {
      metadata: {
        annotations: { [COPY_OF_ANNOTATION]: original, [ORIGINAL_DIGEST_ANNOTATION]: dataDigest(source) },
      },
      data,
      ...(source.binaryData ? { binaryData: source.binaryData } : {}),
    };
  }

  /**
   * Makes or updates the copy for each volume `overrides` name; returns volume → copy name. A copy
   * is re-made from the original as it is now (an operator's retry after the original changed).
   */
  async ensure(
    namespace: string,
    owner: CopyOwner,
    overrides: readonly FileOverride[],
  ): Promise<Record<string, string>> {
    const byVolume = new Map<string, FileOverride[]>();
    for (const o of overrides) byVolume.set(o.at.volume, [...(byVolume.get(o.at.volume) ?? []), o]);
    const copies: Record<string, string> = {};
    for (const [volume, group] of byVolume) {
      const name = copyName(owner.uid, volume);
      const want = await this.desired(namespace, group);
      const body: V1ConfigMap = {
        ...want,
        metadata: {
          ...want.metadata,
          name,
          namespace,
          labels: { 'queuesplit.dev/workload': owner.name, [CONFIG_COPY_LABEL]: 'true' },
          ownerReferences: [{ ...owner, controller: false, blockOwnerDeletion: false }],
        },
      };
      const current = await this.read(namespace, name);
      if (!current) {
        try {
          await this.core.createNamespacedConfigMap({ namespace, body });
        } catch (err) {
          if (!isConflict(err)) throw err;
          await this.core.replaceNamespacedConfigMap({ name, namespace, body });
        }
      } else if (!sameCopy(current, body)) {
        body.metadata!.resourceVersion = current.metadata?.resourceVersion;
        await this.core.replaceNamespacedConfigMap({ name, namespace, body });
      }
      copies[volume] = name;
    }
    return copies;
  }

  /** Deletes the workload's copies that no volume of its template names (invariant 2). */
  async prune(namespace: string, workloadName: string, keep: readonly string[]): Promise<void> {
    const list = await this.core.listNamespacedConfigMap({
      namespace,
      labelSelector: `${CONFIG_COPY_LABEL}=true,queuesplit.dev/workload=${workloadName}`,
    });
    for (const cm of list.items) {
      const name = cm.metadata?.name;
      if (!name || keep.includes(name)) continue;
      try {
        await this.core.deleteNamespacedConfigMap({ name, namespace });
      } catch (err) {
        if (!isNotFound(err)) throw err;
      }
    }
  }

  /**
   * What no longer holds of the copies `overrides` need ("<path> <key>" and why): the copy gone
   * or edited, or its original changed since it was made (the app reads an old copy of its
   * configuration). Reported as drift (docs/design.md, "Drift").
   */
  async drift(namespace: string, owner: CopyOwner, overrides: readonly FileOverride[]): Promise<string[]> {
    const out: string[] = [];
    const byVolume = new Map<string, FileOverride[]>();
    for (const o of overrides) byVolume.set(o.at.volume, [...(byVolume.get(o.at.volume) ?? []), o]);
    for (const [volume, group] of byVolume) {
      const what = group.map((o) => `${o.at.key} in ${o.at.path}`).join(', ');
      const copy = await this.read(namespace, copyName(owner.uid, volume));
      const original = await this.read(namespace, group[0]!.at.configMap);
      if (!copy) out.push(`${what}: the copy ConfigMap the app reads was deleted`);
      else if (!original) out.push(`${what}: ConfigMap ${group[0]!.at.configMap} was deleted`);
      else if (copy.metadata?.annotations?.[ORIGINAL_DIGEST_ANNOTATION] !== dataDigest(original))
        out.push(
          `${what}: ConfigMap ${group[0]!.at.configMap} was changed, and the app reads a copy of it as it was`,
        );
      else {
        for (const o of group) {
          const text = copy.data?.[o.at.configMapKey];
          const found = text === undefined ? undefined : findSetting(text, o.at.format, o.at.key, '', '');
          if (!found?.ok || found.value.value !== o.value)
            out.push(`${o.at.key} in ${o.at.path}: the copy was edited`);
        }
      }
    }
    return out;
  }
}

function sameCopy(current: V1ConfigMap, want: V1ConfigMap): boolean {
  return (
    JSON.stringify(current.data ?? {}) === JSON.stringify(want.data ?? {}) &&
    JSON.stringify(current.binaryData ?? {}) === JSON.stringify(want.binaryData ?? {}) &&
    current.metadata?.annotations?.[ORIGINAL_DIGEST_ANNOTATION] ===
      want.metadata?.annotations?.[ORIGINAL_DIGEST_ANNOTATION]
  );
}
