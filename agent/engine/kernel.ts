// The engine kernel (docs/design.md §7, docs/architecture.md "Engines"): the part of every engine
// that is the same whatever the broker. It runs each step one at a time behind the phase table
// (phases.ts), keeps the route table with its generation check, the removed and retained
// routes, the publish barrier and the published counts, writes checkpoints and recovers from
// them, and reports status. The provider's broker port (port.ts) does the broker work.
import { degraded, pending, rejected, wrongPhase } from './outcome';
import {
  ENGINE_PHASES,
  type AppQueue,
  type AbortResult,
  type Checkpoint,
  type CleanupReadyResult,
  type CleanupResult,
  type Engine,
  type EnginePhase,
  type EngineStatus,
  type HandoffData,
  type HandoffResult,
  type Outcome,
  type PrepareResult,
  type PublishedRoutes,
  type RecoverResult,
  type RetainedResource,
  type RouteDrainResult,
  type RoutesResult,
  type RouteSpec,
  type ShadowLag,
  type StopResult,
} from './contract';
import { describeError, type Logger } from '../log';
import { phaseRule, STEP_PHASES, type StepName } from './phases';
import type { Blocked, BrokerPort, EngineView, KernelState, RemovedRoute } from './port';
import { PublishBarrier } from './publishBarrier';
import { installPublished } from './recoverRoutes';
import { RouteTable } from './routeTable';
import { Serial } from './serial';

/** Phases whose engine still touches the broker after a restart, and so takes the fence first. */
const LIVE_PHASES: readonly EnginePhase[] = ENGINE_PHASES.filter(
  (phase) => phase !== 'new' && phase !== 'cleaned' && phase !== 'closed',
);

/** A bug in this code, not a broker that failed: retrying cannot help, so it is not `pending`. */
export function isProgrammingError(err: unknown): boolean {
  return err instanceof TypeError || err instanceof ReferenceError || err instanceof RangeError;
}

export class EngineKernel<R extends RemovedRoute, S extends KernelState<R>> implements Engine {
  readonly provider: string;
  private readonly port: BrokerPort<R, S>;
  private readonly serial = new Serial();
  private readonly barrier = new PublishBarrier();
  private phase: EnginePhase = 'new';
  private table: RouteTable;
  private readonly removed = new Map<string, R>();
  private retained: RetainedResource[] = [];
  /** Publishes acknowledged per route id ('' = application shadow), since this process started. */
  private readonly published = new Map<string, number>();

  /** `port` is built with the view it reads the kernel through (its pump selects under the
   * table in force). */
  constructor(
    port: (view: EngineView<R>) => BrokerPort<R, S>,
    private readonly log: Logger,
  ) {
    // Object-literal getters cannot be arrows: the view reads the kernel's fields live through this.
    // eslint-disable-next-line @typescript-eslint/no-this-alias
    const kernel = this;
    const view: EngineView<R> = {
      get phase() {
        return kernel.phase;
      },
      get table() {
        return kernel.table;
      },
      get removed() {
        return kernel.removed;
      },
      get retained() {
        return kernel.retained;
      },
      barrier: this.barrier,
      select: (message) => {
        const table = this.table;
        const { routeId, destination } = table.select(message);
        return { routeId, destination, generation: table.generation };
      },
      countPublished: (routeId) =>
        this.published.set(routeId ?? '', (this.published.get(routeId ?? '') ?? 0) + 1),
      retain: (shadow, kept) => {
        this.retained = [...this.retained.filter((r) => r.name !== shadow), ...kept];
      },
    };
    this.port = port(view);
    this.provider = this.port.provider;
    this.table = RouteTable.empty(this.port.appShadow);
  }

  // ---- steps ------------------------------------------------------------------------------

  prepare(): Promise<Outcome<PrepareResult>> {
    return this.step(
      'prepare',
      () => this.done(this.port.prepared()),
      async () => {
        const prepared = await this.port.prepare();
        if (!prepared.ok) return prepared.outcome;
        this.phase = 'prepared';
        this.log.info('engine.prepared', prepared.log);
        return this.done(prepared.value);
      },
    );
  }

