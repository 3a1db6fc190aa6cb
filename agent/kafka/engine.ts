// The Kafka engine (docs/design.md §7): one per logical queue. A group-less pump copies the source to
// shadow topics in transactions whose producer is the fence; route drains, rollback, handback
// and cleanup are proved with live broker reads. Every step is idempotent, and a missing proof
// answers `pending`, never `done`.
import type { RecordHeaders } from './wire';
import { formatFilter, kafkaHeaders } from '../../core/filter';
import type {
  AbortResult,
  Checkpoint,
  CleanupReadyResult,
  CleanupResult,
  Engine,
  EngineCondition,
  EnginePhase,
  EngineStatus,
  HandoffData,
  HandoffResult,
  Outcome,
  PrepareResult,
  PublishedRoutes,
  RecoverResult,
  RetainedResource,
  RouteDrainResult,
  RoutesResult,
  RouteSpec,
  StopResult,
  ShadowLag,
} from '../engine/contract';
import { installPublished } from '../engine/recoverRoutes';
import { describeError, silentLogger, type Logger } from '../engine/log';
import { degraded, pending, rejected, wrongPhase } from '../engine/outcome';
import { PublishBarrier } from '../engine/publishBarrier';
import { RouteTable } from '../engine/routeTable';
import { Serial } from '../engine/serial';
import { sumLag } from '../engine/lag';
import { offsetGaps } from './backlog';
import {
  decodeCheckpoint,
  encodeCheckpoint,
  PROVIDER,
  toList,
  toMap,
  type KafkaRoute,
  type KafkaState,
  type RemovedRoute,
} from './checkpoint';
import {
  DEFAULT_MESSAGE_ID_HEADER,
  DEFAULT_PREFETCH,
  defaultTiming,
  validateConfig,
  validateRouteNames,
  type KafkaEngineConfig,
  type KafkaEngineDeps,
  type KafkaTiming,
} from './config';
import { engineConditions } from './conditions';
import { RouteDrainer } from './routeDrain';
import {
  awaitCommitted,
  commitGuarded,
  committedOffsets,
  deleteGroups,
  describeGroup,
  describeMembers,
} from './groups';
import { errorName } from './kafkaErrors';
import { KafkaLink } from './link';
import { prove, type ProofRequest } from './proofs';
import { Pump, type PumpSelection } from './pump';
import { readSeedPlan } from './seed';
import { deleteTopic, ensureShadow, growShadow, partitionCount, shadowShapeOf } from './shadows';

type Up = { ok: true } | { ok: false; outcome: Outcome<never> };

export class KafkaEngine implements Engine {
  readonly provider = PROVIDER;
  private readonly log: Logger;
  private readonly timing: KafkaTiming;
  private readonly link: KafkaLink;
  private readonly barrier = new PublishBarrier();
  private readonly pump: Pump;
  private readonly drainer: RouteDrainer;
  private readonly serial = new Serial();

  private phase: EnginePhase = 'new';
  private table: RouteTable;
  private readonly removed = new Map<string, RemovedRoute>();
  private retained: RetainedResource[] = [];
  private partitions = 0;
  private seed: Map<number, string> | null = null;
  private frontier: Map<number, string> | null = null;
  /** Publishes committed per route id ('' = application shadow), since this process started. */
  private readonly published = new Map<string, number>();
  private fencedSince: string | undefined;

  constructor(
    private readonly config: KafkaEngineConfig,
    deps: KafkaEngineDeps = {},
  ) {
    this.timing = { ...defaultTiming, ...config.timing };
    this.log = (deps.logger ?? silentLogger).child({
      engine: PROVIDER,
      activation: config.activationId,
      epoch: config.epoch,
      source: config.sourceTopic,
    });
    this.table = RouteTable.empty(config.appShadow);
    this.link = new KafkaLink(config, this.timing, this.log, deps.socketFactory);
    this.pump = new Pump({
      wire: this.link.wire,
      admin: this.link.admin,
      txn: this.link.txn,
      sourceTopic: config.sourceTopic,
      isolation: config.isolationLevel ?? 'read_committed',
      splitterGroup: config.splitterGroup,
      maxRecordsPerTxn: config.prefetch ?? DEFAULT_PREFETCH,
      messageIdHeader: config.messageIdHeader ?? DEFAULT_MESSAGE_ID_HEADER,
      timing: this.timing,
      barrier: this.barrier,
      hooks: deps.hooks ?? {},
      log: this.log,
      select: (headers) => this.select(headers),
      onPublished: (routeId) =>
        this.published.set(routeId ?? '', (this.published.get(routeId ?? '') ?? 0) + 1),
      onFenced: (reason) => this.fenced(reason),
      grow: (partitions) => this.growShadows(partitions),
    });
    this.drainer = new RouteDrainer(this.link, config, this.timing, this.log);
  }

