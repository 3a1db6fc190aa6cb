// What the controller does to a split workload (docs/design.md §6): read it, scale it with a
// resourceVersion precondition, point its consumer settings at the application shadow (env
// values, or a configMap volume at a copy of its ConfigMap: configCopies.ts; the originals
// recorded on the workload itself) and back, guard it with a finalizer, and check its
// pods: gone (quiesced) or rolled out with the wanted override generation.
import {
  AppsV1Api,
  AutoscalingV2Api,
  CoreV1Api,
  type KubeConfig,
  type V1Deployment,
  type V1Pod,
  type V1StatefulSet,
  type V1PodDisruptionBudget,
  type V2HorizontalPodAutoscaler,
  PolicyV1Api,
} from '@kubernetes/client-node';
import {
  applyConfigVolumes,
  applyEnv,
  originalConfig,
  originalEnvEntries,
  ORIGINAL_CONFIG_ANNOTATION,
  ORIGINAL_ENV_ANNOTATION,
  OVERRIDE_GENERATION_ANNOTATION,
  type EnvOverride,
} from '../../core/queueConfig/originalEnv';
import type { SettingRef } from '../../core/queueConfig/settingRef';
import type { ConfigMapData, ConfigMapLookup } from '../../core/queueConfig/fileResolution';
import { configMapsToRead } from '../../core/queueConfig/resolveWorkload';
import { ConfigCopies, copyName, type CopyOwner, type FileOverride } from './configCopies';
import type { WorkloadLike } from '../../core/queueConfig/podTemplate';
import { consumerOverrides } from '../../core/queueConfig/consumerOverrides';
import type { ResolvedQueue } from '../../core/queueConfig/resolveQueues';
import { isConflict, isNotFound } from '../kube/client';
import { MIN_STABLE_SECONDS, msUntilStable, readyUnrestarted, stuckPod } from './podHealth';
import type { WorkloadCache } from './workloadCache';

export type Workload = V1Deployment | V1StatefulSet;
export type WorkloadKind = 'Deployment' | 'StatefulSet';

export const FINALIZER = 'queuesplit.dev/handback';
/** How many read → write attempts setOverrides makes when the workload moves between them. */
const OVERRIDE_ATTEMPTS = 3;

export class Workloads {
  private readonly apps: AppsV1Api;
  private readonly core: CoreV1Api;
  private readonly autoscaling: AutoscalingV2Api;
  private readonly policy: PolicyV1Api;
  private readonly copies: ConfigCopies;

  /** `cache`: the controller's workload cache, told of every version this class reads or writes. */
  constructor(
    kc: KubeConfig,
    private readonly cache?: WorkloadCache,
  ) {
    this.copies = new ConfigCopies(kc);
    this.apps = kc.makeApiClient(AppsV1Api);
    this.core = kc.makeApiClient(CoreV1Api);
    this.autoscaling = kc.makeApiClient(AutoscalingV2Api);
    this.policy = kc.makeApiClient(PolicyV1Api);
  }

  /** The workload as the API server has it now (a GET). */
  async read(kind: WorkloadKind, namespace: string, name: string): Promise<Workload | undefined> {
    try {
      const workload =
        kind === 'Deployment'
          ? await this.apps.readNamespacedDeployment({ name, namespace })
          : await this.apps.readNamespacedStatefulSet({ name, namespace });
      this.cache?.saw(kind, workload);
      return workload;
    } catch (err) {
      if (isNotFound(err)) return undefined;
      throw err;
    }
  }

  /**
   * The workload a pass starts from: the cache's copy when it is at least as new as what this
   * controller last wrote or read of it (workloadCache.ts), else a GET. Steps that must see the
   * latest (a scale, a rollout after our own write) read again with `read`.
   */
  async forPass(kind: WorkloadKind, namespace: string, name: string): Promise<Workload | undefined> {
    return this.cache?.get(kind, namespace, name) ?? this.read(kind, namespace, name);
  }

  /** Another writer of the workload (its status annotation) tells the cache what it wrote. */
  wrote(kind: WorkloadKind, workload: Workload): void {
    this.cache?.saw(kind, workload);
  }

