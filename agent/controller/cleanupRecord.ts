// The record a handback leaves behind when broker resources had to be kept (not proven empty, so
// they may hold messages): the state document goes with the handback, this ConfigMap does not.
import { CLEANUP_KEY } from '../../core/agentProtocol';
import type { SplitState } from '../../core/state/stateDocument';

/** What an operator needs about resources a handback kept: our own names, never a value.
 * Merged with an earlier record (`previous`, its pending.json): a later handback adds to it. */
export function cleanupRecord(state: SplitState, previous?: string): Record<string, string> {
  const earlier = previous ? (JSON.parse(previous) as { name: string }[]) : [];
  const added = state.cleanupPending
    .filter(({ resource }) => !earlier.some((e) => e.name === resource.name))
    .map(({ resource, reason }) => ({
      provider: resource.provider,
      kind: resource.kind,
      name: resource.name,
      queue: resource.queue,
      reason,
    }));
  return {
    [CLEANUP_KEY]: JSON.stringify([...earlier, ...added], null, 2),
    safeAction:
      'These broker resources were kept because they were not proven empty and may hold messages. ' +
      'Move any messages to the source (or consume them), then delete the resources and this ConfigMap.',
  };
}
