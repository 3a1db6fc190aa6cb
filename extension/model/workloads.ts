// A workload object from the API server → what the tree and pickers show: its declared queues
// (both validation stages of core/queueConfig) or the problems that keep it from being split.
import { parseQueueConfig } from '../../core/queueConfig/parseQueueConfig';
import type { WorkloadLike } from '../../core/queueConfig/podTemplate';
import { configMapsToRead, resolveWorkload } from '../../core/queueConfig/resolveWorkload';
import { declaredBlock } from '../../core/queueConfig/schema';
import { providerOf, QUEUE_CONFIG_ANNOTATION } from '../../core/queueConfig/schema';
import { formatFieldError } from '../../core/result';
import { withOriginalEnv } from '../../core/queueConfig/originalEnv';
import { WORKLOAD_STATUS_ANNOTATION } from '../../core/workloadStatus';
import { parseWorkloadStatus } from '../../core/workloadStatusParse';
import type { DeclaredQueue, WorkloadInfo, WorkloadKind } from './types';

export function isAnnotated(workload: WorkloadLike): boolean {
  return workload.metadata?.annotations?.[QUEUE_CONFIG_ANNOTATION] !== undefined;
}

/**
 * The workload as declared, before the controller pointed its source env at the application
 * shadow: while a split is active, the live env names the shadow, not the real topic or queue.
 */
export function declaredWorkload(workload: WorkloadLike): WorkloadLike {
  return withOriginalEnv(workload);
}

/** The controller's workload-level status, read from the live object (the annotation is metadata). */
function splitStatusOf(live: WorkloadLike): Pick<WorkloadInfo, 'splitStatus'> {
  const status = parseWorkloadStatus(live.metadata?.annotations?.[WORKLOAD_STATUS_ANNOTATION]);
  return status !== undefined ? { splitStatus: status } : {};
}

export function summarizeWorkload(kind: WorkloadKind, live: WorkloadLike): WorkloadInfo {
  const workload = declaredWorkload(live);
  const meta = workload.metadata ?? {};
  const base = {
    kind,
    name: meta.name ?? '',
    namespace: meta.namespace ?? 'default',
    ...(meta.uid !== undefined ? { uid: meta.uid } : {}),
    ...splitStatusOf(live),
  };
  if (configMapsToRead(workload).length > 0) return { ...base, queues: declaredQueues(workload), errors: [] };
  const resolved = resolveWorkload({ ...workload, kind });
  if (resolved.ok) {
    const queues: DeclaredQueue[] = resolved.value.queues.map((q) => ({
      name: q.name,
      provider: q.provider,
      source: q.source,
      container: q.container,
    }));
    return { ...base, queues, errors: [] };
  }
  // The workload stage failed: still list the queue names the annotation declares, so the
  // user sees which declaration is broken; such a workload cannot be split until fixed.
  const config = parseQueueConfig(meta.annotations?.[QUEUE_CONFIG_ANNOTATION]);
  const queues: DeclaredQueue[] = config.ok
    ? config.value.queues.map((q) => ({
        name: q.name,
        provider: providerOf(q),
        source: '?',
        container: q.container ?? '',
      }))
    : [];
  return { ...base, queues, errors: resolved.errors.map(formatFieldError) };
}

/**
 * A declaration that names its queue in a mounted file lists its queues as declared: the tree
 * does not read ConfigMaps (the developer role may not list them); the sidecar and the
 * controller resolve the file when a split starts, and say what is wrong there.
 */
function declaredQueues(workload: WorkloadLike): DeclaredQueue[] {
  const config = parseQueueConfig(workload.metadata?.annotations?.[QUEUE_CONFIG_ANNOTATION]);
  if (!config.ok) return [];
  return config.value.queues.map((q) => {
    const { provider, block } = declaredBlock(q);
    const file =
      'sourceFile' in block ? block.sourceFile : 'queueUrlFile' in block ? block.queueUrlFile : undefined;
    return {
      name: q.name,
      provider,
      source: file ? `${file.key} in ${file.path}` : '?',
      container: q.container ?? '',
    };
  });
}

export { splittable } from './splittable';
