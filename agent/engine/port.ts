// What a provider gives the engine kernel (kernel.ts): the broker work of each step, and nothing
// of the phase discipline. The kernel decides whether a step may run, keeps the route table, the
// removed and retained routes, the publish barrier and the published counts, and calls the port
// only for what needs the broker. A port never changes the phase.
import type { MessageView } from '../../core/filter';
import type { FieldError } from '../../core/result';
import type {
  AppQueue,
  AbortResult,
  CleanupReadyResult,
  EngineCondition,
  EnginePhase,
  HandoffData,
  HandoffResult,
  Outcome,
  PrepareResult,
  RetainedResource,
  RouteDrainResult,
  RouteSpec,
  ShadowLag,
} from './contract';
import type { CheckpointCodec } from './checkpointCodec';
import type { LogFields } from '../log';
import type { PublishBarrier } from './publishBarrier';
import type { RouteTable } from './routeTable';

/** A piece of broker work: its value, or the outcome that stops the step (pending, degraded,
 * rejected). `log` are the fields of the step's transition log line. */
export type Step<T> =
  | { readonly ok: true; readonly value: T; readonly log?: LogFields }
  | { readonly ok: false; readonly outcome: Outcome<never> };

/** Work without a value: undefined when it went through, else the outcome that stops the step. */
export type Blocked = Outcome<never> | undefined;

/** A route out of the table whose shadow is not drained yet, with whatever its drain needs. */
export interface RemovedRoute {
  readonly routeId: string;
  readonly shadow: string;
}

/** The part of a checkpoint the kernel owns; a provider's state adds its own fields. */
export interface KernelState<R extends RemovedRoute> {
  readonly phase: EnginePhase;
  readonly generation: number;
  readonly routes: readonly RouteSpec[];
  readonly removed: readonly R[];
  readonly retained: readonly RetainedResource[];
}

/** Where a message goes under the table in force, and that table's generation (the pump tracks
 * the publish under it for the barrier). */
export interface PumpSelection {
  readonly routeId: string | undefined;
  readonly destination: string;
  readonly generation: number;
}

/** What a port may read of the kernel, and the two things it may record. */
export interface EngineView<R extends RemovedRoute> {
  readonly phase: EnginePhase;
  readonly table: RouteTable;
  readonly removed: ReadonlyMap<string, R>;
  readonly retained: readonly RetainedResource[];
  readonly barrier: PublishBarrier;
  /** The destination of this message under the table in force. */
  select(message: MessageView): PumpSelection;
  /** One publish to the route's shadow (undefined: the application shadow) was acknowledged. */
  countPublished(routeId: string | undefined): void;
  /** A shadow's removal kept these resources: they replace what was recorded for it. */
  retain(shadow: string, kept: readonly RetainedResource[]): void;
}

export interface BrokerPort<R extends RemovedRoute, S extends KernelState<R>> {
  readonly provider: string;
  readonly activationId: string;
  readonly epoch: number;
  readonly appShadow: string;
  /** How long one step may wait (for the publish barrier here, for proofs in the port). */
  readonly stepTimeoutMs: number;
  /** Names no route shadow may take (the source, a lock). */
  readonly reservedNames: readonly string[];
  /** How the barrier's pending reasons name what is open: Kafka commits copies, RabbitMQ
   * confirms publishes. */
  readonly inFlight: { readonly what: string; readonly awaits: string };

  /** A fence the engine can never win back: every step answers this, unchanged. */
  lostFence(): Outcome<never> | undefined;
  /** Log fields and the reason text of a broker operation that threw. */
  describeFailure(err: unknown): { readonly fields: LogFields; readonly reason: string };

  /** Preflight the source, take the fence, create the application shadow. */
  prepare(): Promise<Step<PrepareResult>>;
  /** What a repeated `prepare` answers. */
  prepared(): PrepareResult;
  /** Start consuming the source (the `start` step). */
  start(): Promise<Blocked>;
  /** Consume again after a restart in `running`; the kernel has taken the fence already. */
  resume(): Promise<Blocked>;
  /** Take the fence and connect; what a recovered engine does before it touches the broker. */
  up(): Promise<Blocked>;
  /** Stop consuming at a frontier; every in-flight publish resolves first. */
  stop(): Promise<Step<undefined>>;
  handoff(): HandoffData;

  /** Provider checks of a new route table, before the kernel builds it. */
  checkRoutes(routes: readonly RouteSpec[]): FieldError[];
  /** Creates the shadows (and whatever a route needs) of routes entering the table.
   * `returning`: the route was removed and not drained yet, so its shadow exists. */
  addRoutes(added: readonly { route: RouteSpec; index: number; returning: boolean }[]): Promise<Blocked>;
  /** The record kept for a route that leaves the table. */
  removedRoute(route: RouteSpec): R;
  /** The record of a removed route a restart lost, from what the controller recorded. */
  recordedRoute(spec: RouteSpec): R | undefined;
  /** Moves a removed route's residue to the application shadow, then deletes (or retains) its
   * shadow; the barrier has passed. */
  drainRoute(route: R): Promise<Step<RouteDrainResult>>;

  abort(): Promise<Step<AbortResult>>;
  drainApplication(): Promise<Blocked>;
  commitHandoff(): Promise<Step<HandoffResult>>;
  verifyCleanupReady(): Promise<Step<CleanupReadyResult>>;
  /** Deletes what can go loss-proof; what it keeps it records with `retain`. */
  cleanup(): Promise<Step<{ readonly deleted: string[] }>>;

  /** The provider's checkpoint format (./checkpointCodec.ts). */
  readonly codec: CheckpointCodec<S>;
  /** The state to checkpoint: the kernel's part with the provider's, in the format's field order. */
  checkpointState(kernel: KernelState<R>): S;
  /** The checkpoint fields that name this engine's activation and resources: a checkpoint with
   * other values is another engine's. */
  readonly identity: Partial<S>;
  /** Takes back the provider's part of a checkpoint. */
  restore(state: S): void;

  conditions(): EngineCondition[];
  readonly connected: boolean;
  /** Source messages held unacknowledged while their publish is retried. */
  readonly retrying: number;
  shadowLag(): Promise<ShadowLag>;
  /** Messages in the source not copied yet (ShadowLag.source); undefined when the broker did
   * not say. Asked only while `running`. */
  sourceBacklog(): Promise<number | undefined>;
  /** The application's consumers on `on` now (Engine.appConsumers); undefined when the broker
   * cannot say. */
  appConsumers(on: AppQueue): Promise<number | undefined>;
  /** Releases connections (and with them the fence). */
  close(): Promise<void>;
}
