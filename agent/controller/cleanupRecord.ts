// The record a handback leaves behind when broker resources had to be kept (not proven empty, so
// they may hold messages): the state document goes with the handback, this ConfigMap does not.
import { CLEANUP_KEY } from '../../core/agentProtocol';
import type { BrokerResource, SplitState } from '../../core/state/stateDocument';

interface RecordedResource {
  provider: BrokerResource['provider'];
  kind: BrokerResource['kind'];
  name: string;
  queue: string;
  reason: string;
}

const SAFE_ACTION =
  'These broker resources were kept because they were not proven empty and may hold messages. ' +
  'Move any messages to the source (or consume them), then delete the resources and this ConfigMap.';

function merged(
  kept: readonly { resource: BrokerResource; reason: string }[],
  previous: readonly (string | undefined)[],
): string {
  const earlier = previous.flatMap((p) => (p ? (JSON.parse(p) as RecordedResource[]) : []));
  const all: RecordedResource[] = [];
  for (const entry of [
    ...earlier,
    ...kept.map(({ resource, reason }) => ({
      provider: resource.provider,
      kind: resource.kind,
      name: resource.name,
      queue: resource.queue,
      reason,
    })),
  ]) {
    if (!all.some((e) => e.name === entry.name)) all.push(entry);
  }
  return JSON.stringify(all, null, 2);
}

/** What an operator needs about resources a handback kept: our own names, never a value.
 * Merged with an earlier record (`previous`, its pending.json): a later handback adds to it. */
export function cleanupRecord(state: SplitState, previous?: string): Record<string, string> {
  return { [CLEANUP_KEY]: merged(state.cleanupPending, [previous]), safeAction: SAFE_ACTION };
}

/**
 * The record left when the workload's namespace is deleted during a split: no queue-agent can
 * run in a terminating namespace, so nothing is handed back and every resource of the inventory
 * (and any kept earlier) stays on the broker, listed here (README, "When a split is Degraded").
 * `previous` are earlier records of the same workload (pending.json texts) merged in.
 */
export function namespaceDeletedRecord(
  state: SplitState,
  previous: readonly (string | undefined)[],
): Record<string, string> {
  const { kind, namespace, name } = state.workload;
  const reason =
    `namespace ${namespace} was deleted during the split; no queue-agent can run in a terminating ` +
    'namespace to hand the messages back, so this resource was kept';
  const kept = [...state.cleanupPending, ...state.inventory.map((resource) => ({ resource, reason }))];
  return {
    [CLEANUP_KEY]: merged(kept, previous),
    workload: `${namespace}/${kind}/${name}`,
    safeAction: SAFE_ACTION,
  };
}
