// The RabbitMQ engine (docs/design.md §7): the engine kernel (../engine/kernel.ts) driving
// RabbitMQ's broker port. It consumes the source on one fenced connection, copies each message to
// exactly one shadow queue with confirmed mandatory publishes, and does the broker work of the
// drains, rollback, handoff and cleanup. The port holds the step logic that needs the broker;
// the work lives in SourcePump (consuming), ShadowWork (proofs, moves, deletes) and AmqpConnection
// (connection and fence).
import { randomUUID } from 'node:crypto';
import { amqpHeaders } from '../../core/providers/rabbitmq/message';
import { MessageView } from '../../core/filter';
import type {
  AppQueue,
  AbortResult,
  CleanupReadyResult,
  EngineCondition,
  HandoffData,
  HandoffResult,
  Outcome,
  PrepareResult,
  RetainedResource,
  RouteDrainResult,
  RouteSpec,
  ShadowLag,
} from '../engine/contract';
import { EngineKernel } from '../engine/kernel';
import { sumLag } from '../engine/lag';
import { describeError, silentLogger, type Logger } from '../log';
import { pending, rejected } from '../engine/outcome';
import type { Blocked, BrokerPort, EngineView, KernelState, RemovedRoute, Step } from '../engine/port';
import { replyCode } from './amqpErrors';
import { PROVIDER, rabbitCheckpoints, type RabbitState } from './checkpoint';
import { conditions } from './conditions';
import {
  DEFAULT_PREFETCH,
  defaultTiming,
  validateConfig,
  type RabbitEngineConfig,
  type RabbitEngineDeps,
  type RabbitTiming,
} from './config';
import { ManagementClient } from './management';
import { proveNoPublisher } from './noPublisher';
import { checkSource, type SourceType } from './sourceCheck';
import { idle, noBacklog, noConsumers } from './probe';
import { deleteRoute, deleteRoutes, ensureRoute, RouteNames } from './routing';
import { AmqpConnection, type Link } from './amqpConnection';
import { describeArguments, sameArguments, typeOnly, type ShadowArguments } from './shadowArguments';
import { declareShadow } from './shadows';
import { ShadowWork } from './shadowWork';
import { SourcePump } from './sourcePump';
import { amqpTarget } from './urls';

/** How long a live AMQP fact (a consumer count) must hold before it counts as proven. */
const LIVE_FACT_RECHECK_MS = 1_000;

type Up = { ok: true; link: Link } | { ok: false; outcome: Outcome<never> };

const now = () => new Date().toISOString();

export class RabbitEngine extends EngineKernel<RemovedRoute, RabbitState> {
  constructor(config: RabbitEngineConfig, deps: RabbitEngineDeps = {}) {
    const log = (deps.logger ?? silentLogger).child({
      engine: PROVIDER,
      activation: config.activationId,
      epoch: config.epoch,
      source: config.sourceQueue,
      ...(config.connectionLabel ? { label: config.connectionLabel } : {}),
    });
    super((view) => new RabbitBroker(config, deps, view, log), log);
  }
}

class RabbitBroker implements BrokerPort<RemovedRoute, RabbitState> {
  readonly provider = PROVIDER;
  readonly activationId: string;
  readonly epoch: number;
  readonly appShadow: string;
  readonly stepTimeoutMs: number;
  readonly reservedNames: readonly string[];
  readonly inFlight = { what: 'publishes', awaits: 'confirm' };
  readonly codec = rabbitCheckpoints;
  readonly identity: Pick<RabbitState, 'activationId' | 'epoch' | 'sourceQueue' | 'appShadow' | 'lockQueue'>;
  private readonly timing: RabbitTiming;
  private readonly management: ManagementClient;
  private readonly connection: AmqpConnection;
  private readonly pump: SourcePump;
  private readonly work: ShadowWork;
  /** The exchanges of the split's destinations (routing.ts), named after the routing exchange's
   * name, which is the application shadow's. */
  private readonly routes: RouteNames;

