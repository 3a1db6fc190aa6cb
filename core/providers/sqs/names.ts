// SQS's resources of a split (core/nameScheme.ts): the names, and the kinds the state's inventory
// records them as before they are created. The scheme's names (≤ 63 of [a-z0-9-]) are SQS queue
// names; a FIFO source's shadows add `.fifo` (./queueUrl.ts shadowQueueName), which still fits
// SQS's 80 characters. The lock queue is always a standard queue (docs/providers/sqs.md "The
// fence").
import {
  boundedName,
  queueInputs,
  routeInputs,
  type QueueIdentity,
  type RouteIdentity,
} from '../../nameScheme';

export interface SqsQueueNames {
  appShadowQueue: string;
  /** Holds the lock message in flight: fences a stale queue-agent. */
  lockQueue: string;
}

export function sqsQueueNames(id: QueueIdentity): SqsQueueNames {
  const inputs = queueInputs(id);
  return {
    appShadowQueue: boundedName('sapp', id.queue, inputs),
    lockQueue: boundedName('slock', id.queue, inputs),
  };
}

export function sqsRouteNames(id: RouteIdentity): { sessionQueue: string } {
  return { sessionQueue: boundedName('sses', id.queue, routeInputs(id)) };
}

/** The kinds of SQS resources the state's inventory records. */
export const SQS_RESOURCE_KINDS = ['queue', 'lockQueue'] as const;
export type SqsResourceKind = (typeof SQS_RESOURCE_KINDS)[number];

export function sqsQueueResources(id: QueueIdentity): { kind: SqsResourceKind; name: string }[] {
  const names = sqsQueueNames(id);
  return [
    { kind: 'queue', name: names.appShadowQueue },
    { kind: 'lockQueue', name: names.lockQueue },
  ];
}

export function sqsRouteResources(id: RouteIdentity): { kind: SqsResourceKind; name: string }[] {
  return [{ kind: 'queue', name: sqsRouteNames(id).sessionQueue }];
}
