// The env vars that point a queue's consumer at a shadow: its source env names the shadow, and
// the env of its consumer group — where its provider has groups — the shadow's group. The
// controller sets them on the workload (the application shadow), reports them per route (the
// session shadow, for env delivery), and the sidecar derives them when the report lacks them.
import { coreProvider } from '../providers/registry';
import type { ResolvedQueue } from './resolvedTypes';

/** The env var of the queue's consumer group and its field in the block; undefined when the
 * queue's provider has no groups. */
export function groupEnv(queue: ResolvedQueue): { env: string; field: string } | undefined {
  return coreProvider(queue.provider).groupEnv(queue);
}

/** The source env's value naming the shadow `shadow` (its name, or what the provider's
 * applications name a queue by: core/providers/contract.ts shadowSource). */
function shadowSource(queue: ResolvedQueue, shadow: string): string {
  const provider = coreProvider(queue.provider);
  return provider.shadowSource ? provider.shadowSource(queue, shadow) : shadow;
}

/** [env var, value] for the parts of `shadow` that are known. */
export function consumerOverrides(
  queue: ResolvedQueue,
  shadow: { source?: string | undefined; group?: string | undefined },
): [string, string][] {
  const group = groupEnv(queue);
  const source = shadow.source !== undefined ? shadowSource(queue, shadow.source) : undefined;
  return [
    ...(source !== undefined ? [[queue.sourceEnv, source] as [string, string]] : []),
    ...(group && shadow.group !== undefined ? [[group.env, shadow.group] as [string, string]] : []),
  ];
}