  private sourceType: SourceType | undefined;
  /** What the shadows of this activation are declared with: decided in PREPARING, kept in the
   * checkpoint, so a restart declares the same even if the source's policy changed since. */
  private shadowArgs: ShadowArguments | undefined;
  private warnedArgsChanged = false;
  private downSince: string | undefined;
  private fencedSince: string | undefined;

  constructor(
    private readonly config: RabbitEngineConfig,
    private readonly deps: RabbitEngineDeps,
    private readonly view: EngineView<RemovedRoute>,
    private readonly log: Logger,
  ) {
    this.activationId = config.activationId;
    this.epoch = config.epoch;
    this.appShadow = config.appShadow;
    this.reservedNames = [config.sourceQueue, config.lockQueue];
    const { activationId, epoch, sourceQueue, appShadow, lockQueue } = config;
    this.identity = { activationId, epoch, sourceQueue, appShadow, lockQueue };
    this.timing = { ...defaultTiming, ...config.timing };
    this.stepTimeoutMs = this.timing.stepTimeoutMs;
    this.routes = new RouteNames(config.appShadow);
    const target = amqpTarget(config.amqpUrl, this.timing.heartbeatSeconds);
    const prefetch = config.prefetch ?? DEFAULT_PREFETCH;
    this.management =
      deps.management ??
      new ManagementClient(
        config.managementUrl,
        config.amqpUrl,
        target.vhost,
        this.timing.managementTimeoutMs,
      );
    this.work = new ShadowWork(this.management, this.timing, target.username, prefetch, this.routes, log);
    this.connection = new AmqpConnection(
      {
        target,
        lockQueue: config.lockQueue,
        connectionName: `queue-split ${config.activationId}/${config.epoch}${config.connectionLabel ? ` ${config.connectionLabel}` : ''}`,
        reconnectInitialMs: this.timing.reconnectInitialMs,
        reconnectMaxMs: this.timing.reconnectMaxMs,
        logger: log,
      },
      {
        onUp: (link) => {
          this.downSince = undefined;
          this.fencedSince = undefined;
          return this.pump.resume(link);
        },
        onDown: () => {
          this.downSince ??= now();
          this.pump.linkLost();
        },
        onFenced: () => {
          this.fencedSince ??= now();
        },
      },
    );
    this.pump = new SourcePump({
      sourceQueue: config.sourceQueue,
      routes: this.routes,
      consumerTag: `queue-split-pump-${randomUUID().slice(0, 8)}`,
      prefetch,
      engineUser: target.username,
      timing: this.timing,
      management: this.management,
      barrier: view.barrier,
      hooks: deps.hooks ?? {},
      logger: log,
      select: (msg) => view.select(new MessageView(amqpHeaders(msg.properties.headers), msg.content)),
      onRouted: ({ routeId }) => view.countPublished(routeId),
      currentLink: () => this.connection.current(),
      dropLink: (reason) => this.connection.drop(reason),
    });
  }

  /** A refused lock is won back once the other engine lets go: never lost for good. */
  lostFence(): undefined {
    return undefined;
  }

  describeFailure(err: unknown) {
    return { fields: { code: replyCode(err), error: describeError(err) }, reason: describeError(err) };
  }

  // ---- steps ------------------------------------------------------------------------------