  private async replace(kind: WorkloadKind, workload: Workload): Promise<Workload> {
    const name = workload.metadata!.name!;
    const namespace = workload.metadata!.namespace!;
    const written =
      kind === 'Deployment'
        ? await this.apps.replaceNamespacedDeployment({ name, namespace, body: workload as V1Deployment })
        : await this.apps.replaceNamespacedStatefulSet({ name, namespace, body: workload as V1StatefulSet });
    this.cache?.saw(kind, written);
    return written;
  }

  /** The ConfigMaps resolving `declared` (the workload with its originals) reads: those of a
   * declaration with settings in mounted files (core/queueConfig/fileResolution.ts). */
  async configMaps(declared: Workload): Promise<ConfigMapLookup> {
    const namespace = declared.metadata!.namespace!;
    const out = new Map<string, ConfigMapData | undefined>();
    for (const name of configMapsToRead(declared as WorkloadLike)) {
      try {
        const cm = await this.core.readNamespacedConfigMap({ name, namespace });
        out.set(name, {
          ...(cm.data ? { data: cm.data } : {}),
          ...(cm.binaryData ? { binaryData: cm.binaryData } : {}),
        });
      } catch (err) {
        if (!isNotFound(err)) throw err;
        out.set(name, undefined);
      }
    }
    return out;
  }

  /** The HorizontalPodAutoscalers whose target is this workload (docs/design.md, "Autoscaled workloads"). */
  async autoscalersOf(
    kind: WorkloadKind,
    namespace: string,
    name: string,
  ): Promise<V2HorizontalPodAutoscaler[]> {
    const hpas = await this.autoscaling.listNamespacedHorizontalPodAutoscaler({ namespace });
    return hpas.items.filter(
      (h) => h.spec?.scaleTargetRef.kind === kind && h.spec.scaleTargetRef.name === name,
    );
  }

  /** The namespace's PodDisruptionBudgets (docs/design.md, "Disruption budgets"). */
  async disruptionBudgets(namespace: string): Promise<V1PodDisruptionBudget[]> {
    return (await this.policy.listNamespacedPodDisruptionBudget({ namespace })).items;
  }

  /** Scales through the scale subresource; a resourceVersion makes it fail (409) if anyone changed the workload. */
  /**
   * `from`: scale only a workload still at that count (the redirect's scale-up from the quiesce's
   * 0), written with the resourceVersion of that read. A workload someone else scaled since the
   * phase's last check is left as they set it, for that check to name on the next pass
   * (splitEvents.ts manualScale): an unconditional write overwrote a person's `kubectl scale`
   * landing between the check and the scale-up, and the split went Active at our count.
   */
  async scale(
    kind: WorkloadKind,
    namespace: string,
    name: string,
    replicas: number,
    resourceVersion?: string,
    from?: number,
  ) {
    for (let attempt = 0; ; attempt++) {
      const workload = await this.read(kind, namespace, name);
      if (workload?.metadata?.deletionTimestamp && kind === 'Deployment') {
        // A Deployment being deleted is no longer reconciled by its controller: scaling it does
        // nothing. Stop its pods through its ReplicaSets so the handback can be proven.
        if (replicas === 0) await this.scaleReplicaSetsToZero(workload);
        return;
      }
      let precondition = resourceVersion;
      if (from !== undefined) {
        const now = workload?.spec?.replicas ?? 1;
        // Done already (a step retried), or scaled by someone else: left as it is.
        if (now === replicas || now !== from) return;
        precondition = workload?.metadata?.resourceVersion;
      }
      const body = { metadata: { name, namespace, resourceVersion: precondition }, spec: { replicas } };
      try {
        // The scale subresource answers with its workload's resourceVersion.
        const scaled =
          kind === 'Deployment'
            ? await this.apps.replaceNamespacedDeploymentScale({ name, namespace, body })
            : await this.apps.replaceNamespacedStatefulSetScale({ name, namespace, body });
        this.cache?.saw(kind, { metadata: { ...scaled.metadata, namespace, name } });
        return;
      } catch (err) {
        // With `from`, read again: a status write moved the resourceVersion, or someone scaled.
        if (isConflict(err) && from !== undefined && attempt < 3) continue;
        // A step retried after a restart carries the resourceVersion it first saw; our own
        // earlier scale (or the workload's status updates) moved it on. If the replicas already
        // are what we want, the step is done; anything else is a concurrent change.
        if (!isConflict(err) || (await this.read(kind, namespace, name))?.spec?.replicas !== replicas)
          throw err;
        return;
      }
    }
  }

