// The broker resources a queue or a route will own, named by each provider's module
// (core/providers/<provider>/names.ts). They are written to the state's inventory before they are
// created, so cleanup only ever touches recorded names.
import { coreProvider } from '../providers/registry';
import type { BrokerResource, SplitState } from './stateDocument';

export function queueResources(state: SplitState, queue: string, epoch: number): BrokerResource[] {
  const declared = state.queues[queue];
  if (!declared) return [];
  const id = { installId: state.installId, workloadUid: state.workload.uid, queue, epoch };
  const base = { provider: declared.provider, queue, epoch };
  return coreProvider(declared.provider)
    .queueResources(id)
    .map(({ kind, name }) => ({ ...base, kind, name }));
}

export function routeResources(
  state: SplitState,
  routeId: string,
  queues: readonly string[],
): BrokerResource[] {
  return queues.flatMap((queue): BrokerResource[] => {
    const declared = state.queues[queue];
    if (!declared) return [];
    const id = {
      installId: state.installId,
      workloadUid: state.workload.uid,
      queue,
      epoch: declared.epoch,
      routeId,
    };
    const base = { provider: declared.provider, queue, epoch: declared.epoch, routeId };
    return coreProvider(declared.provider)
      .routeResources(id)
      .map(({ kind, name }) => ({ ...base, kind, name }));
  });
}

/** Adds resources not yet recorded (re-entering a phase must not duplicate them). */
export function withResources(
  inventory: readonly BrokerResource[],
  added: readonly BrokerResource[],
): BrokerResource[] {
  const known = new Set(inventory.map((r) => r.name));
  return [...inventory, ...added.filter((r) => !known.has(r.name))];
}