  start(): Promise<Outcome<Record<string, never>>> {
    return this.step(
      'start',
      () => this.done({}),
      async () => {
        const blocked = await this.port.start();
        if (blocked) return blocked;
        this.phase = 'running';
        this.log.info('engine.started', { generation: this.table.generation });
        return this.done({});
      },
    );
  }

  reconcileRoutes(generation: number, routes: readonly RouteSpec[]): Promise<Outcome<RoutesResult>> {
    return this.step<RoutesResult>('reconcileRoutes', undefined, async () => {
      const current = this.table;
      if (generation < current.generation)
        return this.done({ generation: current.generation, superseded: true });
      if (generation > current.generation) {
        const failed = await this.installTable(generation, routes);
        if (failed) return failed;
      } else if (!current.sameRoutes(routes)) {
        return rejected([
          {
            path: 'generation',
            problem: `generation ${generation} is already installed with a different route table`,
            fix: 'publish route changes under a new generation',
          },
        ]);
      }
      // Done only once every publish selected under an older table is acknowledged.
      if (await this.barrier.waitBelow(generation, this.port.stepTimeoutMs))
        return this.done({ generation, superseded: false });
      const { what, awaits } = this.port.inFlight;
      return pending(
        'publish-barrier',
        `${this.barrier.pendingBelow(generation)} ${what} selected before generation ${generation} await their ${awaits}`,
      );
    });
  }

  drainRoute(spec: RouteSpec): Promise<Outcome<RouteDrainResult>> {
    const routeId = spec.routeId;
    return this.step<RouteDrainResult>('drainRoute', undefined, async () => {
      if (this.table.route(routeId)) {
        return pending(
          'route-active',
          `route ${routeId} is still in the route table; reconcile without it first`,
        );
      }
      const kept = this.retained.filter((r) => r.routeId === routeId);
      // Not in `removed` after a restart that lost it: drain by the names the controller
      // recorded (a shadow already deleted drains as empty), unless it was drained and kept.
      const route =
        this.removed.get(routeId) ?? (kept.length === 0 ? this.port.recordedRoute(spec) : undefined);
      if (!route) return this.done({ moved: 0, deleted: [], retained: kept });
      // docs/design.md §5.3: the route stops receiving before its shadow is drained.
      if (!(await this.barrier.waitBelow(this.table.generation, this.port.stepTimeoutMs))) {
        const { what, awaits } = this.port.inFlight;
        return pending(
          'publish-barrier',
          `${what} selected before route ${routeId} left the table await their ${awaits}`,
        );
      }
      const drained = await this.port.drainRoute(route);
      if (!drained.ok) return drained.outcome;
      this.removed.delete(routeId);
      this.log.info('route.drained', { routeId, moved: drained.value.moved });
      return this.done({ ...drained.value, retained: [...kept, ...drained.value.retained] });
    });
  }

  stop(): Promise<Outcome<StopResult>> {
    return this.step<StopResult>('stop', undefined, async () => {
      const stopped = await this.port.stop();
      if (!stopped.ok) return stopped.outcome;
      if (this.phase === 'running' || this.phase === 'prepared') this.phase = 'stopped';
      this.log.info('engine.stopped', stopped.log);
      return this.done({ handoff: this.port.handoff() });
    });
  }

  abort(): Promise<Outcome<AbortResult>> {
    return this.step(
      'abort',
      () => this.done({ restored: 0 }),
      async () => {
        const aborted = await this.port.abort();
        if (!aborted.ok) return aborted.outcome;
        this.phase = 'aborted';
        this.log.info('engine.aborted', { restored: aborted.value.restored });
        return this.done(aborted.value);
      },
    );
  }

  drainApplication(): Promise<Outcome<Record<string, never>>> {
    return this.step(
      'drainApplication',
      () => this.done({}),
      async () => {
        const blocked = await this.port.drainApplication();
        if (blocked) return blocked;
        this.phase = 'app-drained';
        return this.done({});
      },
    );
  }