  private async scaleReplicaSetsToZero(workload: Workload): Promise<void> {
    const namespace = workload.metadata!.namespace!;
    const sets = await this.apps.listNamespacedReplicaSet({ namespace });
    for (const rs of sets.items) {
      if (!rs.metadata?.ownerReferences?.some((o) => o.uid === workload.metadata?.uid)) continue;
      if ((rs.spec?.replicas ?? 0) === 0) continue;
      const name = rs.metadata.name!;
      await this.apps.replaceNamespacedReplicaSetScale({
        name,
        namespace,
        body: { metadata: { name, namespace }, spec: { replicas: 0 } },
      });
    }
  }

  async addFinalizer(kind: WorkloadKind, workload: Workload): Promise<void> {
    if (workload.metadata?.finalizers?.includes(FINALIZER)) return;
    workload.metadata!.finalizers = [...(workload.metadata?.finalizers ?? []), FINALIZER];
    await this.replace(kind, workload);
  }

  async removeAnnotation(kind: WorkloadKind, namespace: string, name: string, key: string): Promise<void> {
    const workload = await this.read(kind, namespace, name);
    if (workload?.metadata?.annotations?.[key] === undefined) return;
    workload.metadata.annotations = Object.fromEntries(
      Object.entries(workload.metadata.annotations).filter(([k]) => k !== key),
    );
    await this.replace(kind, workload);
  }

  async removeFinalizer(kind: WorkloadKind, namespace: string, name: string): Promise<void> {
    const workload = await this.read(kind, namespace, name);
    if (!workload?.metadata?.finalizers?.includes(FINALIZER)) return;
    workload.metadata.finalizers = workload.metadata.finalizers.filter((f) => f !== FINALIZER);
    await this.replace(kind, workload);
  }

  /**
   * Sets `overrides` (and only them) on the pod template, recording each original literal (and
   * each volume's original ConfigMap) the first time it is replaced, and marks the template with
   * `generation`. Copies no volume names any more are deleted after the template is written.
   */
  async setOverrides(
    kind: WorkloadKind,
    namespace: string,
    name: string,
    settings: SettingOverride[],
    generation: number,
  ): Promise<void> {
    // A 409 here is most often the workload's own controller writing its status between our read
    // and our write (after the quiesce scale, during a rollout): read again and write again. Each
    // attempt applies the overrides to the workload as it is then, so nobody's change is undone;
    // one that keeps moving under us is a conflict the step reports.
    for (let attempt = 1; ; attempt++) {
      try {
        return await this.setOverridesOnce(kind, namespace, name, settings, generation);
      } catch (err) {
        if (!isConflict(err) || attempt >= OVERRIDE_ATTEMPTS) throw err;
      }
    }
  }

