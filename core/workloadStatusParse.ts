// Reading the workload-level status annotation (core/workloadStatus.ts). Apart from the types
// because it needs zod, which the extension loads only in its lazy bundles (esbuild.config.mjs).
import { z } from 'zod';
import { WORKLOAD_SPLIT_PHASES, type WorkloadSplitStatus } from './workloadStatus';

const workloadSplitStatusSchema = z.object({
  phase: z.enum(WORKLOAD_SPLIT_PHASES),
  message: z.string(),
  nextAction: z.string().optional(),
  step: z.string().optional(),
  routes: z.number().int().nonnegative(),
  cleanupConfigMap: z.string().optional(),
  updated: z.string(),
}) satisfies z.ZodType<WorkloadSplitStatus>;

/** The annotation's value, or undefined when it is absent or not ours to read. */
export function parseWorkloadStatus(text: string | undefined): WorkloadSplitStatus | undefined {
  if (text === undefined) return undefined;
  try {
    const parsed = workloadSplitStatusSchema.safeParse(JSON.parse(text));
    return parsed.success ? parsed.data : undefined;
  } catch {
    return undefined;
  }
}
