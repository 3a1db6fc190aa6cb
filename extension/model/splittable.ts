// Kept apart from workloads.ts (which pulls the zod schemas) so that views can ask it cheaply.
import type { WorkloadInfo } from './types';

/** Splittable = declared without errors. */
export function splittable(workload: WorkloadInfo): boolean {
  return workload.errors.length === 0 && workload.queues.length > 0;
}