  // ---- steps ------------------------------------------------------------------------------

  prepare(): Promise<Outcome<PrepareResult>> {
    return this.step('prepare', async () => {
      if (this.phase === 'closed') return wrongPhase('prepare', this.phase, ['new']);
      if (this.phase !== 'new') return this.done(this.prepareResult());
      const invalid = validateConfig(this.config);
      if (invalid.length > 0) return rejected(invalid);
      const up = await this.up();
      if (!up.ok) return up.outcome;
      const count = await partitionCount(this.link.admin, this.config.sourceTopic);
      if (count === undefined) {
        return rejected([
          {
            path: 'sourceTopic',
            problem: `topic ${this.config.sourceTopic} does not exist`,
            fix: 'check the topic the workload consumes (sourceEnv)',
          },
        ]);
      }
      const shadow = await this.createShadow(this.config.appShadow, count, 'appShadow');
      if (shadow) return shadow;
      const zeros = new Map(Array.from({ length: count }, (_, p) => [p, '0'] as const));
      // The redirected app must start at the beginning of its shadow whatever its reset policy.
      const notPinned = await this.startAt(this.config.appShadowGroup, this.config.appShadow, zeros);
      if (notPinned) return pending('consumers-attached', notPinned, 2_000);
      this.partitions = count;
      this.phase = 'prepared';
      this.log.info('engine.prepared', { partitions: count });
      return this.done(this.prepareResult());
    });
  }

  start(): Promise<Outcome<Record<string, never>>> {
    return this.step('start', async () => {
      if (this.phase === 'running') return this.done({});
      const allowed: EnginePhase[] = ['prepared', 'stopped', 'app-drained'];
      if (!allowed.includes(this.phase)) return wrongPhase('start', this.phase, allowed);
      const up = await this.up();
      if (!up.ok) return up.outcome;
      const started = await this.startPump();
      if (started) return started;
      this.frontier = null;
      this.phase = 'running';
      this.log.info('engine.started', { generation: this.table.generation });
      return this.done({});
    });
  }

  reconcileRoutes(generation: number, routes: readonly RouteSpec[]): Promise<Outcome<RoutesResult>> {
    return this.step('reconcileRoutes', async () => {
      const allowed: EnginePhase[] = ['prepared', 'running', 'stopped', 'app-drained'];
      if (!allowed.includes(this.phase)) return wrongPhase('reconcileRoutes', this.phase, allowed);
      const current = this.table;
      if (generation < current.generation)
        return this.done({ generation: current.generation, superseded: true });
      if (generation === current.generation) {
        if (!sameRoutes(current.routes, routes)) {
          return rejected([
            {
              path: 'generation',
              problem: `generation ${generation} is already installed with a different route table`,
              fix: 'publish route changes under a new generation',
            },
          ]);
        }
        return this.afterBarrier(generation);
      }
      const failed = await this.installTable(generation, routes);
      if (failed) return failed;
      return this.afterBarrier(generation);
    });
  }

  drainRoute(spec: RouteSpec): Promise<Outcome<RouteDrainResult>> {
    const routeId = spec.routeId;
    return this.step('drainRoute', async () => {
      const allowed: EnginePhase[] = [
        'prepared',
        'running',
        'stopped',
        'app-drained',
        'handed-off',
        'cleaned',
      ];
      if (!allowed.includes(this.phase)) return wrongPhase('drainRoute', this.phase, allowed);
      if (this.table.route(routeId)) {
        return pending(
          'route-active',
          `route ${routeId} is still in the route table; reconcile without it first`,
        );
      }
      const kept = this.retained.filter((r) => r.routeId === routeId);
      // Not in `removed` after a restart that lost it: drain by the recorded names (a topic
      // already deleted drains as empty), unless it was drained and kept before.
      const route =
        this.removed.get(routeId) ??
        (kept.length === 0 && spec.shadow && spec.sessionGroup && spec.drainGroup
          ? { routeId, shadow: spec.shadow, sessionGroup: spec.sessionGroup, drainGroup: spec.drainGroup }
          : undefined);
      if (!route) return this.done({ moved: 0, deleted: [], retained: kept });
      // docs/design.md §5.3: the route stops receiving before its shadow is drained.
      if (!(await this.barrier.waitBelow(this.table.generation, this.timing.stepTimeoutMs))) {
        return pending(
          'publish-barrier',
          `copies selected before route ${routeId} left the table await their commit`,
        );
      }
      const up = await this.up();
      if (!up.ok) return up.outcome;
      const drained = await this.drainer.drain(route, this.partitions);
      if (drained.kind !== 'done') return drained.kind === 'fenced' ? this.fencedOutcome() : drained.outcome;
      this.removed.delete(routeId);
      this.log.info('route.drained', { routeId, moved: drained.moved });
      return this.done({ moved: drained.moved, deleted: drained.deleted, retained: kept });
    });
  }

