// Both validation stages for one workload object, as the controller and the extension see it:
// refuse unsupported kinds, read the annotation, parse it, and resolve it against the template.
// Annotation errors keep paths relative to the annotation (`queues[1].kafka.groupEnv`).
import { joinPath } from '../fieldPath';
import { fail, fieldError, guarded, ok, type Result } from '../result';
import { parseQueueConfig } from './parseQueueConfig';
import type { WorkloadLike } from './podTemplate';
import { resolveQueues, type ResolvedQueue } from './resolveQueues';
import { QUEUE_CONFIG_ANNOTATION } from './schema';

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

export function resolveWorkload(workload: WorkloadLike): Result<ResolvedWorkload> {
  return guarded('', () => resolve(workload));
}

function resolve(workload: WorkloadLike): Result<ResolvedWorkload> {
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
  const queues = resolveQueues(config.value, workload.spec?.template);
  if (!queues.ok) return queues;
  return ok({
    kind,
    namespace: meta.namespace ?? 'default',
    name: meta.name ?? '',
    uid: meta.uid ?? '',
    queues: queues.value,
  });
}
