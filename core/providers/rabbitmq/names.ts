// RabbitMQ's resources of a split (core/nameScheme.ts): the names, and the kinds the state's
// inventory records them as before they are created.
import {
  boundedName,
  queueInputs,
  routeInputs,
  type QueueIdentity,
  type RouteIdentity,
} from '../../nameScheme';

export interface RabbitQueueNames {
  appShadowQueue: string;
  /** Classic exclusive queue held on the engine's connection: fences a stale agent. */
  lockQueue: string;
}

export function rabbitQueueNames(id: QueueIdentity): RabbitQueueNames {
  const inputs = queueInputs(id);
  return {
    appShadowQueue: boundedName('rapp', id.queue, inputs),
    lockQueue: boundedName('rlock', id.queue, inputs),
  };
}

export interface RabbitRouteNames {
  sessionQueue: string;
}

export function rabbitRouteNames(id: RouteIdentity): RabbitRouteNames {
  return { sessionQueue: boundedName('rses', id.queue, routeInputs(id)) };
}

/** The kinds of RabbitMQ resources the state's inventory records. */
export const RABBIT_RESOURCE_KINDS = ['queue', 'lockQueue'] as const;
export type RabbitResourceKind = (typeof RABBIT_RESOURCE_KINDS)[number];

export function rabbitQueueResources(id: QueueIdentity): { kind: RabbitResourceKind; name: string }[] {
  const names = rabbitQueueNames(id);
  return [
    { kind: 'queue', name: names.appShadowQueue },
    { kind: 'lockQueue', name: names.lockQueue },
  ];
}

export function rabbitRouteResources(id: RouteIdentity): { kind: RabbitResourceKind; name: string }[] {
  return [{ kind: 'queue', name: rabbitRouteNames(id).sessionQueue }];
}
