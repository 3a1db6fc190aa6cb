// Checks of the workload stage across queues: env vars two queues would both need to override,
// and two entries that consume one source the same way. (What one queue's block must satisfy is
// its provider's resolution, core/providers/<provider>/resolve.ts.)
import { coreProvider } from '../providers/registry';
import { fieldError, type FieldError } from '../result';
import { sourceOwnershipKey } from '../sourceOwnership';
import { groupSetting } from './consumerOverrides';
import { describeSetting, settingField, settingIdentity, type SettingRef } from './settingRef';
import type { ResolvedQueue } from './resolvedTypes';
import type { QueueDeclaration } from './schema';

/**
 * The controller overrides each queue's source (and consumer group) setting; two queues sharing
 * one env var or file key in a container would need two values in one place.
 */
/** The block's fields that name a queue's source. */
const SOURCE_FIELDS: Record<ResolvedQueue['provider'], { env: string; file: string }> = {
  kafka: { env: 'sourceEnv', file: 'sourceFile' },
  rabbitmq: { env: 'sourceEnv', file: 'sourceFile' },
  sqs: { env: 'queueUrlEnv', file: 'queueUrlFile' },
};

export function overrideCollisions(
  queues: readonly QueueDeclaration[],
  resolved: readonly ResolvedQueue[],
): FieldError[] {
  const errors: FieldError[] = [];
  const owners = new Map<string, string>();
  for (const queue of resolved) {
    const index = queues.findIndex((q) => q.name === queue.name);
    const at = `queues[${index}].${queue.provider}`;
    const overrides: [string, SettingRef][] = [
      [`${at}.${settingField(queue.sourceAt, SOURCE_FIELDS[queue.provider])}`, queue.sourceAt],
    ];
    const group = groupSetting(queue);
    if (group) overrides.push([`${at}.${settingField(group.at, group.fields)}`, group.at]);
    for (const [path, setting] of overrides) {
      const key = `${queue.container}\u0000${settingIdentity(setting)}`;
      const owner = owners.get(key);
      if (owner !== undefined) {
        errors.push(
          fieldError(
            path,
            `${describeSetting(setting)} in container "${queue.container}" is also ${owner}; the split overrides it per queue, so one setting cannot serve two queues.`,
            'Give each queue its own source and group settings in the container.',
          ),
        );
      } else {
        owners.set(key, path);
      }
    }
  }
  return errors;
}

/**
 * Two entries that consume one source the same way (one topic and group on one cluster, one
 * queue on one broker: the same ownership key) would each get an engine copying the whole
 * source, so every message would be split twice. The key compares endpoints as literals or as
 * the Secret/ConfigMap reference they come from, as the controller's ownership Leases do.
 */
export function duplicateSources(
  queues: readonly QueueDeclaration[],
  resolved: readonly ResolvedQueue[],
): FieldError[] {
  const errors: FieldError[] = [];
  const first = new Map<string, { index: number; queue: ResolvedQueue }>();
  for (const queue of resolved) {
    const index = queues.findIndex((q) => q.name === queue.name);
    // One workload, one namespace: any constant serves the comparison.
    const key = sourceOwnershipKey('', queue);
    const earlier = first.get(key);
    if (!earlier) {
      first.set(key, { index, queue });
      continue;
    }
    const what = coreProvider(queue.provider).describeSource(queue);
    errors.push(
      fieldError(
        `queues[${index}].${queue.provider}.${settingField(queue.sourceAt, SOURCE_FIELDS[queue.provider])}`,
        `${describeSetting(queue.sourceAt)} makes "${queue.name}" the same source as queues[${earlier.index}] ("${earlier.queue.name}"): the ${what} on the same broker. Each entry would copy every message of it.`,
        `Declare the source once: remove one of "${earlier.queue.name}" and "${queue.name}", or point it at its own topic/queue.`,
      ),
    );
  }
  return errors;
}
