// Kafka's resources of a split (core/nameScheme.ts): the names, and the kinds the state's
// inventory records them as before they are created.
import {
  boundedName,
  queueInputs,
  routeInputs,
  type QueueIdentity,
  type RouteIdentity,
} from '../../nameScheme';

export interface KafkaQueueNames {
  /** Topic the application consumes while split. */
  appShadowTopic: string;
  /** Group the redirected application uses on its shadow. */
  appShadowGroup: string;
  /** Group the queue-agent's pump consumes the source with. */
  splitterGroup: string;
  /** Transactional id of the pump's producer: a replacement agent fences the old one. */
  transactionalId: string;
  /** group.instance.id of the pump: static membership fences a stale consumer. */
  splitterInstanceId: string;
}

export function kafkaQueueNames(id: QueueIdentity): KafkaQueueNames {
  const inputs = queueInputs(id);
  return {
    appShadowTopic: boundedName('kapp', id.queue, inputs),
    appShadowGroup: boundedName('kappg', id.queue, inputs),
    splitterGroup: boundedName('ksplit', id.queue, inputs),
    transactionalId: boundedName('ktx', id.queue, inputs),
    splitterInstanceId: boundedName('kinst', id.queue, inputs),
  };
}

export interface KafkaRouteNames {
  sessionTopic: string;
  /** Group a developer's local consumer (or the sidecar) uses on the session topic. */
  sessionGroup: string;
  /** Deterministic group that moves a detached route's unconsumed suffix to the app shadow. */
  drainGroup: string;
}

export function kafkaRouteNames(id: RouteIdentity): KafkaRouteNames {
  const inputs = routeInputs(id);
  return {
    sessionTopic: boundedName('kses', id.queue, inputs),
    sessionGroup: boundedName('ksesg', id.queue, inputs),
    drainGroup: boundedName('kdrain', id.queue, inputs),
  };
}

/** The kinds of Kafka resources the state's inventory records. */
export const KAFKA_RESOURCE_KINDS = ['topic', 'group', 'transactionalId'] as const;
export type KafkaResourceKind = (typeof KAFKA_RESOURCE_KINDS)[number];

/** What a queue owns in one epoch (the splitter's instance id is a member id, not a resource). */
export function kafkaQueueResources(id: QueueIdentity): { kind: KafkaResourceKind; name: string }[] {
  const names = kafkaQueueNames(id);
  return [
    { kind: 'topic', name: names.appShadowTopic },
    { kind: 'group', name: names.appShadowGroup },
    { kind: 'group', name: names.splitterGroup },
    { kind: 'transactionalId', name: names.transactionalId },
  ];
}

export function kafkaRouteResources(id: RouteIdentity): { kind: KafkaResourceKind; name: string }[] {
  const names = kafkaRouteNames(id);
  return [
    { kind: 'topic', name: names.sessionTopic },
    { kind: 'group', name: names.sessionGroup },
    { kind: 'group', name: names.drainGroup },
  ];
}
