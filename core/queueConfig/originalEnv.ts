// While a workload is split, the controller points its consumer env at the application shadow
// and records the original literal values on the workload itself; a setting in a mounted file is
// pointed there by a configMap volume that names a copy of its ConfigMap, the original's name
// recorded the same way. Everything that reads the declaration (controller, extension, sidecar)
// must resolve it against those originals.
import type { WorkloadLike } from './podTemplate';

/** JSON map "<container>/<ENV>" → original literal value, on the workload while overridden. */
export const ORIGINAL_ENV_ANNOTATION = 'queuesplit.dev/original-env';
/** On the pod template: the desired generation whose overrides the pods carry. */
export const OVERRIDE_GENERATION_ANNOTATION = 'queuesplit.dev/override-generation';

/** JSON map "<volume>" → the ConfigMap it named, on the workload while the volume names a copy. */
export const ORIGINAL_CONFIG_ANNOTATION = 'queuesplit.dev/original-config';

export interface EnvOverride {
  container: string;
  name: string;
  value: string;
}

/** A JSON map the controller keeps in an annotation of the workload; {} when absent or unreadable. */
function annotationMap(workload: WorkloadLike, key: string): Record<string, string> {
  const text = workload.metadata?.annotations?.[key];
  if (!text) return {};
  try {
    return JSON.parse(text) as Record<string, string>;
  } catch {
    return {};
  }
}

export function originalEnv(workload: WorkloadLike): Record<string, string> {
  return annotationMap(workload, ORIGINAL_ENV_ANNOTATION);
}

export function originalEnvEntries(workload: WorkloadLike): EnvOverride[] {
  return Object.entries(originalEnv(workload)).map(([key, value]) => {
    const slash = key.indexOf('/');
    return { container: key.slice(0, slash), name: key.slice(slash + 1), value };
  });
}

/** Sets literal env values in place (on a copy the caller owns). */
export function applyEnv(workload: WorkloadLike, values: readonly EnvOverride[]): void {
  for (const v of values) {
    const container = workload.spec?.template?.spec?.containers.find((c) => c.name === v.container);
    // The template types are read-only for readers; this function is given a mutable copy.
    const entry = container?.env?.find((e) => e.name === v.name) as { value?: string } | undefined;
    if (entry) entry.value = v.value;
  }
}

export function originalConfig(workload: WorkloadLike): Record<string, string> {
  return annotationMap(workload, ORIGINAL_CONFIG_ANNOTATION);
}

/** Points configMap volumes (volume → ConfigMap) in place (on a copy the caller owns). */
export function applyConfigVolumes(workload: WorkloadLike, volumes: Readonly<Record<string, string>>): void {
  for (const volume of workload.spec?.template?.spec?.volumes ?? []) {
    const name = volumes[volume.name];
    // The template types are read-only for readers; this function is given a mutable copy.
    if (name !== undefined && volume.configMap) (volume.configMap as { name?: string }).name = name;
  }
}

/** The workload as it was before any override: what declarations must be resolved against. */
export function withOriginalEnv<T extends WorkloadLike>(workload: T): T {
  const copy = structuredClone(workload);
  applyEnv(copy, originalEnvEntries(copy));
  applyConfigVolumes(copy, originalConfig(copy));
  return copy;
}