  stop(): Promise<Outcome<StopResult>> {
    return this.step('stop', async () => {
      if (this.phase === 'new' || this.phase === 'closed') return wrongPhase('stop', this.phase, ['running']);
      if (this.phase === 'running') {
        const stopped = await this.stopPump();
        if (stopped) return stopped;
      }
      if (this.phase === 'running' || this.phase === 'prepared') this.phase = 'stopped';
      this.log.info('engine.stopped', { frontier: this.frontier ? describeOffsets(this.frontier) : 'none' });
      return this.done({ handoff: this.handoff() });
    });
  }

  abort(): Promise<Outcome<AbortResult>> {
    return this.step('abort', async () => {
      if (this.phase === 'aborted' || this.phase === 'cleaned') return this.done({ restored: 0 });
      const allowed: EnginePhase[] = ['prepared', 'running', 'stopped', 'app-drained'];
      if (!allowed.includes(this.phase)) return wrongPhase('abort', this.phase, allowed);
      const up = await this.up();
      if (!up.ok) return up.outcome;
      if (this.phase === 'running') {
        const stopped = await this.stopPump();
        if (stopped) return stopped;
      }
      // The application group never moved (its unset partitions were pinned at start): it
      // re-reads from the source everything the split copied. Partitions added during the
      // split are pinned at their start, or a "latest" reset would skip them.
      let restored = 0;
      if (this.seed) {
        const splitter = await committedOffsets(
          this.link.admin,
          this.config.splitterGroup,
          this.config.sourceTopic,
        );
        const app = await committedOffsets(this.link.admin, this.config.appGroup, this.config.sourceTopic);
        // Partitions grown since the pump's last check count too, from their log start (case 4).
        const lows = new Map(
          (await this.link.admin.fetchTopicOffsets(this.config.sourceTopic)).map((o) => [o.partition, o.low]),
        );
        const pin = new Map<number, string>();
        for (let p = 0; p < Math.max(this.partitions, lows.size); p++) {
          const from = this.seed.get(p) ?? app.get(p) ?? lows.get(p) ?? '0';
          if (!app.has(p)) pin.set(p, from);
          restored += Math.max(0, Number(BigInt(splitter.get(p) ?? from) - BigInt(from)));
        }
        const refused = await this.commitToApp(pin);
        if (refused) return refused;
      }
      this.phase = 'aborted';
      this.log.info('engine.aborted', { restored });
      return this.done({ restored });
    });
  }

  drainApplication(): Promise<Outcome<Record<string, never>>> {
    return this.step('drainApplication', async () => {
      if (this.phase === 'handed-off' || this.phase === 'cleaned') return this.done({});
      const allowed: EnginePhase[] = ['stopped', 'app-drained'];
      if (!allowed.includes(this.phase)) return wrongPhase('drainApplication', this.phase, allowed);
      const up = await this.up();
      if (!up.ok) return up.outcome;
      const proof = await this.proveAppDrained();
      if (proof) return proof;
      this.phase = 'app-drained';
      return this.done({});
    });
  }

  commitHandoff(handoff: HandoffData): Promise<Outcome<HandoffResult>> {
    return this.step('commitHandoff', async () => {
      if (this.phase === 'handed-off' || this.phase === 'cleaned') return this.done({ moved: 0 });
      const allowed: EnginePhase[] = ['stopped', 'app-drained'];
      if (!allowed.includes(this.phase)) return wrongPhase('commitHandoff', this.phase, allowed);
      if (
        handoff.provider !== PROVIDER ||
        JSON.stringify(handoff.data) !== JSON.stringify(this.handoff().data)
      ) {
        return rejected([
          {
            path: 'handoff',
            problem: 'handoff data is not from this engine',
            fix: 'pass what stop returned',
          },
        ]);
      }
      if (this.table.routes.length > 0 || this.removed.size > 0) {
        const ids = [...this.table.routes.map((r) => r.routeId), ...this.removed.keys()];
        return pending('routes-undrained', `routes ${ids.join(', ')} are not drained yet`);
      }
      const up = await this.up();
      if (!up.ok) return up.outcome;
      const proof = await this.proveAppDrained();
      if (proof) return proof;
      if (this.frontier) {
        // Not stored: the handoff data the controller passes back must stay what stop returned.
        const frontier = await this.withGrownPartitions(this.frontier);
        const refused = await this.commitToApp(frontier);
        if (refused) return refused;
        const visible = await awaitCommitted(
          this.link.admin,
          this.config.appGroup,
          this.config.sourceTopic,
          frontier,
          this.timing.stepTimeoutMs,
        );
        if (!visible)
          return pending('in-flight', `the handback commit to ${this.config.appGroup} is not visible yet`);
      }
      this.phase = 'handed-off';
      this.log.info('engine.handed-off', {
        frontier: this.frontier ? describeOffsets(this.frontier) : 'none',
      });
      return this.done({ moved: 0 });
    });
  }

