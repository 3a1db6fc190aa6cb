// The Kafka engine (docs/design.md §7): the engine kernel (../engine/kernel.ts) driving Kafka's
// broker port. A group-less pump copies the source to shadow topics in transactions whose
// producer is the fence; route drains, rollback, handback and cleanup are proved with live
// broker reads. The port holds the step logic that needs the broker; the work lives in
// SourcePump (the pump and its seed and frontier), ShadowWork (shadows, proofs, deletes),
// GroupPins (commits to groups the engine does not consume with) and KafkaFence (the fence).
import type {
  AppQueue,
  AbortResult,
  CleanupReadyResult,
  EngineCondition,
  HandoffData,
  HandoffResult,
  PrepareResult,
  RouteDrainResult,
  RouteSpec,
  ShadowLag,
} from '../engine/contract';
import { EngineKernel } from '../engine/kernel';
import { describeError, silentLogger, type Logger } from '../log';
import { rejected } from '../engine/outcome';
import type { Blocked, BrokerPort, EngineView, KernelState, Step } from '../engine/port';
import {
  kafkaCheckpoints,
  PROVIDER,
  toList,
  toMap,
  type KafkaRoute,
  type KafkaState,
  type RemovedRoute,
} from './checkpoint';
import { engineConditions } from './conditions';
import {
  defaultTiming,
  validateConfig,
  validateRouteNames,
  type KafkaEngineConfig,
  type KafkaEngineDeps,
  type KafkaTiming,
} from './config';
import { KafkaFence } from './fence';
import { GroupPins } from './groupPins';
import { assignedMembers } from './groups';
import { errorName } from './kafkaErrors';
import { KafkaLink } from './link';
import { RouteDrainer } from './routeDrain';
import { partitionCount } from './shadows';
import { ShadowWork, uncommitted } from './shadowWork';
import { describeOffsets, SourcePump } from './sourcePump';

export class KafkaEngine extends EngineKernel<RemovedRoute, KafkaState> {
  constructor(config: KafkaEngineConfig, deps: KafkaEngineDeps = {}) {
    const log = (deps.logger ?? silentLogger).child({
      engine: PROVIDER,
      activation: config.activationId,
      epoch: config.epoch,
      source: config.sourceTopic,
    });
    super((view) => new KafkaBroker(config, deps, view, log), log);
  }
}

class KafkaBroker implements BrokerPort<RemovedRoute, KafkaState> {
  readonly provider = PROVIDER;
  readonly activationId: string;
  readonly epoch: number;
  readonly appShadow: string;
  readonly stepTimeoutMs: number;
  readonly reservedNames: readonly string[];
  readonly inFlight = { what: 'copies', awaits: 'commit' };
  readonly codec = kafkaCheckpoints;
  readonly identity: Pick<
    KafkaState,
    | 'activationId'
    | 'epoch'
    | 'sourceTopic'
    | 'appGroup'
    | 'appShadow'
    | 'appShadowGroup'
    | 'splitterGroup'
    | 'transactionalId'
  >;
  private readonly timing: KafkaTiming;
  private readonly link: KafkaLink;
  private readonly fence: KafkaFence;
  private readonly shadows: ShadowWork;
  private readonly source: SourcePump;
  private readonly drainer: RouteDrainer;

  constructor(
    private readonly config: KafkaEngineConfig,
    deps: KafkaEngineDeps,
    private readonly view: EngineView<RemovedRoute>,
    private readonly log: Logger,
  ) {
    this.activationId = config.activationId;
    this.epoch = config.epoch;
    this.appShadow = config.appShadow;
    this.reservedNames = [config.sourceTopic];
    const c = config;
    // Every name the checkpoint records: a checkpoint naming other resources is not this engine's.
    this.identity = {
      activationId: c.activationId,
      epoch: c.epoch,
      sourceTopic: c.sourceTopic,
      appGroup: c.appGroup,
      appShadow: c.appShadow,
      appShadowGroup: c.appShadowGroup,
      splitterGroup: c.splitterGroup,
      transactionalId: c.transactionalId,
    };
    this.timing = { ...defaultTiming, ...config.timing };
    this.stepTimeoutMs = this.timing.stepTimeoutMs;
    this.link = new KafkaLink(config, this.timing, log, deps.socketFactory);
    this.fence = new KafkaFence(this.link, log);
    const pins = new GroupPins(this.link, config, log);
    this.shadows = new ShadowWork(this.link, config, this.timing, log, pins, view);
    this.source = new SourcePump(
      this.link,
      config,
      this.timing,
      log,
      pins,
      this.shadows,
      this.fence,
      view,
      deps.hooks ?? {},
    );
    this.drainer = new RouteDrainer(this.link, config, this.timing, log);
  }

