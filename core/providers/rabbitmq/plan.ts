// What the controller hands a RabbitMQ queue's engine in the desired document
// (core/agentProtocol.ts): the plan, its schema, and the names it carries, derived only from the
// name scheme.
import { z } from 'zod';
import type { PlanNamesBase, QueuePlanBase, RouteShadow } from '../../agentProtocol';
import type { QueueIdentity, RouteIdentity } from '../../nameScheme';
import { planEnv, planName, queuePlanSchema } from '../../planSchema';
import type { PlanProgress } from '../contract';
import { rabbitQueueNames, rabbitRouteNames } from './names';
import { RABBIT_ENV_ROLES, type RabbitRole, type ResolvedRabbitQueue } from './resolve';

export interface RabbitQueuePlan extends QueuePlanBase<RabbitRole> {
  provider: 'rabbitmq';
  /** Plain http management next to TLS AMQP was accepted explicitly (README "Trust boundaries"). */
  allowPlainHttpManagement?: true;
  names: RabbitPlanNames;
}

export interface RabbitPlanNames extends PlanNamesBase {
  lockQueue?: string;
}

export const rabbitPlanSchema = queuePlanSchema('rabbitmq', Object.keys(RABBIT_ENV_ROLES) as RabbitRole[], {
  allowPlainHttpManagement: z.literal(true).optional(),
  names: z.object({ appShadow: planName, lockQueue: planName.optional() }),
}) satisfies z.ZodType<RabbitQueuePlan>;

export function rabbitPlanNames(id: QueueIdentity): RabbitPlanNames {
  const n = rabbitQueueNames(id);
  return { appShadow: n.appShadowQueue, lockQueue: n.lockQueue };
}

export function rabbitRouteShadow(id: RouteIdentity): RouteShadow {
  return { shadow: rabbitRouteNames(id).sessionQueue };
}

export function rabbitPlan(
  r: ResolvedRabbitQueue,
  id: QueueIdentity,
  progress: PlanProgress,
): RabbitQueuePlan {
  // The document's field order stays the one earlier controllers wrote.
  return {
    name: r.name,
    provider: r.provider,
    source: r.source,
    ...(r.tls ? { tls: r.tls } : {}),
    ...(r.allowPlainHttpManagement ? { allowPlainHttpManagement: true as const } : {}),
    env: planEnv(r.env),
    epoch: id.epoch,
    names: rabbitPlanNames(id),
    ...progress,
  };
}
