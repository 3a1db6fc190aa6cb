// The settings that point a queue's consumer at a shadow: its source names the shadow, and its
// consumer group — where its provider has groups — the shadow's group. Each is an env var or a
// key of a mounted file (settingRef.ts). The controller sets them on the workload (the
// application shadow), reports them per route (the session shadow, for env delivery), and the
// sidecar derives them when the report lacks them.
import { coreProvider } from '../providers/registry';
import type { ResolvedQueue } from './resolvedTypes';
import type { SettingRef } from './settingRef';

/** Where the queue's consumer group is read, with the block's fields for it; undefined when
 * the queue's provider has no groups. */
export function groupSetting(
  queue: ResolvedQueue,
): { at: SettingRef; fields: { env: string; file: string } } | undefined {
  return coreProvider(queue.provider).groupSetting(queue);
}

/** The source setting's value naming the shadow `shadow` (its name, or what the provider's
 * applications name a queue by: core/providers/contract.ts shadowSource). */
function shadowSource(queue: ResolvedQueue, shadow: string): string {
  const provider = coreProvider(queue.provider);
  return provider.shadowSource ? provider.shadowSource(queue, shadow) : shadow;
}

/** A setting and the value that points the consumer at the shadow. */
export interface SettingValue {
  at: SettingRef;
  value: string;
}

/** The settings for the parts of `shadow` that are known. */
export function consumerOverrides(
  queue: ResolvedQueue,
  shadow: { source?: string | undefined; group?: string | undefined },
): SettingValue[] {
  const group = groupSetting(queue);
  const source = shadow.source !== undefined ? shadowSource(queue, shadow.source) : undefined;
  return [
    ...(source !== undefined ? [{ at: queue.sourceAt, value: source }] : []),
    ...(group && shadow.group !== undefined ? [{ at: group.at, value: shadow.group }] : []),
  ];
}

/** The env var ones as NAME → value (env delivery, the status' envOverrides). */
export function envValues(values: readonly SettingValue[]): Record<string, string> {
  return Object.fromEntries(values.flatMap((v) => (v.at.kind === 'env' ? [[v.at.name, v.value]] : [])));
}