  lostFence(): Blocked {
    return this.fence.lost();
  }

  describeFailure(err: unknown) {
    const error = errorName(err) ?? describeError(err);
    return { fields: { error }, reason: error };
  }

  // ---- steps ------------------------------------------------------------------------------

  async prepare(): Promise<Step<PrepareResult>> {
    const invalid = validateConfig(this.config);
    if (invalid.length > 0) return { ok: false, outcome: rejected(invalid) };
    const blocked = await this.fence.up();
    if (blocked) return { ok: false, outcome: blocked };
    const count = await partitionCount(this.link.admin, this.config.sourceTopic);
    if (count === undefined) {
      return {
        ok: false,
        outcome: rejected([
          {
            path: 'sourceTopic',
            problem: `topic ${this.config.sourceTopic} does not exist`,
            fix: 'check the topic the workload consumes (sourceEnv)',
          },
        ]),
      };
    }
    const shadow = await this.shadows.create(
      this.config.appShadow,
      this.config.appShadowGroup,
      count,
      'appShadow',
    );
    if (shadow) return { ok: false, outcome: shadow };
    this.shadows.partitions = count;
    return { ok: true, value: this.prepared(), log: { partitions: count } };
  }

  prepared(): PrepareResult {
    return { sourceKind: 'topic', shadows: [this.config.appShadow], warnings: [] };
  }

  async start(): Promise<Blocked> {
    const blocked = (await this.fence.up()) ?? (await this.source.start());
    if (blocked) return blocked;
    this.source.frontier = null;
    return undefined;
  }

  resume(): Promise<Blocked> {
    return this.source.start();
  }

  up(): Promise<Blocked> {
    return this.fence.up();
  }

  async stop(): Promise<Step<undefined>> {
    if (this.view.phase === 'running') {
      const blocked = await this.source.stop(this.fence);
      if (blocked) return { ok: false, outcome: blocked };
    }
    const frontier = this.source.frontier;
    return { ok: true, value: undefined, log: { frontier: frontier ? describeOffsets(frontier) : 'none' } };
  }

  handoff(): HandoffData {
    const frontier = this.source.frontier;
    return {
      provider: PROVIDER,
      data: {
        activationId: this.config.activationId,
        sourceTopic: this.config.sourceTopic,
        appGroup: this.config.appGroup,
        frontier: frontier ? toList(frontier) : null,
      },
    };
  }

  checkRoutes(routes: readonly RouteSpec[]) {
    return routes.flatMap((r, i) => validateRouteNames(r, i, this.config));
  }

  async addRoutes(
    added: readonly { route: RouteSpec; index: number; returning: boolean }[],
  ): Promise<Blocked> {
    const blocked = await this.fence.up();
    if (blocked) return blocked;
    for (const { route, index, returning } of added) {
      if (returning) continue; // its shadow and session group are there from before
      const made = await this.shadows.create(
        route.shadow,
        route.sessionGroup!, // checkRoutes refused a route without one
        this.shadows.partitions,
        `routes[${index}].shadow`,
      );
      if (made) return made;
    }
    return undefined;
  }

  removedRoute(route: RouteSpec): RemovedRoute {
    return {
      routeId: route.routeId,
      shadow: route.shadow,
      sessionGroup: route.sessionGroup!, // in the table, so checkRoutes saw it
      drainGroup: route.drainGroup!,
    };
  }

  recordedRoute(spec: RouteSpec): RemovedRoute | undefined {
    const { routeId, shadow, sessionGroup, drainGroup } = spec;
    return shadow && sessionGroup && drainGroup ? { routeId, shadow, sessionGroup, drainGroup } : undefined;
  }

