// The provider-neutral engine contract (docs/design.md §7). The queue-agent hosts one engine per
// logical queue; the controller drives it through these steps and persists what they return.
//
// Rules every engine keeps:
// - Every step is idempotent per activation and generation: repeating a step that is done
//   returns `done` again without doing the work twice.
// - Outcomes are data. A timeout or a missing proof is `pending` or `degraded`, never `done`.
// - Checkpoints and handoff data are opaque to the controller: it stores them as JSON and
//   hands them back (`recover`, `commitHandoff`) without looking inside.
// - The engine never derives a resource name: every name arrives in its configuration or in a
//   RouteSpec, computed and recorded by the controller, so cleanup can never touch a user's
//   resource.
// - Delivery is at-least-once (docs/design.md §5): a message is durably published to exactly one shadow
//   before its source delivery is acked / its offset committed.
import type { HeaderFilter } from '../../core/filter';
import type { FieldError } from '../../core/result';
import type { JsonValue } from './json';

export type { JsonValue } from './json';

/** Engine state to persist after a step; `recover` takes it back after a restart. */
export interface Checkpoint {
  readonly provider: string;
  readonly format: number;
  readonly state: JsonValue;
}

/** What `stop` hands to `commitHandoff` (Kafka: the splitter frontier; RabbitMQ: nothing a
 * broker needs, kept for symmetry and for the record). */
export interface HandoffData {
  readonly provider: string;
  readonly data: JsonValue;
}

export interface RouteSpec {
  /** Stable random route id. */
  readonly routeId: string;
  readonly filter: HeaderFilter;
  /** The route's session shadow (queue or topic) exactly as the controller recorded it. */
  readonly shadow: string;
  /** Kafka: the session consumer group whose committed offsets mark what the developer
   * consumed; the drain moves the suffix after them. Unused by RabbitMQ. */
  readonly sessionGroup?: string;
  /** Kafka: the deterministic group whose commits record how far a route drain moved the
   * session residue (core/providers/kafka/names.ts `kafkaRouteNames().drainGroup`). Unused by RabbitMQ. */
  readonly drainGroup?: string;
}

/** A resource the engine deliberately kept: proven empty, but the broker offers no loss-proof
 * delete for it (RabbitMQ quorum queues reject the conditional delete). Cleanup-pending: an
 * operator or a later policy removes it; the engine never deletes it unconditionally. */
export interface RetainedResource {
  readonly kind: 'shadow';
  readonly name: string;
  /** The route it served; absent for the application shadow. */
  readonly routeId?: string;
  readonly reason: string;
  /** ISO-8601 time the emptiness proof completed. */
  readonly verifiedEmptyAt: string;
}

/** Why a step could not finish yet; the controller retries it. */
export type BlockingCode =
  | 'broker-unavailable'
  | 'fenced'
  | 'consumers-attached'
  | 'backlog'
  | 'publish-barrier'
  | 'in-flight'
  | 'wrong-phase'
  | 'route-active'
  | 'routes-undrained';

/** A condition that needs a person or a controller decision; the safe action says which. */
export type DegradedCode =
  | 'fenced'
  | 'foreign-consumer'
  | 'destination-missing'
  | 'publish-failing'
  | 'source-lost'
  | 'broker-unavailable'
  | 'checkpoint-mismatch'
  /** A programming error in the engine: no retry can fix it. */
  | 'internal-error';

export type Outcome<T> =
  | { readonly kind: 'done'; readonly value: T; readonly checkpoint: Checkpoint }
  | {
      readonly kind: 'pending';
      readonly code: BlockingCode;
      readonly blockingReason: string;
      readonly retryAfterMs: number;
    }
  | {
      readonly kind: 'degraded';
      readonly code: DegradedCode;
      readonly reason: string;
      readonly safeAction: string;
    }
  /** The input was invalid (overlapping filters, unusable source); nothing changed. */
  | { readonly kind: 'rejected'; readonly errors: readonly FieldError[] };

/** Every engine phase, in order; checkpoints validate against this list. */
export const ENGINE_PHASES = [
  'new',
  'prepared',
  'running',
  'stopped',
  'app-drained',
  'handed-off',
  'aborted',
  'cleaned',
  'closed',
] as const;
export type EnginePhase = (typeof ENGINE_PHASES)[number];

export interface PrepareResult {
  /** What the source turned out to be (RabbitMQ: `classic` | `quorum`; Kafka: `topic`). */
  readonly sourceKind: string;
  readonly shadows: readonly string[];
  /** What the shadows are declared with to behave as the source does (RabbitMQ arguments). */
  readonly reproduced?: string;
  /** Facts worth showing that do not block (e.g. a policy on the source the shadows lack). */
  readonly warnings: readonly string[];
}

export interface RoutesResult {
  /** The generation now in force; every publish selected under an older one is acknowledged. */
  readonly generation: number;
  /** True when the call carried an older generation than the one in force (nothing changed). */
  readonly superseded: boolean;
}

export interface RouteDrainResult {
  /** Messages moved from the session shadow to the application shadow by this drain, across
   * the calls it took (counted afresh after a restart). */
  readonly moved: number;
  readonly deleted: readonly string[];
  readonly retained: readonly RetainedResource[];
}

export interface StopResult {
  readonly handoff: HandoffData;
}

export interface AbortResult {
  /** Messages moved from the shadows back to the source by this rollback, across the calls
   * it took (counted afresh after a restart). */
  readonly restored: number;
}

export interface HandoffResult {
  /** Messages the handoff itself moved back to the source (RabbitMQ: app-shadow residue
   * requeued after the app scaled to zero). */
  readonly moved: number;
}

export interface CleanupReadyResult {
  readonly shadows: readonly string[];
}