  async prepare(): Promise<Step<PrepareResult>> {
    const invalid = validateConfig(this.config);
    if (invalid.length > 0) return { ok: false, outcome: rejected(invalid) };
    const facts = checkSource(
      this.config.sourceQueue,
      await this.management.getQueue(this.config.sourceQueue),
    );
    if (!facts.ok) return { ok: false, outcome: rejected(facts.errors) };
    const up = await this.connect();
    if (!up.ok) return up;
    const declared = await declareShadow(
      up.link,
      this.config.appShadow,
      facts.value.shadows.arguments,
      this.routes,
    );
    if (!declared.ok) {
      return {
        ok: false,
        outcome: rejected([
          { path: 'appShadow', problem: declared.problem, fix: 'record a fresh shadow name' },
        ]),
      };
    }
    this.sourceType = facts.value.type;
    this.shadowArgs = facts.value.shadows.arguments;
    const { fromPolicy } = facts.value.shadows;
    for (const warning of facts.value.warnings) this.log.warn('engine.policy-not-inherited', { warning });
    return {
      ok: true,
      value: this.prepareResult(facts.value.warnings),
      log: {
        sourceType: facts.value.type,
        shadowArguments: describeArguments(this.shadowArgs),
        ...(fromPolicy.length > 0 ? { fromPolicy: fromPolicy.join(', ') } : {}),
      },
    };
  }

  prepared(): PrepareResult {
    return this.prepareResult([]);
  }

  start(): Promise<Blocked> {
    return this.startPump();
  }

  resume(): Promise<Blocked> {
    return this.startPump();
  }

  async up(): Promise<Blocked> {
    const up = await this.connect();
    return up.ok ? undefined : up.outcome;
  }

  /** Connects and takes the fence (the lock queue); the link to work on, or why not. */
  private async connect(): Promise<Up> {
    const result = await this.connection.ensureUp();
    if (result.kind === 'up') {
      this.downSince = undefined;
      this.fencedSince = undefined;
      return { ok: true, link: result.link };
    }
    if (result.kind === 'fenced') {
      this.fencedSince ??= now();
      const reason = `${result.reason}; this engine publishes nothing until it holds it`;
      return { ok: false, outcome: pending('fenced', reason, 2_000) };
    }
    return { ok: false, outcome: pending('broker-unavailable', result.reason, 2_000) };
  }

  async stop(): Promise<Step<undefined>> {
    const blocked = await this.stopPump();
    return blocked ? { ok: false, outcome: blocked } : { ok: true, value: undefined };
  }

  handoff(): HandoffData {
    const { sourceQueue, activationId } = this.config;
    return { provider: PROVIDER, data: { sourceQueue, activationId } };
  }

  checkRoutes(): [] {
    return [];
  }

  async addRoutes(added: readonly { route: RouteSpec; index: number }[]): Promise<Blocked> {
    const up = await this.connect();
    if (!up.ok) return up.outcome;
    for (const { route, index } of added) {
      // Declared again when it returns: declaring is idempotent.
      const declared = await declareShadow(up.link, route.shadow, this.shadowArguments(), this.routes);
      if (!declared.ok) {
        return rejected([
          { path: `routes[${index}].shadow`, problem: declared.problem, fix: 'record a fresh shadow name' },
        ]);
      }
    }
    return undefined;
  }

  removedRoute(route: RouteSpec): RemovedRoute {
    return { routeId: route.routeId, shadow: route.shadow };
  }

  recordedRoute(spec: RouteSpec): RemovedRoute | undefined {
    return spec.shadow ? { routeId: spec.routeId, shadow: spec.shadow } : undefined;
  }

  async drainRoute(route: RemovedRoute): Promise<Step<RouteDrainResult>> {
    const up = await this.connect();
    if (!up.ok) return up;
    const emptied = await this.work.empty(
      up.link,
      route.shadow,
      this.config.appShadow,
      'the session consumer',
      false,
    );
    if (!emptied.ok) return emptied;
    const removal = await this.remove(up.link, route.shadow, route.routeId);
    if (!removal.ok) return removal;
    // After the shadow (routing.ts): the barrier and the proof above show nothing publishes
    // to it. A restart before the drain is recorded drains the route again and gets here again.
    await deleteRoute(up.link, this.routes, route.shadow);
    this.work.forgetMoves(route.shadow);
    return { ok: true, value: { moved: emptied.value.moved, ...removal.value } };
  }

