// The RabbitMQ engine (docs/design.md §7): one per logical queue. It consumes the source on one
// fenced connection, copies each message to exactly one shadow queue with confirmed mandatory
// publishes, and drives the drains, rollback, handoff and cleanup the controller asks for.
// This file holds the phase logic; the broker work lives in SourcePump (consuming),
// ShadowWork (proofs, moves, deletes) and AmqpSession (connection and fence).
import { randomUUID } from 'node:crypto';
import { amqpHeaders, formatFilter } from '../../core/filter';
import type {
  AbortResult,
  Checkpoint,
  CleanupReadyResult,
  CleanupResult,
  Engine,
  EngineHooks,
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
import { replyCode } from './amqpErrors';
import { decodeCheckpoint, encodeCheckpoint, PROVIDER } from './checkpoint';
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
import { checkSource, type SourceType } from './preflight';
import { idle, noBacklog, noConsumers } from './probe';

import { AmqpSession, type Link } from './session';
import { ensureRoute, deleteRoutingExchange } from './routing';
import { declareShadow } from './shadows';
import { describeArguments, sameArguments, typeOnly, type ShadowArguments } from './shadowArguments';
import { proveNoPublisher } from './noPublisher';
import { ShadowWork, type Step } from './shadowWork';
import { SourcePump } from './sourcePump';
import { amqpTarget } from './urls';

/** How long a live AMQP fact (a consumer count) must hold before it counts as proven. */
const LIVE_FACT_RECHECK_MS = 1_000;

type Up = { ok: true; link: Link } | { ok: false; outcome: Outcome<never> };

const now = () => new Date().toISOString();

export class RabbitEngine implements Engine {
  readonly provider = PROVIDER;
  private readonly log: Logger;
  private readonly timing: RabbitTiming;
  private readonly management: ManagementClient;
  private readonly session: AmqpSession;
  private readonly barrier = new PublishBarrier();
  private readonly pump: SourcePump;
  private readonly work: ShadowWork;
  private readonly serial = new Serial();
  private readonly hooks: EngineHooks;
  /** The split's routing exchange (routing.ts): named like the application shadow. */
  private readonly exchange: string;

  private phase: EnginePhase = 'new';
  private sourceType: SourceType | undefined;
  /** What the shadows of this activation are declared with: decided in PREPARING, kept in the
   * checkpoint, so a restart declares the same even if the source's policy changed since. */
  private shadowArgs: ShadowArguments | undefined;
  private warnedArgsChanged = false;
  private table: RouteTable;
  /** Routes out of the table whose shadow is not drained yet: routeId → shadow. */
  private readonly removed = new Map<string, string>();
  private retained: RetainedResource[] = [];
  /** Publishes acked per route id ('' = application shadow), since this process started. */
  private readonly published = new Map<string, number>();
  private downSince: string | undefined;
  private fencedSince: string | undefined;

  constructor(
    private readonly config: RabbitEngineConfig,
    deps: RabbitEngineDeps = {},
  ) {
    this.timing = { ...defaultTiming, ...config.timing };
    this.exchange = config.appShadow;
    this.hooks = deps.hooks ?? {};
    this.log = (deps.logger ?? silentLogger).child({
      engine: PROVIDER,
      activation: config.activationId,
      epoch: config.epoch,
      source: config.sourceQueue,
      ...(config.connectionLabel ? { label: config.connectionLabel } : {}),
    });
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
    this.table = RouteTable.empty(config.appShadow);
    this.work = new ShadowWork(
      this.management,
      this.timing,
      target.username,
      prefetch,
      this.exchange,
      this.log,
    );
    this.session = new AmqpSession(
      {
        target,
        lockQueue: config.lockQueue,
        connectionName: `queue-split ${config.activationId}/${config.epoch}${config.connectionLabel ? ` ${config.connectionLabel}` : ''}`,
        reconnectInitialMs: this.timing.reconnectInitialMs,
        reconnectMaxMs: this.timing.reconnectMaxMs,
        logger: this.log,
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
      exchange: this.exchange,
      consumerTag: `queue-split-pump-${randomUUID().slice(0, 8)}`,
      prefetch,
      engineUser: target.username,
      timing: this.timing,
      management: this.management,
      barrier: this.barrier,
      hooks: this.hooks,
      logger: this.log,
      select: (msg) => {
        const table = this.table;
        const { routeId, destination } = table.select(amqpHeaders(msg.properties.headers));
        return { routeId, destination, generation: table.generation };
      },
      onRouted: ({ routeId }) =>
        this.published.set(routeId ?? '', (this.published.get(routeId ?? '') ?? 0) + 1),
      currentLink: () => this.session.current(),
      dropLink: (reason) => this.session.drop(reason),
    });
  }

  // ---- steps ------------------------------------------------------------------------------

  prepare(): Promise<Outcome<PrepareResult>> {
    return this.step('prepare', async () => {
      if (this.phase === 'closed') return wrongPhase('prepare', this.phase, ['new']);
      if (this.phase !== 'new') return this.done(this.prepareResult([]));
      const invalid = validateConfig(this.config);
      if (invalid.length > 0) return rejected(invalid);
      const facts = checkSource(
        this.config.sourceQueue,
        await this.management.getQueue(this.config.sourceQueue),
      );
      if (!facts.ok) return rejected(facts.errors);
      const up = await this.up();
      if (!up.ok) return up.outcome;
      const declared = await declareShadow(
        up.link,
        this.config.appShadow,
        facts.value.shadows.arguments,
        this.exchange,
      );
      if (!declared.ok) {
        return rejected([
          { path: 'appShadow', problem: declared.problem, fix: 'record a fresh shadow name' },
        ]);
      }
      this.sourceType = facts.value.type;
      this.shadowArgs = facts.value.shadows.arguments;
      this.phase = 'prepared';
      const { fromPolicy } = facts.value.shadows;
      this.log.info('engine.prepared', {
        sourceType: facts.value.type,
        shadowArguments: describeArguments(this.shadowArgs),
        ...(fromPolicy.length > 0 ? { fromPolicy: fromPolicy.join(', ') } : {}),
      });
      for (const warning of facts.value.warnings) this.log.warn('engine.policy-not-inherited', { warning });
      return this.done(this.prepareResult(facts.value.warnings));
    });
  }

  start(): Promise<Outcome<Record<string, never>>> {
    return this.step('start', async () => {
      if (this.phase === 'running') return this.done({});
      const allowed: EnginePhase[] = ['prepared', 'stopped', 'app-drained'];
      if (!allowed.includes(this.phase)) return wrongPhase('start', this.phase, allowed);
      const blocked = await this.startPump();
      if (blocked) return blocked;
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
      const keptEarlier = this.retained.filter((r) => r.routeId === routeId);
      // Not in `removed` after a restart that lost it: drain by the recorded shadow name (a
      // shadow already deleted reads as empty), unless it was drained and kept before.
      const shadow =
        this.removed.get(routeId) ?? (keptEarlier.length === 0 && spec.shadow ? spec.shadow : undefined);
      if (shadow === undefined) return this.done({ moved: 0, deleted: [], retained: keptEarlier });
      // docs/design.md §5.3: the route stops receiving before its shadow is drained.
      if (!(await this.barrier.waitBelow(this.table.generation, this.timing.stepTimeoutMs))) {
        return pending(
          'publish-barrier',
          `publishes selected before route ${routeId} left the table await their confirm`,
        );
      }
      const up = await this.up();
      if (!up.ok) return up.outcome;
      const emptied = await this.work.empty(
        up.link,
        shadow,
        this.config.appShadow,
        'the session consumer',
        false,
      );
      if (!emptied.ok) return emptied.outcome;
      const removal = await this.remove(up.link, shadow, routeId);
      if (!removal.ok) return removal.outcome;
      this.removed.delete(routeId);
      this.work.forgetMoves(shadow);
      this.log.info('route.drained', { routeId, moved: emptied.value.moved });
      return this.done({
        moved: emptied.value.moved,
        deleted: removal.value.deleted,
        retained: [...keptEarlier, ...removal.value.retained],
      });
    });
  }

  stop(): Promise<Outcome<StopResult>> {
    return this.step('stop', async () => {
      if (this.phase === 'new' || this.phase === 'closed') return wrongPhase('stop', this.phase, ['running']);
      const unsettled = await this.stopPump();
      if (unsettled) return unsettled;
      if (this.phase === 'running' || this.phase === 'prepared') this.phase = 'stopped';
      this.log.info('engine.stopped');
      return this.done({ handoff: this.handoff() });
    });
  }

  abort(): Promise<Outcome<AbortResult>> {
    return this.step('abort', async () => {
      // After a cleanup nothing is left to restore, whichever way the split ended.
      if (this.phase === 'aborted' || this.phase === 'cleaned') return this.done({ restored: 0 });
      const allowed: EnginePhase[] = ['prepared', 'running', 'stopped', 'app-drained'];
      if (!allowed.includes(this.phase)) return wrongPhase('abort', this.phase, allowed);
      // Cancel every consumer before the rollback republish, or the pump would copy the
      // republished messages straight back into the shadows.
      const unsettled = await this.stopPump();
      if (unsettled) return unsettled;
      const up = await this.up();
      if (!up.ok) return up.outcome;
      let restored = 0;
      for (const { shadow } of this.shadows()) {
        const who = 'its consumers (scale the app to zero, detach sessions)';
        const emptied = await this.work.empty(up.link, shadow, this.config.sourceQueue, who, true);
        if (!emptied.ok) return emptied.outcome;
        restored += emptied.value.moved;
      }
      for (const { shadow } of this.shadows()) this.work.forgetMoves(shadow);
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
      const proof = await this.work.prove(up.link, this.config.appShadow, noBacklog);
      if (!proof.ok) return pending('backlog', `the application has not drained its shadow: ${proof.reason}`);
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
      // The app reads the source next: what it left in its shadow (deliveries it held unacked
      // when it scaled down come back as ready) moves there first.
      const who = 'the application (scale it to zero)';
      const emptied = await this.work.empty(
        up.link,
        this.config.appShadow,
        this.config.sourceQueue,
        who,
        true,
      );
      if (!emptied.ok) return emptied.outcome;
      this.work.forgetMoves(this.config.appShadow);
      this.phase = 'handed-off';
      this.log.info('engine.handed-off', { moved: emptied.value.moved });
      return this.done({ moved: emptied.value.moved });
    });
  }

  verifyCleanupReady(): Promise<Outcome<CleanupReadyResult>> {
    return this.step('verifyCleanupReady', async () => {
      const allowed: EnginePhase[] = ['handed-off', 'aborted', 'cleaned'];
      if (!allowed.includes(this.phase)) return wrongPhase('verifyCleanupReady', this.phase, allowed);
      const up = await this.up();
      if (!up.ok) return up.outcome;
      const names: string[] = [];
      for (const { shadow } of this.shadows()) {
        const proof = await this.work.prove(up.link, shadow, idle);
        if (!proof.ok) return pending('backlog', `not ready for cleanup: ${proof.reason}`);
        if (proof.counts.exists) names.push(shadow);
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
      for (const { shadow, routeId } of this.shadows()) {
        // Never delete what is not proven idle: a shadow with a backlog stays, and says why.
        const removal = await this.remove(up.link, shadow, routeId);
        if (!removal.ok) return removal.outcome;
        deleted.push(...removal.value.deleted);
      }
      // Last, once every shadow is gone (routing.ts): nothing publishes through it any more. A
      // restart before `cleaned` is recorded runs this step again and deletes it then.
      await deleteRoutingExchange(up.link, this.exchange);
      this.log.info('exchange.deleted', { exchange: this.exchange });
      this.phase = 'cleaned';
      this.log.info('engine.cleaned', { deleted: deleted.length, retained: this.retained.length });
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
      if (!decoded.ok)
        return degraded(
          'checkpoint-mismatch',
          decoded.problem,
          'pass the checkpoint this queue last returned',
        );
      const s = decoded.state;
      const c = this.config;
      if (
        s.activationId !== c.activationId ||
        s.epoch !== c.epoch ||
        s.sourceQueue !== c.sourceQueue ||
        s.appShadow !== c.appShadow ||
        s.lockQueue !== c.lockQueue
      ) {
        return degraded(
          'checkpoint-mismatch',
          'the checkpoint belongs to another activation or names other resources',
          'recover with the checkpoint recorded for this activation and epoch',
        );
      }
      const table = RouteTable.build(s.generation, s.routes, c.appShadow, [c.sourceQueue, c.lockQueue]);
      if (!table.ok)
        return degraded(
          'checkpoint-mismatch',
          'the checkpoint route table is invalid',
          'recover with an intact checkpoint',
        );
      this.table = table.value;
      this.sourceType = s.sourceType;
      this.shadowArgs = s.shadowArguments ?? (s.sourceType ? typeOnly(s.sourceType) : undefined);
      this.removed.clear();
      for (const r of s.removed) this.removed.set(r.routeId, r.shadow);
      this.retained = [...s.retained];
      // Every phase that still touches the broker takes the fence first.
      if (s.phase !== 'new' && s.phase !== 'cleaned' && s.phase !== 'closed') {
        const up = await this.up();
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
        const blocked = await this.startPump();
        if (blocked) return blocked;
      }
      this.phase = s.phase === 'closed' ? 'new' : s.phase;
      this.log.info('engine.recovered', { phase: this.phase, generation: this.table.generation });
      return this.done<RecoverResult>({ phase: this.phase });
    });
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
      this.table.routes.map((r) => r.shadow),
    );
  }

  status(): EngineStatus {
    const found = this.phase === 'closed' ? [] : this.conditionList();
    const count = (routeId: string) => this.published.get(routeId) ?? 0;
    return {
      provider: PROVIDER,
      activationId: this.config.activationId,
      epoch: this.config.epoch,
      phase: this.phase,
      generation: this.table.generation,
      health: found.length > 0 ? 'degraded' : 'ok',
      conditions: found,
      connected: this.session.current() !== undefined,
      routes: [
        ...this.table.routes.map((r) => ({
          routeId: r.routeId,
          shadow: r.shadow,
          state: 'active' as const,
          published: count(r.routeId),
        })),
        ...[...this.removed].map(([routeId, shadow]) => ({
          routeId,
          shadow,
          state: 'removed' as const,
          published: count(routeId),
        })),
      ],
      app: { shadow: this.config.appShadow, published: count('') },
      inFlight: this.barrier.total,
      retrying: this.pump.retrying,
      retained: this.retained,
    };
  }

  async close(): Promise<void> {
    if (this.phase === 'closed') return;
    await this.serial.run(async () => {
      // Settle what settles quickly; whatever cannot goes back to the source when the
      // connection closes (a duplicate at worst).
      await this.pump.stop(2_000);
      await this.session.close();
      this.phase = 'closed';
      this.log.info('engine.closed');
    });
  }

  // ---- internals ---------------------------------------------------------------------------

  private step<T>(name: string, op: () => Promise<Outcome<T>>): Promise<Outcome<T>> {
    return this.serial.run(async () => {
      const started = Date.now();
      try {
        const outcome = await op();
        const fields = { step: name, kind: outcome.kind, ms: Date.now() - started };
        if (outcome.kind === 'done') this.log.debug('step.done', fields);
        else
          this.log.info('step.not-done', {
            ...fields,
            ...(outcome.kind === 'pending' ? { code: outcome.code } : {}),
          });
        return outcome;
      } catch (err) {
        // Broker operations fail when the connection drops mid-step; steps are idempotent,
        // so the controller simply retries.
        this.log.warn('step.failed', { step: name, code: replyCode(err), error: describeError(err) });
        return pending('broker-unavailable', `${name} failed: ${describeError(err)}`, 1_000);
      }
    });
  }

  private done<T>(value: T): Outcome<T> {
    return { kind: 'done', value, checkpoint: this.checkpoint() };
  }

  private checkpoint(): Checkpoint {
    const c = this.config;
    return encodeCheckpoint({
      activationId: c.activationId,
      epoch: c.epoch,
      sourceQueue: c.sourceQueue,
      appShadow: c.appShadow,
      lockQueue: c.lockQueue,
      phase: this.phase,
      ...(this.sourceType ? { sourceType: this.sourceType } : {}),
      ...(this.shadowArgs ? { shadowArguments: this.shadowArgs } : {}),
      generation: this.table.generation,
      routes: this.table.routes,
      removed: [...this.removed].map(([routeId, shadow]) => ({ routeId, shadow })),
      retained: this.retained,
    });
  }

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

  private handoff(): HandoffData {
    const { sourceQueue, activationId } = this.config;
    return { provider: PROVIDER, data: { sourceQueue, activationId } };
  }

  /** Installs a newer route table: its shadows first, then the swap (from then on every
   * delivery is selected under `generation`). Used by `reconcileRoutes` and by `recover`
   * before it restarts the pump. */
  private async installTable(
    generation: number,
    routes: readonly RouteSpec[],
  ): Promise<Outcome<never> | undefined> {
    const current = this.table;
    const reserved = [this.config.sourceQueue, this.config.lockQueue];
    const built = RouteTable.build(generation, routes, this.config.appShadow, reserved);
    if (!built.ok) return rejected(built.errors);
    const moved = routes.findIndex((r) => {
      const known = current.route(r.routeId)?.shadow ?? this.removed.get(r.routeId);
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
    for (const [i, route] of routes.entries()) {
      if (current.route(route.routeId)) continue;
      const declared = await declareShadow(up.link, route.shadow, this.shadowArguments(), this.exchange);
      if (!declared.ok) {
        return rejected([
          { path: `routes[${i}].shadow`, problem: declared.problem, fix: 'record a fresh shadow name' },
        ]);
      }
    }
    for (const old of current.routes) {
      if (!built.value.route(old.routeId)) this.removed.set(old.routeId, old.shadow);
    }
    for (const route of routes) this.removed.delete(route.routeId);
    this.table = built.value; // from here on every delivery is selected under `generation`
    this.log.info('engine.routes', {
      generation,
      routes: routes.length,
      filterKeys: routes.map((r) => Object.keys(r.filter).join('+')).join(' '), // keys only: values are header values
    });
    return undefined;
  }

  private async up(): Promise<Up> {
    const result = await this.session.ensureUp();
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

  /** Preflight again, prove nobody else consumes the source, then consume it. */
  private async startPump(): Promise<Outcome<never> | undefined> {
    const up = await this.up();
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
    // consumer count is a live AMQP fact, not a lagging statistic: a short recheck catches a
    // cancel or a reconnect in flight, and the pump's own consume is refused by an exclusive one.
    const quiet = await this.work.prove(
      up.link,
      this.config.sourceQueue,
      noConsumers,
      Math.min(this.timing.quiesceMs, LIVE_FACT_RECHECK_MS),
    );
    if (!quiet.ok) return pending('consumers-attached', `the source still has consumers: ${quiet.reason}`);
    // Idempotent: after a restart, or an exchange removed behind the engine, every destination
    // the pump may select is bound again before the first copy.
    for (const shadow of [this.config.appShadow, ...this.table.routes.map((r) => r.shadow)]) {
      const bound = await ensureRoute(up.link, this.exchange, shadow);
      if (!bound.ok)
        return rejected([{ path: 'appShadow', problem: bound.problem, fix: 'record a fresh shadow name' }]);
    }
    const started = await this.pump.start(up.link, this.sourceType === 'quorum');
    if (started === 'refused')
      return pending('consumers-attached', 'another consumer holds the source exclusively');
    return undefined;
  }

  private async stopPump(): Promise<Outcome<never> | undefined> {
    if (await this.pump.stop(this.timing.stepTimeoutMs)) return undefined;
    return pending('in-flight', `${this.pump.open} source deliveries still wait for their shadow confirm`);
  }

  private async afterBarrier(generation: number): Promise<Outcome<RoutesResult>> {
    if (await this.barrier.waitBelow(generation, this.timing.stepTimeoutMs)) {
      return this.done({ generation, superseded: false });
    }
    const open = this.barrier.pendingBelow(generation);
    return pending(
      'publish-barrier',
      `${open} publishes selected before generation ${generation} await their confirm`,
    );
  }

  /** The shadows this engine still answers for: active and removed routes, then the app's. */
  private shadows(): { shadow: string; routeId: string | undefined }[] {
    const kept = new Set(this.retained.map((r) => r.name));
    const routes: { shadow: string; routeId: string | undefined }[] = [
      ...this.table.routes.map((r) => ({ shadow: r.shadow, routeId: r.routeId })),
      ...[...this.removed].map(([routeId, shadow]) => ({ shadow, routeId })),
    ];
    return [...routes, { shadow: this.config.appShadow, routeId: undefined }].filter(
      (s) => !kept.has(s.shadow),
    );
  }

  /** docs/design.md §5.4: a shadow is removed only with a proof that nothing publishes to it. */
  private async remove(
    link: Link,
    shadow: string,
    routeId: string | undefined,
  ): Promise<Step<{ deleted: string[]; retained: RetainedResource[] }>> {
    const isApp = shadow === this.config.appShadow;
    const noPublisher = proveNoPublisher({
      link,
      shadow,
      // Only a pump that consumes (or will resume) selects destinations.
      selectable: this.pump.active && (isApp || this.table.routes.some((r) => r.shadow === shadow)),
      openOlderPublishes:
        isApp || !this.pump.active ? this.barrier.total : this.barrier.pendingBelow(this.table.generation),
      activeMoves: this.work.activeMoves,
    });
    if (!noPublisher.ok)
      return { ok: false, outcome: pending('in-flight', `${shadow} is kept: ${noPublisher.reason}`) };
    const hook = this.hooks.beforeShadowDelete;
    const removal = await this.work.remove(
      noPublisher.proof,
      shadow,
      this.sourceType ?? 'classic',
      routeId,
      hook ? (name) => hook({ shadow: name }) : undefined,
    );
    if (removal.ok)
      this.retained = [...this.retained.filter((r) => r.name !== shadow), ...removal.value.retained];
    return removal;
  }

  private conditionList() {
    const fenced = this.session.fenced;
    return conditions({
      sourceQueue: this.config.sourceQueue,
      fenced: fenced && this.fencedSince ? { reason: fenced, since: this.fencedSince } : undefined,
      downSince: this.phase === 'new' ? undefined : this.downSince,
      foreign: this.pump.foreign,
      sourceLostSince: this.pump.sourceLostSince,
      publishProblems: this.pump.problems,
    });
  }
}

function sameRoutes(a: readonly RouteSpec[], b: readonly RouteSpec[]): boolean {
  const key = (routes: readonly RouteSpec[]) =>
    routes
      .map((r) => `${r.routeId}\u0000${r.shadow}\u0000${formatFilter(r.filter)}`)
      .sort()
      .join('\u0001');
  return a.length === b.length && key(a) === key(b);
}

export function createRabbitEngine(config: RabbitEngineConfig, deps?: RabbitEngineDeps): Engine {
  return new RabbitEngine(config, deps);
}
