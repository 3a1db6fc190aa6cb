// Kafka to the core (core/providers/contract.ts): a topic consumed by a consumer group.
import type { CoreProvider } from '../contract';
import { kafkaBlockErrors, kafkaBlockSchema, kafkaEnvSettings, type KafkaBlock } from './declaration';
import {
  KAFKA_RESOURCE_KINDS,
  kafkaQueueResources,
  kafkaRouteResources,
  type KafkaResourceKind,
} from './names';
import { kafkaMessage, type KafkaMessagePart, type KafkaWirePart } from './message';
import { kafkaOwnershipKey } from './ownership';
import { kafkaPlan, kafkaPlanNames, kafkaPlanSchema, kafkaRouteShadow, type KafkaQueuePlan } from './plan';
import { KAFKA_ENV_ROLES, resolveKafka, type KafkaRole, type ResolvedKafkaQueue } from './resolve';

export interface KafkaTypes {
  provider: 'kafka';
  block: KafkaBlock;
  role: KafkaRole;
  resolved: ResolvedKafkaQueue;
  plan: KafkaQueuePlan;
  resourceKind: KafkaResourceKind;
  part: KafkaMessagePart;
  wireKey: 'kafka';
  wirePart: KafkaWirePart;
}

export const kafkaCore: CoreProvider<KafkaTypes> = {
  provider: 'kafka',
  brokerSettings: [],
  blockSchema: kafkaBlockSchema,
  envSettings: kafkaEnvSettings,
  blockErrors: kafkaBlockErrors,
  envRoles: KAFKA_ENV_ROLES,
  resolve: resolveKafka,
  describeSource: (queue) => `topic "${queue.source}" read by group "${queue.group}"`,
  groupSetting: (queue) => ({ at: queue.groupAt, fields: { env: 'groupEnv', file: 'groupFile' } }),
  ownership: (queue) => ({
    role: 'brokers',
    literalKey: (brokers) => kafkaOwnershipKey({ brokers, topic: queue.source, group: queue.group }),
    group: queue.group,
  }),
  resourceKinds: KAFKA_RESOURCE_KINDS,
  queueResources: kafkaQueueResources,
  routeResources: kafkaRouteResources,
  planSchema: kafkaPlanSchema,
  planNames: kafkaPlanNames,
  routeShadow: kafkaRouteShadow,
  plan: kafkaPlan,
  message: kafkaMessage,
};