  async abort(): Promise<Step<AbortResult>> {
    // Cancel every consumer before the rollback republish, or the pump would copy the
    // republished messages straight back into the shadows.
    const unsettled = await this.stopPump();
    if (unsettled) return { ok: false, outcome: unsettled };
    const up = await this.connect();
    if (!up.ok) return up;
    let restored = 0;
    for (const { shadow } of this.shadows()) {
      const who = 'its consumers (scale the app to zero, detach sessions)';
      const emptied = await this.work.empty(up.link, shadow, this.config.sourceQueue, who, true);
      if (!emptied.ok) return emptied;
      restored += emptied.value.moved;
    }
    for (const { shadow } of this.shadows()) this.work.forgetMoves(shadow);
    return { ok: true, value: { restored } };
  }

  async drainApplication(): Promise<Blocked> {
    const up = await this.connect();
    if (!up.ok) return up.outcome;
    const proof = await this.work.prove(up.link, this.config.appShadow, noBacklog);
    return proof.ok
      ? undefined
      : pending('backlog', `the application has not drained its shadow: ${proof.reason}`);
  }

  async commitHandoff(): Promise<Step<HandoffResult>> {
    const up = await this.connect();
    if (!up.ok) return up;
    // The app reads the source next: what it left in its shadow (deliveries it held unacked
    // when it scaled down come back as ready) moves there first.
    const who = 'the application (scale it to zero)';
    const emptied = await this.work.empty(up.link, this.config.appShadow, this.config.sourceQueue, who, true);
    if (!emptied.ok) return emptied;
    this.work.forgetMoves(this.config.appShadow);
    return { ok: true, value: { moved: emptied.value.moved }, log: { moved: emptied.value.moved } };
  }

  async verifyCleanupReady(): Promise<Step<CleanupReadyResult>> {
    const up = await this.connect();
    if (!up.ok) return up;
    const names: string[] = [];
    for (const { shadow } of this.shadows()) {
      const proof = await this.work.prove(up.link, shadow, idle);
      if (!proof.ok)
        return { ok: false, outcome: pending('backlog', `not ready for cleanup: ${proof.reason}`) };
      if (proof.counts.exists) names.push(shadow);
    }
    return { ok: true, value: { shadows: names } };
  }

  async cleanup(): Promise<Step<{ deleted: string[] }>> {
    const up = await this.connect();
    if (!up.ok) return up;
    const deleted: string[] = [];
    for (const { shadow, routeId } of this.shadows()) {
      // Never delete what is not proven idle: a shadow with a backlog stays, and says why.
      const removal = await this.remove(up.link, shadow, routeId);
      if (!removal.ok) return removal;
      deleted.push(...removal.value.deleted);
    }
    // Last, once every shadow is gone (routing.ts): nothing publishes through them any more. A
    // restart before `cleaned` is recorded runs this step again and deletes them then. Every
    // destination the engine may have bound: the shadows (kept ones too: their exchanges are
    // of no use to anybody) and the source, which rollback and handoff move messages back to.
    const destinations = [
      this.config.sourceQueue,
      ...this.allShadows().map((s) => s.shadow),
      ...this.view.retained.map((r) => r.name),
    ];
    await deleteRoutes(up.link, this.routes, destinations);
    this.log.info('exchanges.deleted', { routingExchange: this.routes.routingExchange });
    return {
      ok: true,
      value: { deleted },
      log: { deleted: deleted.length, retained: this.view.retained.length },
    };
  }

  // ---- checkpoint -------------------------------------------------------------------------

  checkpointState(kernel: KernelState<RemovedRoute>): RabbitState {
    return {
      ...this.identity, // first: the format's field order
      phase: kernel.phase,
      ...(this.sourceType ? { sourceType: this.sourceType } : {}),
      ...(this.shadowArgs ? { shadowArguments: this.shadowArgs } : {}),
      generation: kernel.generation,
      routes: kernel.routes,
      removed: kernel.removed,
      retained: kernel.retained,
    };
  }

  restore(s: RabbitState): void {
    this.sourceType = s.sourceType;
    this.shadowArgs = s.shadowArguments ?? (s.sourceType ? typeOnly(s.sourceType) : undefined);
  }