  private async setOverridesOnce(
    kind: WorkloadKind,
    namespace: string,
    name: string,
    settings: SettingOverride[],
    generation: number,
  ): Promise<void> {
    const workload = await this.read(kind, namespace, name);
    if (!workload) throw new Error(`${kind} ${namespace}/${name} is gone`);
    const overrides = envOverrides(settings);
    const files = fileOverrides(settings);
    // Restore everything first, so a queue leaving the override set gets its original back.
    applyEnv(workload as WorkloadLike, originalEnvEntries(workload as WorkloadLike));
    applyConfigVolumes(workload as WorkloadLike, originalConfig(workload as WorkloadLike));
    const copies =
      files.length > 0 ? await this.copies.ensure(namespace, ownerOf(kind, workload), files) : {};
    const nextConfig: Record<string, string> = {};
    for (const volume of Object.keys(copies)) {
      const original = workload.spec?.template.spec?.volumes?.find((v) => v.name === volume)?.configMap?.name;
      if (original === undefined) throw new Error(`volume ${volume} is no configMap volume any more`);
      nextConfig[volume] = original;
    }
    applyConfigVolumes(workload as WorkloadLike, copies);
    const nextOriginals: Record<string, string> = {};
    for (const o of overrides) {
      const current = findEnv(workload, o.container, o.name);
      if (current === undefined) throw new Error(`container ${o.container} has no literal env ${o.name}`);
      nextOriginals[`${o.container}/${o.name}`] = current;
    }
    applyEnv(workload as WorkloadLike, overrides);
    const meta = (workload.metadata ??= {});
    const template = (workload.spec!.template.metadata ??= {});
    meta.annotations =
      overrides.length > 0
        ? { ...meta.annotations, [ORIGINAL_ENV_ANNOTATION]: JSON.stringify(nextOriginals) }
        : without(meta.annotations, ORIGINAL_ENV_ANNOTATION);
    meta.annotations =
      files.length > 0
        ? { ...meta.annotations, [ORIGINAL_CONFIG_ANNOTATION]: JSON.stringify(nextConfig) }
        : without(meta.annotations, ORIGINAL_CONFIG_ANNOTATION);
    template.annotations =
      settings.length > 0
        ? { ...template.annotations, [OVERRIDE_GENERATION_ANNOTATION]: String(generation) }
        : without(template.annotations, OVERRIDE_GENERATION_ANNOTATION);
    await this.replace(kind, workload);
    await this.copies.prune(namespace, name, Object.values(copies));
  }

  /** Drift of the ConfigMap copies the file overrides need (configCopies.ts). */
  async fileDrift(
    kind: WorkloadKind,
    workload: Workload,
    settings: readonly SettingOverride[],
  ): Promise<string[]> {
    const files = fileOverrides(settings);
    if (files.length === 0) return [];
    return this.copies.drift(workload.metadata!.namespace!, ownerOf(kind, workload), files);
  }

  async pods(workload: Workload): Promise<V1Pod[]> {
    const labels = workload.spec?.selector.matchLabels ?? {};
    const labelSelector = Object.entries(labels)
      .map(([k, v]) => `${k}=${v}`)
      .join(',');
    const list = await this.core.listNamespacedPod({
      namespace: workload.metadata!.namespace!,
      labelSelector,
    });
    return list.items;
  }

  /**
   * Rolled out: the controller saw the latest spec, and exactly the wanted pods are ready and
   * have stayed up for a few seconds.
   * `failed` names a pod of the wanted template that will not become ready by waiting.
   */
  async rolledOut(
    kind: WorkloadKind,
    workload: Workload,
    overridden: boolean,
    consumed = false,
  ): Promise<{ ok: boolean; why: string; failed?: string; stableInMs?: number }> {
    const want = workload.spec?.replicas ?? 1;
    const status = workload.status;
    if ((status?.observedGeneration ?? 0) < (workload.metadata?.generation ?? 0)) {
      return { ok: false, why: 'the workload controller has not observed the latest spec yet' };
    }
    const wantedGeneration = workload.spec?.template.metadata?.annotations?.[OVERRIDE_GENERATION_ANNOTATION];
    const all = await this.pods(workload);
    const pods = all.filter((p) => !p.metadata?.deletionTimestamp);
    const terminating = all.length - pods.length;
    const wanted = pods.filter(
      (p) =>
        p.metadata?.annotations?.[OVERRIDE_GENERATION_ANNOTATION] ===
        (overridden ? wantedGeneration : undefined),
    );
    const stableSeconds = Math.max(MIN_STABLE_SECONDS, workload.spec?.minReadySeconds ?? 0);
    // `consumed`: every application shadow has a consumer (the queue-agent's live read). Then a
    // ready pod that never restarted needs no more of the window (podHealth.readyUnrestarted);
    // a workload's own minReadySeconds is always waited out.
    const early = consumed && stableSeconds === MIN_STABLE_SECONDS;
    const now = Date.now();
    const waits = wanted.map((p) =>
      early && readyUnrestarted(p) ? 0 : msUntilStable(p, now, stableSeconds),
    );
    const good = wanted.filter((_, i) => waits[i] === 0);
    // Every wanted pod is ready and only the clock is left: when the last one will count.
    const clockOnly = waits.length === want && waits.every((w) => w !== undefined);
    const stableInMs = clockOnly ? Math.max(...waits.map((w) => w ?? 0)) : undefined;
    const failed = stuckPod(wanted);
    const sts = kind === 'StatefulSet' ? (workload as V1StatefulSet) : undefined;
    if (sts && want > 0 && sts.status?.updateRevision !== sts.status?.currentRevision) {
      return { ok: false, why: 'StatefulSet update in progress', ...(failed ? { failed } : {}) };
    }
    const ok = good.length === want && pods.length === want && terminating === 0;
    return {
      ok,
      why: early
        ? `${good.length}/${want} pods with the wanted env ready, none restarted, a consumer on every application shadow; ${pods.length - good.length} other, ${terminating} terminating`
        : `${good.length}/${want} pods with the wanted env ready for ${stableSeconds}s, ${pods.length - good.length} other, ${terminating} terminating`,
      ...(failed && !ok ? { failed } : {}),
      ...(!ok && stableInMs ? { stableInMs } : {}),
    };
  }
}