  async drainRoute(route: RemovedRoute): Promise<Step<RouteDrainResult>> {
    const blocked = await this.fence.up();
    if (blocked) return { ok: false, outcome: blocked };
    const drained = await this.drainer.drain(route, this.shadows.partitions);
    if (drained.kind === 'fenced') return { ok: false, outcome: this.fence.outcome() };
    if (drained.kind !== 'done') return { ok: false, outcome: drained.outcome };
    return { ok: true, value: { moved: drained.moved, deleted: drained.deleted, retained: [] } };
  }

  async abort(): Promise<Step<AbortResult>> {
    const blocked = await this.fence.up();
    if (blocked) return { ok: false, outcome: blocked };
    if (this.view.phase === 'running') {
      const stopped = await this.source.stop(this.fence);
      if (stopped) return { ok: false, outcome: stopped };
    }
    const restored = await this.source.rollback();
    return restored.ok ? { ok: true, value: { restored: restored.value } } : restored;
  }

  async drainApplication(): Promise<Blocked> {
    return (await this.fence.up()) ?? (await this.shadows.proveAppDrained());
  }

  async commitHandoff(): Promise<Step<HandoffResult>> {
    const blocked =
      (await this.fence.up()) ?? (await this.shadows.proveAppDrained()) ?? (await this.source.handBack());
    if (blocked) return { ok: false, outcome: blocked };
    const frontier = this.source.frontier;
    return {
      ok: true,
      value: { moved: 0 },
      log: { frontier: frontier ? describeOffsets(frontier) : 'none' },
    };
  }

  async verifyCleanupReady(): Promise<Step<CleanupReadyResult>> {
    const blocked = await this.fence.up();
    return blocked ? { ok: false, outcome: blocked } : this.shadows.verifyCleanupReady();
  }

  async cleanup(): Promise<Step<{ deleted: string[] }>> {
    const blocked = await this.fence.up();
    return blocked ? { ok: false, outcome: blocked } : this.shadows.cleanup();
  }

  // ---- checkpoint -------------------------------------------------------------------------

  checkpointState(kernel: KernelState<RemovedRoute>): KafkaState {
    const { seed, frontier } = this.source;
    return {
      ...this.identity, // first: the format's field order
      phase: kernel.phase,
      partitions: this.shadows.partitions,
      generation: kernel.generation,
      routes: kernel.routes as readonly KafkaRoute[], // checkRoutes let only complete routes in
      removed: kernel.removed,
      retained: kernel.retained,
      seed: seed ? toList(seed) : null,
      frontier: frontier ? toList(frontier) : null,
    };
  }

  restore(s: KafkaState): void {
    this.shadows.partitions = s.partitions;
    this.source.seed = s.seed ? toMap(s.seed) : null;
    this.source.frontier = s.frontier ? toMap(s.frontier) : null;
  }

  // ---- status -----------------------------------------------------------------------------

  conditions(): EngineCondition[] {
    return engineConditions(this.link.fenced, this.fence.fencedSince, this.source.problems);
  }

  get connected(): boolean {
    return this.link.connected;
  }

  get retrying(): number {
    return this.source.parkedCount;
  }

  shadowLag(): Promise<ShadowLag> {
    return this.shadows.lag();
  }

  /** The source's end offsets minus the splitter's committed ones: an upper bound, as for the
   * shadows (ShadowWork.lag). */
  sourceBacklog(): Promise<number | undefined> {
    return uncommitted(this.link.admin, this.config.sourceTopic, this.config.splitterGroup);
  }

  /** Members of the application's group on `on` with a share of it assigned: joined and past
   * the rebalance, so consuming it. */
  appConsumers(on: AppQueue): Promise<number | undefined> {
    return on === 'source'
      ? assignedMembers(this.link.admin, this.config.appGroup, this.config.sourceTopic)
      : assignedMembers(this.link.admin, this.config.appShadowGroup, this.config.appShadow);
  }

  async close(): Promise<void> {
    // What the pump copied but did not commit is copied again by the successor (a duplicate
    // at worst); stop() commits it when it can.
    await this.source.halt();
    await this.link.close();
  }
}
