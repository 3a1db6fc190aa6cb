// Both validation stages for one workload object, as the controller and the extension see it:
// refuse unsupported kinds, read the annotation, parse it, and resolve it against the template.
// Annotation errors keep paths relative to the annotation (`queues[1].kafka.groupEnv`).
import { joinPath } from '../fieldPath';
import { fail, fieldError, guarded, ok, type Result } from '../result';
import { parseQueueConfig } from './parseQueueConfig';
import type { WorkloadLike } from './podTemplate';
import { resolveQueues, type ResolvedQueue } from './resolveQueues';
import { configMapVolumeNames, type ConfigMapLookup } from './fileResolution';
import { declaredBlock, QUEUE_CONFIG_ANNOTATION } from './schema';

export const SUPPORTED_WORKLOAD_KINDS = ['Deployment', 'StatefulSet'] as const;
export type WorkloadKind = (typeof SUPPORTED_WORKLOAD_KINDS)[number];

export interface ResolvedWorkload {
  kind: WorkloadKind;
  namespace: string;
  name: string;
  uid: string;
  queues: ResolvedQueue[];
}

const ANNOTATION_PATH = joinPath('metadata.annotations', QUEUE_CONFIG_ANNOTATION);

/** `configMaps`: those configMapsToRead() names, as the caller read them (settings in mounted files). */
export function resolveWorkload(
  workload: WorkloadLike,
  configMaps?: ConfigMapLookup,
): Result<ResolvedWorkload> {
  return guarded('', () => resolve(workload, configMaps));
}

/**
 * The ConfigMaps a caller must read before resolving `workload`: those of its configMap volumes,
 * when its declaration names a setting in a mounted file; none otherwise (a caller without
 * access to ConfigMaps resolves env-only declarations as before).
 */
export function configMapsToRead(workload: WorkloadLike): string[] {
  const config = parseQueueConfig(workload.metadata?.annotations?.[QUEUE_CONFIG_ANNOTATION]);
  if (!config.ok) return [];
  const usesFiles = config.value.queues.some((q) => {
    const { block } = declaredBlock(q);
    return Object.entries(block).some(([field, value]) => field.endsWith('File') && value !== undefined);
  });
  return usesFiles ? configMapVolumeNames(workload.spec?.template) : [];
}

function resolve(workload: WorkloadLike, configMaps: ConfigMapLookup | undefined): Result<ResolvedWorkload> {
  const kind = workload.kind;
  if (kind !== 'Deployment' && kind !== 'StatefulSet') {
    return fail([
      fieldError(
        'kind',
        `is ${kind === undefined ? 'missing' : `"${kind}"`}; Queue Split splits Deployments and StatefulSets only.`,
        'Annotate the Deployment or StatefulSet that owns the consumer pods.',
      ),
    ]);
  }
  const meta = workload.metadata ?? {};
  const annotation = meta.annotations?.[QUEUE_CONFIG_ANNOTATION];
  if (annotation === undefined) {
    return fail([
      fieldError(
        ANNOTATION_PATH,
        'is missing: the workload declares no queues.',
        `Add the ${QUEUE_CONFIG_ANNOTATION} annotation to the ${kind} (see the queue-config JSON Schema).`,
      ),
    ]);
  }
  const config = parseQueueConfig(annotation);
  if (!config.ok) return config;
  const queues = resolveQueues(config.value, workload.spec?.template, configMaps);
  if (!queues.ok) return queues;
  return ok({
    kind,
    namespace: meta.namespace ?? 'default',
    name: meta.name ?? '',
    uid: meta.uid ?? '',
    queues: queues.value,
  });
}