  // ---- status -----------------------------------------------------------------------------

  conditions(): EngineCondition[] {
    const fenced = this.connection.fenced;
    return conditions({
      sourceQueue: this.config.sourceQueue,
      fenced: fenced && this.fencedSince ? { reason: fenced, since: this.fencedSince } : undefined,
      downSince: this.view.phase === 'new' ? undefined : this.downSince,
      foreign: this.pump.foreign,
      sourceLostSince: this.pump.sourceLostSince,
      publishProblems: this.pump.problems,
    });
  }

  get connected(): boolean {
    return this.connection.current() !== undefined;
  }

  get retrying(): number {
    return this.pump.retrying;
  }

  /** Ready messages in the source, from the management statistics: the engine's prefetch is
   * what it holds (unacknowledged), not a backlog. */
  async sourceBacklog(): Promise<number | undefined> {
    return (await this.management.getQueue(this.config.sourceQueue))?.messages_ready;
  }

  /** From a passive declare (AMQP, live), not the management statistics, which trail it by
   * seconds; undefined while the engine has no connection. On the source, asked once the pump
   * stopped, so every consumer there is the application's. */
  async appConsumers(on: AppQueue): Promise<number | undefined> {
    const link = this.connection.current();
    if (!link) return undefined;
    const queue = on === 'source' ? this.config.sourceQueue : this.config.appShadow;
    return (await link.withChannel('probe', (ch) => ch.checkQueue(queue))).consumerCount;
  }

  /** Ready plus unacknowledged messages per shadow, from the management statistics. */
  shadowLag(): Promise<ShadowLag> {
    return sumLag(
      async (queue) => {
        const q = await this.management.getQueue(queue);
        return q?.messages_ready === undefined
          ? undefined
          : q.messages_ready + (q.messages_unacknowledged ?? 0);
      },
      this.config.appShadow,
      this.view.table.routes.map((r) => ({ routeId: r.routeId, shadow: r.shadow })),
    );
  }

  async close(): Promise<void> {
    // Settle what settles quickly; whatever cannot goes back to the source when the
    // connection closes (a duplicate at worst).
    await this.pump.stop(2_000);
    await this.connection.close();
  }

  // ---- internals ---------------------------------------------------------------------------

  private prepareResult(warnings: readonly string[]): PrepareResult {
    return {
      sourceKind: this.sourceType ?? 'unknown',
      shadows: [this.config.appShadow],
      ...(this.shadowArgs ? { reproduced: describeArguments(this.shadowArgs) } : {}),
      warnings,
    };
  }

  /** The recorded arguments; before PREPARING recorded any (never past it), the type's alone. */
  private shadowArguments(): ShadowArguments {
    return this.shadowArgs ?? typeOnly(this.sourceType ?? 'classic');
  }

