// What the controller hands an SQS queue's engine in the desired document
// (core/agentProtocol.ts): the plan, its schema, and the names it carries, derived only from the
// name scheme (a FIFO source's engine adds `.fifo` to the shadows: ./queueUrl.ts).
import { z } from 'zod';
import type { PlanNamesBase, QueuePlanBase, RouteShadow } from '../../agentProtocol';
import type { QueueIdentity, RouteIdentity } from '../../nameScheme';
import { planEnv, planName, queuePlanSchema } from '../../planSchema';
import type { PlanProgress } from '../contract';
import { sqsQueueNames, sqsRouteNames } from './names';
import { SQS_ENV_ROLES, type ResolvedSqsQueue, type SqsRole } from './resolve';

export interface SqsQueuePlan extends QueuePlanBase<SqsRole> {
  provider: 'sqs';
  /** The queue URL the workload consumes. */
  source: string;
  /** Declared `off` only; absent means auto. */
  snsEnvelope?: 'off';
  names: SqsPlanNames;
}

export interface SqsPlanNames extends PlanNamesBase {
  lockQueue?: string;
}

export const sqsPlanSchema = queuePlanSchema('sqs', Object.keys(SQS_ENV_ROLES) as SqsRole[], {
  snsEnvelope: z.literal('off').optional(),
  names: z.object({ appShadow: planName, lockQueue: planName.optional() }),
}) satisfies z.ZodType<SqsQueuePlan>;

export function sqsPlanNames(id: QueueIdentity): SqsPlanNames {
  const n = sqsQueueNames(id);
  return { appShadow: n.appShadowQueue, lockQueue: n.lockQueue };
}

export function sqsRouteShadow(id: RouteIdentity): RouteShadow {
  return { shadow: sqsRouteNames(id).sessionQueue };
}

export function sqsPlan(r: ResolvedSqsQueue, id: QueueIdentity, progress: PlanProgress): SqsQueuePlan {
  return {
    name: r.name,
    provider: r.provider,
    source: r.source,
    ...(r.snsEnvelope ? { snsEnvelope: r.snsEnvelope } : {}),
    env: planEnv(r.env),
    epoch: id.epoch,
    names: sqsPlanNames(id),
    ...progress,
  };
}