export interface CleanupResult {
  readonly deleted: readonly string[];
  readonly retained: readonly RetainedResource[];
}

/** The route table the controller published for a queue (its desired generation), handed to
 * `recover` so a restarted engine never classifies a message under an older table. */
export interface PublishedRoutes {
  readonly generation: number;
  readonly routes: readonly RouteSpec[];
}

export interface RecoverResult {
  readonly phase: EnginePhase;
}

export interface EngineCondition {
  readonly code: DegradedCode;
  readonly reason: string;
  readonly safeAction: string;
  readonly since: string;
}

export interface RouteStatus {
  readonly routeId: string;
  readonly shadow: string;
  /** `removed`: out of the route table, shadow not drained yet. */
  readonly state: 'active' | 'removed';
  readonly published: number;
}

export interface EngineStatus {
  readonly provider: string;
  readonly activationId: string;
  readonly epoch: number;
  readonly phase: EnginePhase;
  readonly generation: number;
  readonly health: 'ok' | 'degraded';
  readonly conditions: readonly EngineCondition[];
  readonly connected: boolean;
  readonly routes: readonly RouteStatus[];
  readonly app: { readonly shadow: string; readonly published: number };
  /** Publishes awaiting their broker acknowledgement. */
  readonly inFlight: number;
  /** Source messages held unacknowledged while their publish is retried. */
  readonly retrying: number;
  readonly retained: readonly RetainedResource[];
}

/** Test seams. Production engines run without hooks. */
export interface EngineHooks {
  /** Awaited after a shadow publish is confirmed and before its source ack/commit: the crash
   * scenario kills the process here. */
  afterShadowConfirm?(info: {
    readonly messageId: string | undefined;
    readonly destination: string;
  }): Promise<void> | void;
  /** Awaited when a shadow's removal has proven it empty by the statistics, before the last
   * live check and the delete: the cleanup tests attach a consumer or restart here. */
  beforeShadowDelete?(info: { readonly shadow: string }): Promise<void> | void;
}

export interface Engine {
  readonly provider: string;
  /** Preflight the source, take the fence, create the application shadow. No consuming. */
  prepare(): Promise<Outcome<PrepareResult>>;
  /** Start consuming the source (the app has quiesced). Allowed again after `stop`. */
  start(): Promise<Outcome<Record<string, never>>>;
  /** Install a route table. Overlapping filters are rejected and the running table stays.
   * Resolves `done` only after the publish barrier: every publish selected under an older
   * generation has its broker acknowledgement. */
  reconcileRoutes(generation: number, routes: readonly RouteSpec[]): Promise<Outcome<RoutesResult>>;
  /** Move a removed route's residue to the application shadow once its consumer is gone, then
   * delete the shadow loss-proof or retain it (cleanup-pending). `route` is the route as the
   * controller recorded it: an engine that never had it in its table (a restart lost it) still
   * drains its shadow, so no message is stranded there. */
  drainRoute(route: RouteSpec): Promise<Outcome<RouteDrainResult>>;
  /** Stop consuming the source at a frontier; every in-flight publish resolves first. */
  stop(): Promise<Outcome<StopResult>>;
  /** Activation failed: stop the pump and put shadow contents back where the app reads them
   * after the rollback (RabbitMQ: republish to the source). */
  abort(): Promise<Outcome<AbortResult>>;
  /** `done` once the application shadow has no backlog (quiesced and rechecked). */
  drainApplication(): Promise<Outcome<Record<string, never>>>;
  /** Give the source back to the application. */
  commitHandoff(handoff: HandoffData): Promise<Outcome<HandoffResult>>;
  /** Live broker reads: every shadow is unused and empty. */
  verifyCleanupReady(): Promise<Outcome<CleanupReadyResult>>;
  /** Delete what can be deleted loss-proof; report what was kept. */
  cleanup(): Promise<Outcome<CleanupResult>>;
  /** On a fresh engine after a restart: take back a checkpoint and resume from it. When
   * `published` is newer than the checkpoint's table (a restart lost the freshest checkpoint),
   * it is installed as `reconcileRoutes` would before the pump classifies anything; a table
   * it rejects leaves the checkpoint's, as a rejected `reconcileRoutes` does. */
  recover(checkpoint: Checkpoint, published?: PublishedRoutes): Promise<Outcome<RecoverResult>>;
  status(): EngineStatus;
  /** Unconsumed messages in the shadows, read from the broker (for metrics; never a proof). */
  shadowLag(): Promise<ShadowLag>;
  /** The application's consumers on its shadow (while it is redirected) or on its source (once
   * it is restored, the pump stopped), read live from the broker: the controller's proof that
   * the app consumes (docs/design.md "Where activation time goes"); undefined where the broker
   * cannot say. */
  appConsumers(on: AppQueue): Promise<number | undefined>;
  /** Release connections (and with them the fence). Deletes nothing. */
  close(): Promise<void>;
}

/** Where the application consumes: its shadow while redirected, its source before and after. */
export type AppQueue = 'appShadow' | 'source';

/** Unconsumed messages per destination kind; a kind is absent when the broker did not say. */
export interface ShadowLag {
  readonly app?: number;
  /** Summed over the routes' session shadows (metrics carry no route labels). */
  readonly sessions?: number;
  /** Per route id: the unconsumed messages in its session shadow, for the route's QueueSplit
   * status; a route the broker did not answer for is absent. */
  readonly routes?: Readonly<Record<string, number>>;
  /** Messages waiting in the source that the engine has not copied yet, while it copies
   * (`running`): what the split adds to the application's lag, since the application reads only
   * its shadow then. A count that keeps growing means the source carries more than one
   * queue-agent copies. Absent in other phases (the application reads the source itself). */
  readonly source?: number;
}
