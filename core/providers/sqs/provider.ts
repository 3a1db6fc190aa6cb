// Amazon SQS to the core (core/providers/contract.ts): a standard or FIFO queue, named by its URL
// (docs/providers/sqs.md).
import type { CoreProvider } from '../contract';
import { sqsBlockErrors, sqsBlockSchema, sqsEnvSettings, type SqsBlock } from './declaration';
import { SQS_RESOURCE_KINDS, sqsQueueResources, sqsRouteResources, type SqsResourceKind } from './names';
import { sqsMessage, type SqsMessagePart, type SqsWirePart } from './message';
import { sqsOwnershipKey } from './ownership';
import { sqsPlan, sqsPlanNames, sqsPlanSchema, sqsRouteShadow, type SqsQueuePlan } from './plan';
import { shadowQueueName, siblingQueueUrl } from './queueUrl';
import { resolveSqs, SQS_ENV_ROLES, type ResolvedSqsQueue, type SqsRole } from './resolve';
import { SQS_COUNTS_LAG, SQS_LOCK_TIMEOUT } from './settings';

export interface SqsTypes {
  provider: 'sqs';
  block: SqsBlock;
  role: SqsRole;
  resolved: ResolvedSqsQueue;
  plan: SqsQueuePlan;
  resourceKind: SqsResourceKind;
  part: SqsMessagePart;
  wireKey: 'sqs';
  wirePart: SqsWirePart;
}

export const sqsCore: CoreProvider<SqsTypes> = {
  provider: 'sqs',
  brokerSettings: [SQS_COUNTS_LAG, SQS_LOCK_TIMEOUT],
  blockSchema: sqsBlockSchema,
  envSettings: sqsEnvSettings,
  blockErrors: sqsBlockErrors,
  envRoles: SQS_ENV_ROLES,
  resolve: resolveSqs,
  describeSource: (queue) => `queue ${queue.source}`,
  // Consumers of an SQS queue share no group.
  groupSetting: () => undefined,
  // The application names its queue by URL: a shadow is the queue of that name beside the source.
  shadowSource: (queue, shadow) => siblingQueueUrl(queue.source, shadowQueueName(queue.source, shadow)),
  ownership: () => ({ role: 'queueUrl', literalKey: sqsOwnershipKey, group: '' }),
  resourceKinds: SQS_RESOURCE_KINDS,
  queueResources: sqsQueueResources,
  routeResources: sqsRouteResources,
  planSchema: sqsPlanSchema,
  planNames: sqsPlanNames,
  routeShadow: sqsRouteShadow,
  plan: sqsPlan,
  message: sqsMessage,
};
