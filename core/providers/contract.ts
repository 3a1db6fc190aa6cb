// What a provider is to the core: its declaration block, how it resolves against the pod
// template, the names and kinds of the broker resources a split makes, its ownership key, and
// the plan the controller hands its engine. Each provider exports one CoreProvider
// (core/providers/<provider>/provider.ts); core/providers/registry.ts lists them, and the shared
// files (schema, resolution, inventory, ownership, the desired document) go through the list.
// A provider module imports only core's leaf helpers (blocks, envResolution, nameScheme,
// ownershipKey, planSchema, messageWire, brokerTime, …), never the registry or a file that reads
// it (types aside).
import type { z } from 'zod';
import type { QueuePlanBase, RouteShadow } from '../agentProtocol';
import type { WireBase } from '../messageWire';
import type { QueueIdentity, RouteIdentity } from '../nameScheme';
import type { Provider } from '../providers';
import type { ResolveContext } from '../queueConfig/resolveContext';
import type { ResolvedQueueBase } from '../queueConfig/resolvedTypes';
import type { SettingRef } from '../queueConfig/settingRef';
import type { FieldError, Result } from '../result';
import type { ShadowMessage } from '../shadowMessage';

/** What an env var of a queue's connection is to the code that reads it outside the provider. */
export interface EnvRoleInfo {
  /** Its value says where the broker is: a host:port list or a URL. The laptop dials it through
   * the address map. */
  readonly address?: 'hostList' | 'url';
  /** Its value is a credential: never printed. */
  readonly secret?: true;
}

/** The types one provider is made of; `CoreProvider<T>` ties its functions to them. */
export interface ProviderTypes {
  provider: Provider;
  /** The declaration block (`kafka: {...}`). */
  block: object;
  /** The roles of the env vars its connection is made of (`brokers`, `url`, …). */
  role: string;
  resolved: ResolvedQueueBase<string> & { provider: Provider };
  plan: QueuePlanBase<string> & { provider: Provider };
  /** The kinds of broker resource the state's inventory records (`topic`, `queue`, …). */
  resourceKind: string;
  /** Its part of a session message (`ShadowMessage.broker`): the fields only its broker has. */
  part: { provider: Provider };
  /** The key its part travels under in a session stream message, and the part there. */
  wireKey: string;
  wirePart: object;
}

/** How a plan's progress fields (from the controller's state) join the provider's plan. */
export interface PlanProgress {
  step?: QueuePlanBase<string>['step'];
  handoff?: unknown;
  checkpoint?: unknown;
}

/**
 * A fact about a provider's brokers the operator tells the controller, which passes it on to
 * every queue-agent: one flag on both commands (agent/main.ts), one argument of the queue-agent's
 * pod only when it is not the default (agent/controller/agentDeployment.ts), so a new setting
 * changes no existing pod template.
 */
export interface BrokerSetting {
  /** The flag without `--`, named after its provider: `rabbitmq-statistics-interval`. */
  readonly flag: string;
  /** What its value is called in the help: `seconds`. */
  readonly arg: string;
  readonly help: string;
  /** A whole number, at least this. */
  readonly min: number;
  readonly default: number;
}

/**
 * A part of a queue its broker settles apart from the rest, and only a prefix at a time (a Kafka
 * partition): the sidecar keeps each lane's order, and what follows a message it parks in a lane
 * waits behind it (sidecar/agentStream.ts). A message without one is in its queue's one order,
 * and a parked message there holds nothing up.
 */
export interface MessageLane {
  /** Tells lanes of one queue apart. */
  readonly key: string;
  /** What a person calls it: "partition 3". */
  readonly name: string;
}

/**
 * A provider's session messages (docs/architecture.md, "A provider's message"): its part of a
 * message and that part on the session stream. Its builders from its client's messages are in
 * the same module (core/providers/<provider>/message.ts), for its readers and consumers.
 */