  verifyCleanupReady(): Promise<Outcome<CleanupReadyResult>> {
    return this.step('verifyCleanupReady', async () => {
      const allowed: EnginePhase[] = ['handed-off', 'aborted', 'cleaned'];
      if (!allowed.includes(this.phase)) return wrongPhase('verifyCleanupReady', this.phase, allowed);
      if (this.phase === 'cleaned') return this.done({ shadows: [] });
      const up = await this.up();
      if (!up.ok) return up.outcome;
      const names: string[] = [];
      for (const request of this.cleanupProofs()) {
        const proof = await prove(this.link, request, this.timing);
        if (!proof.ok) return pending(proof.code, `not ready for cleanup: ${proof.reason}`);
        if (proof.exists) names.push(request.topic);
      }
      return this.done({ shadows: names });
    });
  }

  cleanup(): Promise<Outcome<CleanupResult>> {
    return this.step('cleanup', async () => {
      if (this.phase === 'cleaned') return this.done({ deleted: [], retained: this.retained });
      const allowed: EnginePhase[] = ['handed-off', 'aborted'];
      if (!allowed.includes(this.phase)) return wrongPhase('cleanup', this.phase, allowed);
      const up = await this.up();
      if (!up.ok) return up.outcome;
      const deleted: string[] = [];
      for (const request of this.cleanupProofs()) {
        const proof = await prove(this.link, request, this.timing);
        if (!proof.ok) return pending(proof.code, `${request.topic} is kept: ${proof.reason}`);
        if (!proof.exists) continue;
        if (!(await deleteTopic(this.link.admin, request.topic, this.timing.stepTimeoutMs))) {
          return pending('broker-unavailable', `the broker still lists ${request.topic} after its deletion`);
        }
        deleted.push(request.topic);
        this.log.info('shadow.deleted', { shadow: request.topic });
      }
      const groups = [
        this.config.appShadowGroup,
        this.config.splitterGroup,
        ...this.allRoutes().flatMap((r) => [r.sessionGroup, r.drainGroup]),
      ];
      const leaked = await deleteGroups(this.link.admin, groups);
      // The split is over either way; a group left behind is reported, never a reason to undo.
      for (const group of leaked) this.log.warn('cleanup.leak', { group });
      this.phase = 'cleaned';
      this.log.info('engine.cleaned', { deleted: deleted.length, leaked: leaked.length });
      return this.done({ deleted, retained: this.retained });
    });
  }

  recover(checkpoint: Checkpoint, published?: PublishedRoutes): Promise<Outcome<RecoverResult>> {
    return this.step('recover', async () => {
      if (this.phase !== 'new') {
        const same = JSON.stringify(checkpoint) === JSON.stringify(this.checkpoint());
        return same
          ? this.done<RecoverResult>({ phase: this.phase })
          : wrongPhase('recover', this.phase, ['new']);
      }
      const decoded = decodeCheckpoint(checkpoint);
      if (!decoded.ok) {
        return degraded(
          'checkpoint-mismatch',
          decoded.problem,
          'pass the checkpoint this queue last returned',
        );
      }
      const s = decoded.state;
      if (!this.mine(s)) {
        return degraded(
          'checkpoint-mismatch',
          'the checkpoint belongs to another activation or names other resources',
          'recover with the checkpoint recorded for this activation and epoch',
        );
      }
      const table = RouteTable.build(s.generation, s.routes, this.config.appShadow, [
        this.config.sourceTopic,
      ]);
      if (!table.ok) {
        return degraded(
          'checkpoint-mismatch',
          'the checkpoint route table is invalid',
          'recover with an intact checkpoint',
        );
      }
      this.table = table.value;
      this.removed.clear();
      for (const r of s.removed) this.removed.set(r.routeId, r);
      this.retained = [...s.retained];
      this.partitions = s.partitions;
      this.seed = s.seed ? toMap(s.seed) : null;
      this.frontier = s.frontier ? toMap(s.frontier) : null;
      if (s.phase !== 'new' && s.phase !== 'cleaned' && s.phase !== 'closed') {
        const up = await this.up(); // takes the fence: an older engine on this split stops here
        if (!up.ok) return up.outcome;
      }
      if (s.phase === 'running') {
        const stale = await installPublished(
          published,
          this.table.generation,
          (g, r) => this.installTable(g, r),
          this.log,
        );
        if (stale) return stale;
        const started = await this.startPump();
        if (started) return started;
      }
      this.phase = s.phase === 'closed' ? 'new' : s.phase;
      this.log.info('engine.recovered', { phase: this.phase, generation: this.table.generation });
      return this.done<RecoverResult>({ phase: this.phase });
    });
  }

