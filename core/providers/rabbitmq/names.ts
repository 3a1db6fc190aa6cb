// RabbitMQ's resources of a split (core/nameScheme.ts): the names, and the kinds the state's
// inventory records them as before they are created.
import { digest } from '../../hash';
import {
  boundedName,
  NAME_SCHEME,
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

/** What a destination's exchange adds to the routing exchange's name: `.to-` and 16 hash
 * characters (80 bits: no two destinations of one engine share an exchange in practice). */
export const DESTINATION_EXCHANGE_SUFFIX_BYTES = 20;

/**
 * The exchange a split's copies to `queue` are published through (agent/rabbitmq/routing.ts):
 * the engine's routing exchange name (its application shadow's: unique per engine, bounded,
 * recorded) with a hash of the queue, so it is never a user's exchange and every name an engine
 * made starts with its routing exchange's. Recomputable from the checkpoint and the controller's
 * state alone (the queue names are recorded there).
 */
export function destinationExchangeName(routingExchange: string, queue: string): string {
  return `${routingExchange}.to-${digest([NAME_SCHEME, 'rdest', queue], 16)}`;
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
