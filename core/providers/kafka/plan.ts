// What the controller hands a Kafka queue's engine in the desired document (core/agentProtocol.ts):
// the plan, its schema, and the names it carries, derived only from the name scheme.
import { z } from 'zod';
import type { PlanNamesBase, QueuePlanBase, RouteShadow } from '../../agentProtocol';
import type { QueueIdentity, RouteIdentity } from '../../nameScheme';
import { planEnv, planName, queuePlanSchema } from '../../planSchema';
import type { PlanProgress } from '../contract';
import { ISOLATION_LEVELS, KAFKA_SASL_MECHANISMS, OFFSET_RESETS, type KafkaBlock } from './declaration';
import { kafkaQueueNames, kafkaRouteNames } from './names';
import { KAFKA_ENV_ROLES, type KafkaRole, type ResolvedKafkaQueue } from './resolve';

export interface KafkaQueuePlan extends QueuePlanBase<KafkaRole> {
  provider: 'kafka';
  /** The application's consumer group and where a partition without offsets starts (the
   * engine refuses a plan without them: agent/kafka/agentProvider.ts). */
  group?: string;
  offsetReset?: KafkaBlock['offsetReset'];
  /** The application's isolation.level, which the source is read at (absent: read_committed). */
  isolationLevel?: NonNullable<KafkaBlock['isolationLevel']>;
  saslMechanism?: NonNullable<KafkaBlock['sasl']>['mechanism'];
  names: KafkaPlanNames;
}

export interface KafkaPlanNames extends PlanNamesBase {
  appShadowGroup?: string;
  splitterGroup?: string;
  transactionalId?: string;
}

export const kafkaPlanSchema = queuePlanSchema('kafka', Object.keys(KAFKA_ENV_ROLES) as KafkaRole[], {
  group: planName.optional(),
  offsetReset: z.enum(OFFSET_RESETS).optional(),
  isolationLevel: z.enum(ISOLATION_LEVELS).optional(),
  saslMechanism: z.enum(KAFKA_SASL_MECHANISMS).optional(),
  names: z.object({
    appShadow: planName,
    appShadowGroup: planName.optional(),
    splitterGroup: planName.optional(),
    transactionalId: planName.optional(),
  }),
}) satisfies z.ZodType<KafkaQueuePlan>;

export function kafkaPlanNames(id: QueueIdentity): KafkaPlanNames {
  const n = kafkaQueueNames(id);
  return {
    appShadow: n.appShadowTopic,
    appShadowGroup: n.appShadowGroup,
    splitterGroup: n.splitterGroup,
    transactionalId: n.transactionalId,
  };
}

export function kafkaRouteShadow(id: RouteIdentity): RouteShadow {
  const n = kafkaRouteNames(id);
  return { shadow: n.sessionTopic, sessionGroup: n.sessionGroup, drainGroup: n.drainGroup };
}

export function kafkaPlan(r: ResolvedKafkaQueue, id: QueueIdentity, progress: PlanProgress): KafkaQueuePlan {
  // The document's field order stays the one earlier controllers wrote.
  return {
    name: r.name,
    provider: r.provider,
    source: r.source,
    group: r.group,
    offsetReset: r.offsetReset,
    ...(r.isolationLevel ? { isolationLevel: r.isolationLevel } : {}),
    ...(r.saslMechanism ? { saslMechanism: r.saslMechanism } : {}),
    ...(r.tls ? { tls: r.tls } : {}),
    env: planEnv(r.env),
    epoch: id.epoch,
    names: kafkaPlanNames(id),
    ...progress,
  };
}