  /** End minus committed offsets per shadow and its consumer group: an upper bound, since
   * transaction markers take offsets too (proofs count records instead; see backlog.ts). */
  shadowLag(): Promise<ShadowLag> {
    const groups = new Map<string, string>([
      [this.config.appShadow, this.config.appShadowGroup],
      ...(this.table.routes as readonly KafkaRoute[]).map((r): [string, string] => [
        r.shadow,
        r.sessionGroup,
      ]),
    ]);
    return sumLag(
      async (topic) => {
        const [ends, committed] = await Promise.all([
          this.link.admin.fetchTopicOffsets(topic),
          committedOffsets(this.link.admin, groups.get(topic)!, topic),
        ]);
        let gap = 0n;
        for (const { from, end } of offsetGaps(ends, committed).values()) gap += BigInt(end) - BigInt(from);
        return Number(gap);
      },
      this.config.appShadow,
      [...groups.keys()].slice(1),
    );
  }

  status(): EngineStatus {
    const conditions = this.conditions();
    const count = (routeId: string) => this.published.get(routeId) ?? 0;
    return {
      provider: PROVIDER,
      activationId: this.config.activationId,
      epoch: this.config.epoch,
      phase: this.phase,
      generation: this.table.generation,
      health: conditions.length > 0 ? 'degraded' : 'ok',
      conditions,
      connected: this.link.connected,
      routes: [
        ...this.table.routes.map((r) => ({
          routeId: r.routeId,
          shadow: r.shadow,
          state: 'active' as const,
          published: count(r.routeId),
        })),
        ...[...this.removed.values()].map((r) => ({
          routeId: r.routeId,
          shadow: r.shadow,
          state: 'removed' as const,
          published: count(r.routeId),
        })),
      ],
      app: { shadow: this.config.appShadow, published: count('') },
      inFlight: this.barrier.total,
      retrying: this.pump.parkedCount,
      retained: this.retained,
    };
  }

  async close(): Promise<void> {
    if (this.phase === 'closed') return;
    await this.serial.run(async () => {
      // What the pump copied but did not commit is copied again by the successor (a duplicate
      // at worst); stop() commits it when it can.
      await this.pump.stop();
      await this.link.close();
      this.phase = 'closed';
      this.log.info('engine.closed');
    });
  }

  // ---- internals ---------------------------------------------------------------------------

  private step<T>(name: string, op: () => Promise<Outcome<T>>): Promise<Outcome<T>> {
    return this.serial.run(async () => {
      if (this.link.fenced && this.phase !== 'closed') return this.fencedOutcome();
      try {
        const outcome = await op();
        if (outcome.kind !== 'done') this.log.info('step.not-done', { step: name, kind: outcome.kind });
        return outcome;
      } catch (err) {
        // Broker operations fail when a connection drops mid-step; steps are idempotent, so
        // the controller simply retries.
        this.log.warn('step.failed', { step: name, error: errorName(err) ?? describeError(err) });
        return pending(
          'broker-unavailable',
          `${name} failed: ${errorName(err) ?? describeError(err)}`,
          1_000,
        );
      }
    });
  }

  private done<T>(value: T): Outcome<T> {
    return { kind: 'done', value, checkpoint: this.checkpoint() };
  }

  private checkpoint(): Checkpoint {
    const c = this.config;
    const state: KafkaState = {
      activationId: c.activationId,
      epoch: c.epoch,
      sourceTopic: c.sourceTopic,
      appGroup: c.appGroup,
      appShadow: c.appShadow,
      appShadowGroup: c.appShadowGroup,
      splitterGroup: c.splitterGroup,
      transactionalId: c.transactionalId,
      phase: this.phase,
      partitions: this.partitions,
      generation: this.table.generation,
      routes: this.table.routes as readonly KafkaRoute[],
      removed: [...this.removed.values()],
      retained: this.retained,
      seed: this.seed ? toList(this.seed) : null,
      frontier: this.frontier ? toList(this.frontier) : null,
    };
    return encodeCheckpoint(state);
  }

  private mine(s: KafkaState): boolean {
    const c = this.config;
    return (
      s.activationId === c.activationId &&
      s.epoch === c.epoch &&
      s.sourceTopic === c.sourceTopic &&
      s.appGroup === c.appGroup &&
      s.appShadow === c.appShadow &&
      s.appShadowGroup === c.appShadowGroup &&
      s.splitterGroup === c.splitterGroup &&
      s.transactionalId === c.transactionalId
    );
  }