  commitHandoff(handoff: HandoffData): Promise<Outcome<HandoffResult>> {
    return this.step(
      'commitHandoff',
      () => this.done({ moved: 0 }),
      async () => {
        const mine = this.port.handoff();
        if (
          handoff.provider !== mine.provider ||
          JSON.stringify(handoff.data) !== JSON.stringify(mine.data)
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
        const handed = await this.port.commitHandoff();
        if (!handed.ok) return handed.outcome;
        this.phase = 'handed-off';
        this.log.info('engine.handed-off', handed.log);
        return this.done(handed.value);
      },
    );
  }

  verifyCleanupReady(): Promise<Outcome<CleanupReadyResult>> {
    return this.step(
      'verifyCleanupReady',
      () => this.done({ shadows: [] }),
      async () => {
        const ready = await this.port.verifyCleanupReady();
        return ready.ok ? this.done(ready.value) : ready.outcome;
      },
    );
  }

  cleanup(): Promise<Outcome<CleanupResult>> {
    return this.step(
      'cleanup',
      () => this.done({ deleted: [], retained: this.retained }),
      async () => {
        const cleaned = await this.port.cleanup();
        if (!cleaned.ok) return cleaned.outcome;
        this.phase = 'cleaned';
        this.log.info('engine.cleaned', cleaned.log);
        return this.done({ deleted: cleaned.value.deleted, retained: this.retained });
      },
    );
  }

  recover(checkpoint: Checkpoint, published?: PublishedRoutes): Promise<Outcome<RecoverResult>> {
    return this.step(
      'recover',
      () =>
        JSON.stringify(checkpoint) === JSON.stringify(this.checkpoint())
          ? this.done<RecoverResult>({ phase: this.phase })
          : wrongPhase('recover', this.phase, STEP_PHASES.recover.runs),
      async () => {
        const decoded = this.port.codec.decode(checkpoint);
        if (!decoded.ok) {
          return degraded(
            'checkpoint-mismatch',
            decoded.problem,
            'pass the checkpoint this queue last returned',
          );
        }
        const s = decoded.state;
        if (!this.owns(s)) {
          return degraded(
            'checkpoint-mismatch',
            'the checkpoint belongs to another activation or names other resources',
            'recover with the checkpoint recorded for this activation and epoch',
          );
        }
        const table = RouteTable.build(s.generation, s.routes, this.port.appShadow, this.port.reservedNames);
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
        this.port.restore(s);
        // Takes the fence: an older engine on this split stops here.
        if (LIVE_PHASES.includes(s.phase)) {
          const blocked = await this.port.up();
          if (blocked) return blocked;
        }
        if (s.phase === 'running') {
          // The controller's newer table first, so the pump never classifies under an older one.
          const stale = await installPublished(
            published,
            this.table.generation,
            (g, r) => this.installTable(g, r),
            this.log,
          );
          if (stale) return stale;
          const blocked = await this.port.resume();
          if (blocked) return blocked;
        }
        this.phase = s.phase === 'closed' ? 'new' : s.phase;
        this.log.info('engine.recovered', { phase: this.phase, generation: this.table.generation });
        return this.done<RecoverResult>({ phase: this.phase });
      },
    );
  }

  status(): EngineStatus {
    const conditions = this.phase === 'closed' ? [] : this.port.conditions();
    const count = (routeId: string) => this.published.get(routeId) ?? 0;
    return {
      provider: this.provider,
      activationId: this.port.activationId,
      epoch: this.port.epoch,
      phase: this.phase,
      generation: this.table.generation,
      health: conditions.length > 0 ? 'degraded' : 'ok',
      conditions,
      connected: this.port.connected,
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
      app: { shadow: this.port.appShadow, published: count('') },
      inFlight: this.barrier.total,
      retrying: this.port.retrying,
      retained: this.retained,
    };
  }

  async shadowLag(): Promise<ShadowLag> {
    const [shadows, source] = await Promise.all([
      this.port.shadowLag(),
      this.phase === 'running' ? this.port.sourceBacklog().catch(() => undefined) : undefined,
    ]);
    return source === undefined ? shadows : { ...shadows, source };
  }

  appConsumers(on: AppQueue): Promise<number | undefined> {
    return this.phase === 'closed' ? Promise.resolve(undefined) : this.port.appConsumers(on);
  }

  async close(): Promise<void> {
    if (this.phase === 'closed') return;
    await this.serial.run(async () => {
      await this.port.close();
      this.phase = 'closed';
      this.log.info('engine.closed');
    });
  }

  // ---- internals ---------------------------------------------------------------------------

  /**
   * Every step: one at a time, refused by a lost fence, then by the phase table; logged with its
   * duration. A broker operation that throws is `pending` (steps are idempotent, the controller
   * retries); a programming error is not, since no retry can fix it.
   */
  private step<T>(
    name: StepName,
    repeat: (() => Outcome<T>) | undefined,
    work: () => Promise<Outcome<T>>,
  ): Promise<Outcome<T>> {
    return this.serial.run(async () => {
      const lost = this.phase === 'closed' ? undefined : this.port.lostFence();
      if (lost) return lost;
      const started = Date.now();
      let outcome: Outcome<T>;
      try {
        const rule = phaseRule(name, this.phase);
        outcome =
          rule === 'runs'
            ? await work()
            : rule === 'repeats' && repeat
              ? repeat()
              : wrongPhase(name, this.phase, STEP_PHASES[name].runs);
      } catch (err) {
        return this.failed(name, err);
      }
      const fields = { step: name, kind: outcome.kind, ms: Date.now() - started };
      if (outcome.kind === 'done') this.log.debug('step.done', fields);
      else
        this.log.info('step.not-done', {
          ...fields,
          ...(outcome.kind === 'pending' ? { code: outcome.code } : {}),
        });
      return outcome;
    });
  }

  private failed(name: StepName, err: unknown): Outcome<never> {
    if (isProgrammingError(err)) {
      this.log.error('step.bug', { step: name, error: describeError(err) });
      return degraded(
        'internal-error',
        `${name} failed on a programming error: ${describeError(err)}`,
        'report it with this queue-agent log; a retry repeats it',
      );
    }
    const failure = this.port.describeFailure(err);
    this.log.warn('step.failed', { step: name, ...failure.fields });
    return pending('broker-unavailable', `${name} failed: ${failure.reason}`, 1_000);
  }

  private done<T>(value: T): Outcome<T> {
    return { kind: 'done', value, checkpoint: this.checkpoint() };
  }

  private checkpoint(): Checkpoint {
    const state: KernelState<R> = {
      phase: this.phase,
      generation: this.table.generation,
      routes: this.table.routes,
      removed: [...this.removed.values()],
      retained: this.retained,
    };
    return this.port.codec.encode(this.port.checkpointState(state));
  }

  /** The checkpoint names this engine's activation and resources. */
  private owns(state: S): boolean {
    const identity = this.port.identity;
    return (Object.keys(identity) as (keyof S)[]).every((field) => state[field] === identity[field]);
  }

  /** Installs a newer route table: the shadows of routes entering it first, then the swap
   * (from then on every message is selected under `generation`). Used by `reconcileRoutes` and
   * by `recover` before the pump resumes. */
  private async installTable(generation: number, routes: readonly RouteSpec[]): Promise<Blocked> {
    const current = this.table;
    const refused = this.port.checkRoutes(routes);
    if (refused.length > 0) return rejected(refused);
    const built = RouteTable.build(generation, routes, this.port.appShadow, this.port.reservedNames);
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
    const added = routes
      .map((route, index) => ({ route, index, returning: this.removed.has(route.routeId) }))
      .filter(({ route }) => !current.route(route.routeId));
    const blocked = await this.port.addRoutes(added);
    if (blocked) return blocked;
    for (const old of current.routes) {
      if (!built.value.route(old.routeId)) this.removed.set(old.routeId, this.port.removedRoute(old));
    }
    for (const route of routes) this.removed.delete(route.routeId);
    this.table = built.value; // from here on every message is selected under `generation`
    this.log.info('engine.routes', {
      generation,
      routes: routes.length,
      filterKeys: routes.map((r) => Object.keys(r.filter).join('+')).join(' '), // keys only: values are header values
    });
    return undefined;
  }
}
