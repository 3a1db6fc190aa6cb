// The provider harness: everything the conformance scenarios need from a broker, in terms
// that fit both RabbitMQ (queues) and Kafka (topics and groups). One scenario body runs
// against every harness; a provider joins the suite by implementing this interface.
import type { HeaderFilter } from '../../core/filter';
import type { Engine, EngineHooks, RouteSpec } from '../../agent/engine/contract';
import type { Logger } from '../../agent/log';

/** A header value that is not a string (AMQP: an integer; Kafka: bytes that are not UTF-8).
 * It must never match a filter. */
export const NON_STRING = Object.freeze({ nonString: true as const });
export type TestHeaderValue = string | typeof NON_STRING;

export interface TestMessage {
  /** Unique per test run; carried as the message id (AMQP) or an id header (Kafka). */
  readonly id: string;
  readonly headers?: Readonly<Record<string, TestHeaderValue>>;
  /** Default: the UTF-8 text `body of <id>`. */
  readonly body?: Buffer;
  readonly contentType?: string;
  /** Epoch milliseconds, whole seconds (AMQP timestamps have second precision). */
  readonly timestamp?: number;
  /** Provider-specific extras the field-preservation scenario checks (e.g. AMQP properties). */
  readonly extra?: Readonly<Record<string, unknown>>;
}

export interface Observed {
  readonly id: string;
  readonly body: Buffer;
  /** As the client library decoded them. */
  readonly headers: Readonly<Record<string, unknown>>;
  readonly contentType: string | undefined;
  readonly timestamp: number | undefined;
  readonly extra: Readonly<Record<string, unknown>>;
}

/** Names of one test's resources, all unique to it. */
export interface Topology {
  readonly label: string;
  readonly source: string;
  readonly appShadow: string;
  /** A route with a fresh session shadow name (the same name for the same id). */
  route(routeId: string, filter: HeaderFilter): RouteSpec;
}

export interface EngineOptions {
  readonly prefetch?: number;
  readonly hooks?: EngineHooks;
  readonly logger?: Logger;
  /** Shorter step timeouts for scenarios that expect `pending`. */
  readonly stepTimeoutMs?: number;
}

/** What the crash child needs to build the same engine in another process. */
export interface ChildSpec {
  readonly provider: string;
  readonly config: unknown;
  readonly generation: number;
  readonly routes: readonly RouteSpec[];
}

/** A simulated consumer (the application, or a developer's session). */
export interface ConsumerHandle {
  /** Ids delivered to it, in order (a redelivery appears again). */
  readonly received: readonly string[];
  /** Ids it acknowledged / committed. */
  readonly acked: readonly string[];
  /** Acknowledge everything held and everything that arrives from now on. */
  ackAll(): void;
  /** Disconnect without acknowledging what it holds (the broker takes it back). */
  kill(): Promise<void>;
}

export interface ProviderHarness {
  /** e.g. `rabbitmq-classic`. */
  readonly name: string;
  readonly provider: string;
  /** Source fields a shadow copy cannot carry, with the reason. */
  readonly notPreserved: readonly string[];
  /** Provider-specific properties the field-preservation scenario sends as `extra` and
   * expects back unchanged; a `headers` entry holds typed header values to merge in. */
  readonly richProperties: Readonly<Record<string, unknown>>;
  /** True when cleanup keeps verified-empty shadows (no loss-proof delete on this broker). */
  readonly cleanupRetainsShadows: boolean;
  /** True when the broker counts a destination's consumers (Engine.appShadowConsumers); SQS
   * has only receives. */
  readonly countsConsumers: boolean;

  /** Creates an empty source and names every other resource of one test. */
  topology(): Promise<Topology>;
  engine(topology: Topology, options?: EngineOptions): Engine;
  childSpec(
    topology: Topology,
    generation: number,
    routes: readonly RouteSpec[],
    options?: EngineOptions,
  ): ChildSpec;

  produce(topology: Topology, messages: readonly TestMessage[]): Promise<void>;
  /** Publishes straight into a shadow, behind the engine's back. */
  inject(destination: string, messages: readonly TestMessage[]): Promise<void>;
  /** Consumes and acknowledges from a destination until every expected id arrived and it has
   * been quiet for a moment; returns everything seen (duplicates and strays included). */
  read(destination: string, expectIds: readonly string[], timeoutMs?: number): Promise<Observed[]>;
  /** A consumer with `prefetch` that acks the first `ackFirst` deliveries and holds the rest. */
  consume(destination: string, options: { prefetch: number; ackFirst: number }): Promise<ConsumerHandle>;
  /** Takes one message off a destination without a consumer and holds it unacknowledged. */
  holdOne(destination: string): Promise<{ readonly id: string; release(): Promise<void> }>;
  /** Messages not yet acknowledged by anyone (ready + in flight); statistics may lag. */
  backlog(name: string): Promise<number>;
  exists(name: string): Promise<boolean>;
  deleteBehindEngine(name: string): Promise<void>;
  recreate(name: string): Promise<void>;
  /** Severs the engine's broker session as a network failure would (it tries to reconnect). */
  preempt(engine: Engine): Promise<void>;
  /** Removes everything the topology named, unconditionally (test teardown only). */
  dispose(topology: Topology): Promise<void>;
  close(): Promise<void>;
}