  private prepareResult(): PrepareResult {
    return { sourceKind: 'topic', shadows: [this.config.appShadow], warnings: [] };
  }

  private handoff(): HandoffData {
    return {
      provider: PROVIDER,
      data: {
        activationId: this.config.activationId,
        sourceTopic: this.config.sourceTopic,
        appGroup: this.config.appGroup,
        frontier: this.frontier ? toList(this.frontier) : null,
      },
    };
  }

  private select(headers: RecordHeaders): PumpSelection {
    const table = this.table;
    const { routeId, destination } = table.select(kafkaHeaders(headers));
    return { routeId, destination, generation: table.generation };
  }

  /** Installs a newer route table: its shadows and session groups first, then the swap (from
   * then on every record is selected under `generation`). Used by `reconcileRoutes` and by
   * `recover` before it restarts the pump. */
  private async installTable(
    generation: number,
    routes: readonly RouteSpec[],
  ): Promise<Outcome<never> | undefined> {
    const current = this.table;
    const named = routes.flatMap((r, i) => validateRouteNames(r, i, this.config));
    if (named.length > 0) return rejected(named);
    const built = RouteTable.build(generation, routes, this.config.appShadow, [this.config.sourceTopic]);
    if (!built.ok) return rejected(built.errors);
    const moved = routes.findIndex((r) => {
      const known = current.route(r.routeId)?.shadow ?? this.removed.get(r.routeId)?.shadow;
      return known !== undefined && known !== r.shadow;
    });
    if (moved >= 0) {
      return rejected([
        {
          path: `routes[${moved}].shadow`,
          problem: `route ${routes[moved]?.routeId} already has another shadow`,
          fix: "a route's shadow never changes; give a new shadow a new route id",
        },
      ]);
    }
    const up = await this.up();
    if (!up.ok) return up.outcome;
    for (const [i, route] of (routes as readonly KafkaRoute[]).entries()) {
      if (current.route(route.routeId) || this.removed.has(route.routeId)) continue;
      const made = await this.createShadow(route.shadow, this.partitions, `routes[${i}].shadow`);
      if (made) return made;
      const zeros = new Map(Array.from({ length: this.partitions }, (_, p) => [p, '0'] as const));
      const notPinned = await this.startAt(route.sessionGroup, route.shadow, zeros);
      if (notPinned) return pending('consumers-attached', notPinned, 2_000);
    }
    for (const old of current.routes as readonly KafkaRoute[]) {
      if (!built.value.route(old.routeId)) {
        this.removed.set(old.routeId, {
          routeId: old.routeId,
          shadow: old.shadow,
          sessionGroup: old.sessionGroup,
          drainGroup: old.drainGroup,
        });
      }
    }
    for (const route of routes) this.removed.delete(route.routeId);
    this.table = built.value; // from here on every record is selected under `generation`
    this.log.info('engine.routes', {
      generation,
      routes: routes.length,
      filterKeys: routes.map((r) => Object.keys(r.filter).join('+')).join(' '),
    });
    return undefined;
  }

  private async up(): Promise<Up> {
    const state = await this.link.up();
    if (state.ok) return { ok: true };
    if (state.fenced) {
      this.fenced(state.reason);
      return { ok: false, outcome: this.fencedOutcome() };
    }
    return { ok: false, outcome: pending('broker-unavailable', state.reason, 2_000) };
  }

  private fenced(reason: string): void {
    if (this.fencedSince) return;
    this.fencedSince = new Date().toISOString();
    this.log.warn('engine.fenced', { reason });
    // A fenced engine must not touch the split again: close every client now.
    void this.link.close().catch(() => undefined);
  }

  private fencedOutcome(): Outcome<never> {
    return degraded(
      'fenced',
      this.link.fenced ?? 'a newer engine holds the transactional id',
      'make sure only one queue-agent serves this queue; this engine has closed its clients',
    );
  }