function without(map: Record<string, string> | undefined, key: string): Record<string, string> {
  return Object.fromEntries(Object.entries(map ?? {}).filter(([k]) => k !== key));
}

function findEnv(workload: Workload, container: string, name: string): string | undefined {
  const c = workload.spec?.template.spec?.containers.find((x) => x.name === container);
  return c?.env?.find((e) => e.name === name && e.valueFrom === undefined)?.value;
}

/** A setting of a container and the value the split gives it. */
export interface SettingOverride {
  container: string;
  at: SettingRef;
  value: string;
}

function envOverrides(settings: readonly SettingOverride[]): EnvOverride[] {
  return settings.flatMap((s) =>
    s.at.kind === 'env' ? [{ container: s.container, name: s.at.name, value: s.value }] : [],
  );
}

function fileOverrides(settings: readonly SettingOverride[]): FileOverride[] {
  return settings.flatMap((s) =>
    s.at.kind === 'file' ? [{ container: s.container, at: s.at, value: s.value }] : [],
  );
}

function ownerOf(kind: WorkloadKind, workload: Workload): CopyOwner {
  return { apiVersion: 'apps/v1', kind, name: workload.metadata!.name!, uid: workload.metadata!.uid! };
}

/**
 * The overrides that are not in the workload's pod template any more ("<container>/<ENV>", or
 * "<container>/<volume>" for a volume that no longer names its copy): someone (a person, a
 * GitOps sync) changed them back while the split holds them.
 */
export function overrideDrift(workload: Workload, settings: readonly SettingOverride[]): string[] {
  const env = envOverrides(settings)
    .filter((o) => findEnv(workload, o.container, o.name) !== o.value)
    .map((o) => `${o.container}/${o.name}`);
  const uid = workload.metadata?.uid ?? '';
  const volumes = [...new Set(fileOverrides(settings).map((o) => `${o.container}/${o.at.volume}`))].filter(
    (key) => {
      const volume = key.slice(key.indexOf('/') + 1);
      const named = workload.spec?.template.spec?.volumes?.find((v) => v.name === volume)?.configMap?.name;
      return named !== copyName(uid, volume);
    },
  );
  return [...env, ...volumes.map((v) => `${v} (its ConfigMap)`)];
}

/** The overrides that point `queues`' consumers at their application shadows. */
export function overridesFor(
  queues: readonly ResolvedQueue[],
  names: (queue: ResolvedQueue) => { appShadow: string; appShadowGroup?: string },
): SettingOverride[] {
  return queues.flatMap((q) => {
    const n = names(q);
    return consumerOverrides(q, { source: n.appShadow, group: n.appShadowGroup }).map((s) => ({
      container: q.container,
      at: s.at,
      value: s.value,
    }));
  });
}