  /** Preflight again, prove nobody else consumes the source, then consume it. */
  private async startPump(): Promise<Blocked> {
    const up = await this.connect();
    if (!up.ok) return up.outcome;
    const facts = checkSource(
      this.config.sourceQueue,
      await this.management.getQueue(this.config.sourceQueue),
    );
    if (!facts.ok) return rejected(facts.errors);
    if (this.sourceType && facts.value.type !== this.sourceType) {
      return rejected([
        {
          path: 'source',
          problem: `the source changed type to ${facts.value.type}`,
          fix: 'abort this split',
        },
      ]);
    }
    this.sourceType = facts.value.type;
    if (this.shadowArgs && !sameArguments(this.shadowArgs, facts.value.shadows.arguments)) {
      // README: a policy changed during a split is seen by the next split; these shadows keep
      // what they were declared with (redeclaring them otherwise would be refused).
      if (!this.warnedArgsChanged)
        this.log.warn('engine.source-rules-changed', {
          recorded: describeArguments(this.shadowArgs),
          now: describeArguments(facts.value.shadows.arguments),
        });
      this.warnedArgsChanged = true;
    }
    this.shadowArgs ??= facts.value.shadows.arguments;
    // Ownership precondition: nobody else consumes the source once the app has quiesced. The
    // consumer count is a live AMQP fact, not a lagging statistic. On a classic source one read
    // is enough: the pump's consume is exclusive, so a consumer that attaches after the read
    // (a reconnect in flight) makes the broker refuse it, or be refused (`refused` below, and
    // conformance "a foreign consumer is refused by the exclusive consume"). A quorum queue
    // admits a second consumer, so there a short recheck catches a cancel or a reconnect in
    // flight before the pump starts (the ownership monitor watches after).
    const quiet = await this.work.prove(
      up.link,
      this.config.sourceQueue,
      noConsumers,
      this.sourceType === 'quorum' ? Math.min(this.timing.quiesceMs, LIVE_FACT_RECHECK_MS) : 0,
    );
    if (!quiet.ok) return pending('consumers-attached', `the source still has consumers: ${quiet.reason}`);
    // Idempotent: after a restart, or an exchange removed behind the engine, every destination
    // the pump may select is bound again before the first copy.
    for (const shadow of [this.config.appShadow, ...this.view.table.routes.map((r) => r.shadow)]) {
      const bound = await ensureRoute(up.link, this.routes, shadow);
      if (!bound.ok)
        return rejected([{ path: 'appShadow', problem: bound.problem, fix: 'record a fresh shadow name' }]);
    }
    const started = await this.pump.start(up.link, this.sourceType === 'quorum');
    if (started === 'refused')
      return pending('consumers-attached', 'another consumer holds the source exclusively');
    return undefined;
  }

  private async stopPump(): Promise<Blocked> {
    if (await this.pump.stop(this.timing.stepTimeoutMs)) return undefined;
    return pending('in-flight', `${this.pump.open} source deliveries still wait for their shadow confirm`);
  }

  /** The shadows this engine still answers for: active and removed routes, then the app's. */
  private shadows(): { shadow: string; routeId: string | undefined }[] {
    const kept = new Set(this.view.retained.map((r) => r.name));
    return this.allShadows().filter((s) => !kept.has(s.shadow));
  }

  /** Every shadow recorded: active and removed routes, then the app's, kept ones included. */
  private allShadows(): { shadow: string; routeId: string | undefined }[] {
    return [
      ...this.view.table.routes.map((r) => ({ shadow: r.shadow, routeId: r.routeId })),
      ...[...this.view.removed.values()].map((r) => ({ shadow: r.shadow, routeId: r.routeId })),
      { shadow: this.config.appShadow, routeId: undefined },
    ];
  }

  /** docs/design.md §5.4: a shadow is removed only with a proof that nothing publishes to it. */
  private async remove(
    link: Link,
    shadow: string,
    routeId: string | undefined,
  ): Promise<Step<{ deleted: string[]; retained: RetainedResource[] }>> {
    const isApp = shadow === this.config.appShadow;
    const barrier = this.view.barrier;
    const noPublisher = proveNoPublisher({
      link,
      shadow,
      // Only a pump that consumes (or will resume) selects destinations.
      selectable: this.pump.active && (isApp || this.view.table.routes.some((r) => r.shadow === shadow)),
      openOlderPublishes:
        isApp || !this.pump.active ? barrier.total : barrier.pendingBelow(this.view.table.generation),
      activeMoves: this.work.activeMoves,
    });
    if (!noPublisher.ok)
      return { ok: false, outcome: pending('in-flight', `${shadow} is kept: ${noPublisher.reason}`) };
    const hook = this.deps.hooks?.beforeShadowDelete;
    const removal = await this.work.remove(
      noPublisher.proof,
      shadow,
      this.sourceType ?? 'classic',
      routeId,
      hook ? (name) => hook({ shadow: name }) : undefined,
    );
    if (removal.ok) this.view.retain(shadow, removal.value.retained);
    return removal;
  }
}