  /** Seeds (first start only) and starts the pump from the splitter group's offsets. */
  private async startPump(): Promise<Outcome<never> | undefined> {
    const admin = this.link.admin;
    const c = this.config;
    const from = await committedOffsets(admin, c.splitterGroup, c.sourceTopic);
    const unset = Array.from({ length: this.partitions }, (_, p) => p).filter((p) => !from.has(p));
    if (unset.length === this.partitions && this.seed === null) {
      // First start: the application must be gone from the source, or it would consume past
      // the seed while the pump copies the same records.
      const app = await describeGroup(admin, c.appGroup);
      if (app.members.length > 0) return this.liveMembers(app.members);
      const plan = await readSeedPlan(admin, c.appGroup, c.sourceTopic, this.partitions, c.offsetReset);
      const refused = await this.commitToApp(plan.pin);
      if (refused) return refused;
      this.seed = plan.seed;
      this.log.info('pump.seeded', { seed: describeOffsets(plan.seed), pinned: plan.pin.size });
    }
    this.seed ??= await this.readSeed();
    if (unset.length > 0) {
      // Only partitions the splitter never committed: the seed, or 0 for partitions the source
      // gained during the split (every record in them is newer than the activation).
      const fill = new Map(unset.map((p) => [p, this.seed?.get(p) ?? '0'] as const));
      const seeded = await commitGuarded(this.link.wire, admin, c.splitterGroup, c.sourceTopic, fill);
      if (!seeded.ok) {
        return pending(
          'consumers-attached',
          `the splitter group has members (${describeMembers(seeded.members)})`,
        );
      }
      for (const [p, o] of fill) from.set(p, o);
    }
    this.pump.start(from, this.partitions);
    return undefined;
  }

  /** After a restart between seeding and the checkpoint: the app group was pinned, so its
   * commits are the seed. */
  private async readSeed(): Promise<Map<number, string>> {
    return committedOffsets(this.link.admin, this.config.appGroup, this.config.sourceTopic);
  }

  private async stopPump(): Promise<Outcome<never> | undefined> {
    const stopped = await this.pump.stop();
    if (this.link.fenced) return this.fencedOutcome();
    if (!stopped) return pending('in-flight', 'the final splitter offset commit failed; retry stop');
    const frontier = this.pump.frontier();
    const visible = await awaitCommitted(
      this.link.admin,
      this.config.splitterGroup,
      this.config.sourceTopic,
      frontier,
      this.timing.stepTimeoutMs,
    );
    if (!visible) return pending('in-flight', 'the splitter offsets are not visible in the group yet');
    this.frontier = await this.withGrownPartitions(frontier);
    return undefined;
  }

  /** Source partitions the pump never read (grown since its last partition check) go back at
   * their log start: nothing of them was copied, and without a commit an application that
   * resets to `latest` would skip them (issue 13 case 4). Read at stop and again at handoff. */
  private async withGrownPartitions(frontier: ReadonlyMap<number, string>): Promise<Map<number, string>> {
    const out = new Map(frontier);
    const offsets = await this.link.admin.fetchTopicOffsets(this.config.sourceTopic);
    for (const o of offsets) {
      if (out.has(o.partition)) continue;
      out.set(o.partition, o.low);
      this.log.info('engine.grown-partition-handed-back', { partition: o.partition });
    }
    return out;
  }

  /** Commits to the application group from outside; live members refuse it (UNKNOWN_MEMBER_ID). */
  private async commitToApp(offsets: ReadonlyMap<number, string>): Promise<Outcome<never> | undefined> {
    if (offsets.size === 0) return undefined;
    const result = await commitGuarded(
      this.link.wire,
      this.link.admin,
      this.config.appGroup,
      this.config.sourceTopic,
      offsets,
    );
    return result.ok ? undefined : this.liveMembers(result.members);
  }

  private liveMembers(members: readonly { clientId: string; host: string }[]): Outcome<never> {
    return pending(
      'consumers-attached',
      `the application group still has live members: ${describeMembers(members) || 'unknown (the broker refused the commit)'}; scale the workload to zero first`,
      2_000,
    );
  }

  /** Pins a group's start where it has no commit yet. A group with live members (the app
   * reading its shadow when the source grows) refuses an outside commit, so the pin then goes
   * in a transaction of the engine's producer, which the broker accepts (issue 13 case 8;
   * DECISIONS.md, "Pinning shadow partitions"). Returns the problem when neither worked. */
  private async startAt(
    group: string,
    topic: string,
    offsets: ReadonlyMap<number, string>,
  ): Promise<string | undefined> {
    const existing = await committedOffsets(this.link.admin, group, topic);
    const missing = new Map([...offsets].filter(([p]) => !existing.has(p)));
    if (missing.size === 0) return undefined;
    const result = await commitGuarded(this.link.wire, this.link.admin, group, topic, missing);
    if (result.ok) return undefined;
    const partitions = [...missing].map(([partition, offset]) => ({ partition, offset }));
    const pinned = await this.link.txn.run(
      (txn) => txn.sendOffsets({ consumerGroupId: group, topics: [{ topic, partitions }] }),
      'start pin',
    );
    if (pinned.ok) {
      this.log.info('group.start-pinned-in-transaction', { group, members: result.members.length });
      return undefined;
    }
    this.log.warn('group.start-not-pinned', { group, members: result.members.length });
    return `the start of group ${group} on ${topic} partitions ${[...missing.keys()].join(',')} cannot be pinned while it has ${result.members.length} live member(s) (${pinned.reason}): a member resetting to latest would skip what is copied there`;
  }

