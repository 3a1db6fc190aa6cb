// The broker resources a queue or a route will own, named by core/names. They are written to
// the state's inventory before they are created, so cleanup only ever touches recorded names.
import { kafkaQueueNames, kafkaRouteNames, rabbitQueueNames, rabbitRouteNames } from '../names';
import { assertNever } from '../providers';
import type { BrokerResource, SplitState } from './stateDocument';

export function queueResources(state: SplitState, queue: string, epoch: number): BrokerResource[] {
  const declared = state.queues[queue];
  if (!declared) return [];
  const id = { installId: state.installId, workloadUid: state.workload.uid, queue, epoch };
  const base = { provider: declared.provider, queue, epoch };
  switch (declared.provider) {
    case 'kafka': {
      const names = kafkaQueueNames(id);
      return [
        { ...base, kind: 'topic', name: names.appShadowTopic },
        { ...base, kind: 'group', name: names.appShadowGroup },
        { ...base, kind: 'group', name: names.splitterGroup },
        { ...base, kind: 'transactionalId', name: names.transactionalId },
      ];
    }
    case 'rabbitmq': {
      const names = rabbitQueueNames(id);
      return [
        { ...base, kind: 'queue', name: names.appShadowQueue },
        { ...base, kind: 'lockQueue', name: names.lockQueue },
      ];
    }
    default:
      return assertNever(declared.provider, 'provider');
  }
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
    switch (declared.provider) {
      case 'kafka': {
        const names = kafkaRouteNames(id);
        return [
          { ...base, kind: 'topic', name: names.sessionTopic },
          { ...base, kind: 'group', name: names.sessionGroup },
          { ...base, kind: 'group', name: names.drainGroup },
        ];
      }
      case 'rabbitmq':
        return [{ ...base, kind: 'queue', name: rabbitRouteNames(id).sessionQueue }];
      default:
        return assertNever(declared.provider, 'provider');
    }
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