export interface MessageFacet<T extends ProviderTypes> {
  /** The key its part travels under. Fixed once peers send it: agents and sidecars of other
   * versions read the same key (core/sessionStream.ts SESSION_SUBPROTOCOL). */
  readonly wireKey: T['wireKey'];
  /** Its part on the wire, checked on arrival. */
  readonly wireSchema: z.ZodType<T['wirePart']>;
  toWire(part: T['part']): T['wirePart'];
  /** The message again, from the fields every message has and its part (the filter's view
   * recomputed). */
  fromWire(queue: string, base: WireBase, part: T['wirePart']): ShadowMessage;
  /** Its lane; undefined where its broker settles no part of a queue apart. */
  lane(part: T['part']): MessageLane | undefined;
  /** The lane of a part the schema refused, as far as it still says (an unreadable message is
   * parked in its lane). */
  wireLane(part: unknown): MessageLane | undefined;
}

export interface CoreProvider<T extends ProviderTypes> {
  readonly provider: T['provider'];
  /** The facts about its brokers an operator may set (none: `[]`): flags of the controller,
   * passed on to every queue-agent, and listed in the Helm chart's values. */
  readonly brokerSettings: readonly BrokerSetting[];

  // ---- declaration (core/queueConfig/schema.ts, schemaRules.ts)
  /** The block's schema; a queue entry holds it under the provider's name. */
  readonly blockSchema: z.ZodType<T['block']>;
  /** The block's env var settings as [path below the block, env var name]. */
  envSettings(block: T['block']): [string, string][];
  /** Rules across the block's fields (settings that go in pairs); `path` is the block's. */
  blockErrors(block: T['block'], path: string): FieldError[];

  // ---- resolution against the pod template (core/queueConfig/resolveQueues.ts)
  /** Its connection's env roles, in the order plans list them. */
  readonly envRoles: { readonly [R in T['role']]: EnvRoleInfo };
  /** The queue resolved; errors go to ctx.errors (with paths under `${ctx.path}.<provider>`). */
  resolve(name: string, block: T['block'], ctx: ResolveContext): T['resolved'] | undefined;
  /** How an error names the source a queue consumes: `queue "orders"`. */
  describeSource(queue: T['resolved']): string;
  /** Where the container reads the consumer group the controller overrides besides its source,
   * with the block's fields for it; undefined where consumers of a source share no group. */
  groupSetting(queue: T['resolved']): { at: SettingRef; fields: { env: string; file: string } } | undefined;
  /** The value its source env takes to point a consumer at the shadow named `shadow`; absent:
   * the name itself. SQS applications name a queue by its URL (core/providers/sqs). */
  shadowSource?(queue: T['resolved'], shadow: string): string;
  /** The parts of its ownership key (core/sourceOwnership.ts). */
  ownership(queue: T['resolved']): OwnershipParts<T['role']>;

  // ---- broker resources (core/state/inventory.ts)
  readonly resourceKinds: readonly T['resourceKind'][];
  queueResources(id: QueueIdentity): { kind: T['resourceKind']; name: string }[];
  routeResources(id: RouteIdentity): { kind: T['resourceKind']; name: string }[];

  // ---- the plan its engine gets (core/agentDocuments.ts, agent/controller/desired.ts)
  /** The plan's schema in the desired document (built with core/planSchema.ts). */
  readonly planSchema: z.ZodType<T['plan']> & z.core.$ZodTypeDiscriminable;
  /** The resource names a plan carries, derived only from the name scheme. */
  planNames(id: QueueIdentity): T['plan']['names'];
  /** A route's session shadow (and groups) on a queue, derived only from the name scheme. */
  routeShadow(id: RouteIdentity): RouteShadow;
  /** The plan of a resolved queue in the activation `id`, with the controller's progress. */
  plan(queue: T['resolved'], id: QueueIdentity, progress: PlanProgress): T['plan'];

  // ---- a session message (core/shadowMessage.ts, core/sessionStream.ts)
  readonly message: MessageFacet<T>;
}

/** Per provider: the env role of the broker endpoint, the key of a literal endpoint, and the
 * consumer group the key includes ('' where consumers share no group). */
export interface OwnershipParts<R extends string> {
  role: R;
  literalKey: (endpoint: string) => Result<string>;
  group: string;
}
