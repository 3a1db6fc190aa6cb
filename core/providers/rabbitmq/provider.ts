// RabbitMQ to the core (core/providers/contract.ts): a durable classic or quorum queue.
import type { CoreProvider } from '../contract';
import { rabbitBlockErrors, rabbitBlockSchema, rabbitEnvSettings, type RabbitBlock } from './declaration';
import {
  RABBIT_RESOURCE_KINDS,
  rabbitQueueResources,
  rabbitRouteResources,
  type RabbitResourceKind,
} from './names';
import { rabbitMessage, type RabbitMessagePart, type RabbitWirePart } from './message';
import { rabbitOwnershipKey } from './ownership';
import {
  rabbitPlan,
  rabbitPlanNames,
  rabbitPlanSchema,
  rabbitRouteShadow,
  type RabbitQueuePlan,
} from './plan';
import { RABBIT_ENV_ROLES, resolveRabbit, type RabbitRole, type ResolvedRabbitQueue } from './resolve';
import { RABBIT_STATISTICS_INTERVAL } from './settings';

export interface RabbitTypes {
  provider: 'rabbitmq';
  block: RabbitBlock;
  role: RabbitRole;
  resolved: ResolvedRabbitQueue;
  plan: RabbitQueuePlan;
  resourceKind: RabbitResourceKind;
  part: RabbitMessagePart;
  wireKey: 'amqp';
  wirePart: RabbitWirePart;
}

export const rabbitCore: CoreProvider<RabbitTypes> = {
  provider: 'rabbitmq',
  brokerSettings: [RABBIT_STATISTICS_INTERVAL],
  blockSchema: rabbitBlockSchema,
  envSettings: rabbitEnvSettings,
  blockErrors: rabbitBlockErrors,
  envRoles: RABBIT_ENV_ROLES,
  resolve: resolveRabbit,
  describeSource: (queue) => `queue "${queue.source}"`,
  // Consumers of a RabbitMQ queue share no group.
  groupSetting: () => undefined,
  ownership: (queue) => ({
    role: 'url',
    literalKey: (url) => rabbitOwnershipKey({ url, queue: queue.source }),
    group: '',
  }),
  resourceKinds: RABBIT_RESOURCE_KINDS,
  queueResources: rabbitQueueResources,
  routeResources: rabbitRouteResources,
  planSchema: rabbitPlanSchema,
  planNames: rabbitPlanNames,
  routeShadow: rabbitRouteShadow,
  plan: rabbitPlan,
  message: rabbitMessage,
};