  private async createShadow(
    topic: string,
    partitions: number,
    path: string,
  ): Promise<Outcome<never> | undefined> {
    const shape = await shadowShapeOf(this.link.admin, this.config.sourceTopic);
    const shadow = await ensureShadow(this.link.admin, topic, partitions, shape);
    if (shadow.ok) return undefined;
    // Refuse cleanly: a shadow this call created is ours and empty, so it goes again.
    if (shadow.created)
      await deleteTopic(this.link.admin, topic, this.timing.stepTimeoutMs).catch(() => false);
    return rejected([
      {
        path,
        problem: shadow.problem,
        fix: "allow retention.ms=-1, retention.bytes=-1, cleanup.policy=delete, message.timestamp.type=CreateTime and the source's replication factor, min.insync.replicas and max.message.bytes on queue-split topics, or record a fresh shadow name",
      },
    ]);
  }

  /** Partition growth of the source: every shadow grows first (docs/design.md §7). */
  private async growShadows(partitions: number): Promise<string | undefined> {
    const zeros = new Map<number, string>();
    for (let p = this.partitions; p < partitions; p++) zeros.set(p, '0');
    const shadows: { topic: string; group: string }[] = [
      { topic: this.config.appShadow, group: this.config.appShadowGroup },
      ...this.allRoutes().map((r) => ({ topic: r.shadow, group: r.sessionGroup })),
    ];
    for (const { topic, group } of shadows) {
      try {
        await growShadow(this.link.admin, topic, partitions);
        const notPinned = await this.startAt(group, topic, zeros);
        if (notPinned) return notPinned; // the new source partitions stay unread meanwhile
      } catch (err) {
        return `shadow ${topic} cannot grow to ${partitions} partitions: ${errorName(err) ?? describeError(err)}`;
      }
    }
    this.partitions = partitions;
    return undefined;
  }

  private allRoutes(): RemovedRoute[] {
    return [...(this.table.routes as readonly KafkaRoute[]), ...this.removed.values()];
  }

  private async proveAppDrained(): Promise<Outcome<never> | undefined> {
    const proof = await prove(
      this.link,
      {
        topic: this.config.appShadow,
        groups: [this.config.appShadowGroup],
        backlogGroup: this.config.appShadowGroup,
        action: 'scale the workload to zero',
      },
      this.timing,
    );
    if (proof.ok) return undefined;
    return pending(proof.code, `the application has not drained its shadow: ${proof.reason}`);
  }

  /** What must hold before each remaining shadow goes. After a rollback the application group
   * still covers every copied record on the source, so only membership matters then. */
  private cleanupProofs(): ProofRequest[] {
    const aborted = this.phase === 'aborted';
    return [
      ...this.allRoutes().map((r) => ({
        topic: r.shadow,
        groups: [r.sessionGroup, r.drainGroup],
        ...(aborted ? {} : { backlogGroup: r.sessionGroup }),
        action: 'stop the session consumer',
      })),
      {
        topic: this.config.appShadow,
        groups: [this.config.appShadowGroup],
        ...(aborted ? {} : { backlogGroup: this.config.appShadowGroup }),
        action: 'scale the workload to zero',
      },
    ];
  }

  private afterBarrier(generation: number): Promise<Outcome<RoutesResult>> {
    return this.barrier
      .waitBelow(generation, this.timing.stepTimeoutMs)
      .then((passed) =>
        passed
          ? this.done({ generation, superseded: false })
          : pending(
              'publish-barrier',
              `${this.barrier.pendingBelow(generation)} copies selected before generation ${generation} await their commit`,
            ),
      );
  }

  private conditions(): EngineCondition[] {
    if (this.phase === 'closed') return [];
    return engineConditions(this.link.fenced, this.fencedSince, this.pump.problems());
  }
}

function describeOffsets(offsets: ReadonlyMap<number, string>): string {
  return [...offsets].map(([p, o]) => `${p}:${o}`).join(' ');
}

function sameRoutes(a: readonly RouteSpec[], b: readonly RouteSpec[]): boolean {
  const key = (routes: readonly RouteSpec[]) =>
    routes
      .map((r) => `${r.routeId}\u0000${r.shadow}\u0000${formatFilter(r.filter)}`)
      .sort()
      .join('\u0001');
  return a.length === b.length && key(a) === key(b);
}

export function createKafkaEngine(config: KafkaEngineConfig, deps?: KafkaEngineDeps): Engine {
  return new KafkaEngine(config, deps);
}
