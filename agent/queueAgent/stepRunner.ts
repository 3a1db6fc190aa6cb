// Runs what the desired document asks of each queue's engine and records the outcome. Each pass
// is level-triggered: it looks at the whole desired document, calls the (idempotent) engine step
// for the queue's current phase, installs the route table for the desired generation, and drains
// routes that left it.
import type {
  AgentQueuePlan,
  AgentRoute,
  DesiredState,
  ObservedQueue,
  ObservedRoute,
  StepOutcome,
} from '../../core/agentProtocol';
import type { WorkloadPhase } from '../../core/state/phases';
import type {
  AppQueue,
  Checkpoint,
  Engine,
  HandoffData,
  Outcome,
  PublishedRoutes,
  RouteSpec,
  ShadowLag,
} from '../engine/contract';
import { describeError, type Logger } from '../log';
import type { EngineSettings } from '../providers/contract';
import { EngineConfigError } from '../providers/podEnv';
import { createEngine } from '../providers/registry';

/** Phases in which the pump runs and the route table is kept current. */
const PUMPING: readonly WorkloadPhase[] = ['STARTING_PUMP', 'REDIRECTING_APP', 'ACTIVE', 'DEGRADED'];

/** Where the application's consumers are counted, by phase (StepRunner.countConsumers). */
const COUNTED: Partial<
  Record<WorkloadPhase, { on: AppQueue; field: 'appShadowConsumers' | 'sourceConsumers' }>
> = {
  REDIRECTING_APP: { on: 'appShadow', field: 'appShadowConsumers' },
  RESTORING_APP: { on: 'source', field: 'sourceConsumers' },
};

/** A failure that persists is logged again at most this often: a DEGRADED split waits for an
 * operator, and the same line once a pass buried everything else in the log. */
const REPEAT_LOG_MS = 60_000;

/** What a restarted agent takes from the observed document its predecessor wrote. */
export interface AgentSeed {
  activationId?: string;
  queues: Record<string, { checkpoint?: unknown; published?: Record<string, number> }>;
}

export class StepRunner {
  private readonly engines = new Map<string, Engine>();
  private readonly observed = new Map<string, ObservedQueue>();
  private readonly acked = new Map<string, number>();
  private readonly drained = new Map<string, ObservedRoute['drained']>();
  private readonly failed = new Map<string, string>();
  /** The last failure logged per queue and kind, with when: a repeat is logged at most every REPEAT_LOG_MS. */
  private readonly logged = new Map<string, { reason: string; at: number }>();
  private activationId = '';
  /** Latest checkpoint per queue, from any done outcome; seeded from the last observed document. */
  private readonly latest = new Map<string, unknown>();

  /** Published counts the previous agent of this activation reported, per queue: a restarted
   * engine counts from zero, the observed document keeps counting. */
  private readonly carried = new Map<string, Record<string, number>>();
  private readonly seedActivation: string | undefined;

  constructor(
    private readonly log: Logger,
    seed: AgentSeed = { queues: {} },
    private readonly engineSettings: EngineSettings = {},
  ) {
    this.seedActivation = seed.activationId;
    for (const [queue, q] of Object.entries(seed.queues)) {
      if (q.checkpoint !== undefined) this.latest.set(queue, q.checkpoint);
      if (q.published) this.carried.set(queue, { ...q.published });
    }
  }

  async reconcile(desired: DesiredState): Promise<{
    queues: Record<string, ObservedQueue>;
    routes: Record<string, ObservedRoute>;
  }> {
    if (desired.activationId !== this.activationId) await this.reset(desired.activationId);
    for (const plan of desired.queues) {
      try {
        await this.reconcileQueue(desired, plan);
      } catch (err) {
        const reason = describeError(err);
        if (this.firstTime(`queue.failed/${plan.name}`, reason))
          this.log.error('queue.failed', { queue: plan.name, reason });
        if (plan.step)
          this.record(plan, desired.generation, this.neverBuilt(plan, err) ?? { kind: 'rejected', reason });
      }
    }
    await this.drainRoutes(desired);
    for (const plan of desired.queues) this.refresh(plan.name, desired.generation);
    await this.countConsumers(desired);
    const routes: Record<string, ObservedRoute> = {};
    for (const route of desired.routes) {
      const acked = Math.min(...route.queues.map((q) => this.acked.get(q) ?? -1));
      routes[route.routeId] = {
        ackedGeneration: acked,
        ...(this.drained.has(route.routeId) ? { drained: this.drained.get(route.routeId) } : {}),
        ...(this.failed.has(route.routeId) ? { failed: this.failed.get(route.routeId) } : {}),
      };
    }
    return { queues: Object.fromEntries(this.observed), routes };
  }

  engineStatuses() {
    return [...this.engines.entries()].map(([queue, engine]) => ({ queue, status: engine.status() }));
  }

  /** Shadow lag per engine, read from the brokers; an engine that cannot say reports nothing. */
  shadowLags(): Promise<{ queue: string; lag: ShadowLag }[]> {
    return Promise.all(
      [...this.engines.entries()].map(async ([queue, engine]) => ({
        queue,
        lag: await engine.shadowLag().catch((): ShadowLag => ({})),
      })),
    );
  }

  async close(): Promise<void> {
    await Promise.all([...this.engines.values()].map((e) => e.close().catch(() => undefined)));
    this.engines.clear();
    this.unrecovered.clear();
  }

  /**
   * An engine this agent could not even build (its pod env is incomplete) and that never left a
   * checkpoint has copied nothing in this activation: that alone proves the rollback and the
   * cleanup after it, so a configuration error ends the split Failed instead of DEGRADED.
   */
  private neverBuilt(plan: AgentQueuePlan, err: unknown): StepOutcome | undefined {
    if (!(err instanceof EngineConfigError)) return undefined;
    if (plan.step !== 'ABORTING_ACTIVATION' && plan.step !== 'CLEANING_UP') return undefined;
    if (this.engines.has(plan.name) || this.latest.has(plan.name) || plan.checkpoint !== undefined) {
      return undefined;
    }
    return {
      kind: 'done',
      evidence: `no engine ever ran for ${plan.name} in this activation (${err.message}): nothing was copied, nothing to roll back or delete`,
    };
  }

  private async reset(activationId: string): Promise<void> {
    await this.close();
    this.observed.clear();
    this.acked.clear();
    this.drained.clear();
    this.failed.clear();
    this.logged.clear();
    if (activationId !== this.seedActivation) this.carried.clear();
    this.activationId = activationId;
  }

  private readonly epochs = new Map<string, number>();
  /** Engines built from a recorded checkpoint whose `recover` has not finished yet. */
  private readonly unrecovered = new Set<string>();

  /** The engine for the plan, recovered when a checkpoint exists; undefined while a recovery
   * waits for the broker (it is retried next pass, and nothing else touches the engine). */
  private async engineFor(desired: DesiredState, plan: AgentQueuePlan): Promise<Engine | undefined> {
    let engine = this.engines.get(plan.name);
    if (engine && this.epochs.get(plan.name) !== plan.epoch) {
      // A new activation epoch of this queue has new shadows: a new engine.
      await engine.close().catch(() => undefined);
      this.engines.delete(plan.name);
      this.observed.delete(plan.name);
      this.acked.delete(plan.name);
      this.carried.delete(plan.name);
      engine = undefined;
    }
    if (!engine) {
      this.epochs.set(plan.name, plan.epoch);
      engine = createEngine(
        this.activationId,
        plan,
        this.log.child({ queue: plan.name }),
        this.engineSettings,
      );
      this.engines.set(plan.name, engine);
      this.unrecovered.add(plan.name);
    }
    if (this.unrecovered.has(plan.name) && !(await this.recover(engine, desired, plan))) return undefined;
    return engine;
  }

  /**
   * A restarted agent takes back what the previous one recorded (docs/design.md §7 `recover`): its own
   * latest checkpoint, else the one the controller persisted, together with the route table the
   * controller publishes now, so the resumed pump never classifies under an older one (issue
   * 19: an older checkpoint sent an active route's backlog to the app). Only a checkpoint the
   * engine refuses as not its own makes way for the next; a broker that is not reachable yet
   * keeps the freshest one for the next pass. Returns whether the engine may be used.
   */
  private async recover(engine: Engine, desired: DesiredState, plan: AgentQueuePlan): Promise<boolean> {
    for (const candidate of [this.latest.get(plan.name), plan.checkpoint]) {
      if (!isCheckpoint(candidate)) continue;
      const recovered = await engine.recover(candidate, published(desired, plan));
      this.log.info('engine.recover', { queue: plan.name, outcome: recovered.kind });
      if (recovered.kind === 'pending') return false;
      if (recovered.kind === 'done') {
        this.latest.set(plan.name, recovered.checkpoint);
        break;
      }
      if (recovered.kind === 'degraded' && recovered.code !== 'checkpoint-mismatch') break;
    }
    this.unrecovered.delete(plan.name);
    return true;
  }

  private async reconcileQueue(desired: DesiredState, plan: AgentQueuePlan): Promise<void> {
    const engine = await this.engineFor(desired, plan);
    if (!engine) return;
    const step = plan.step;
    const pumping = PUMPING.includes(desired.phase) || (step !== undefined && PUMPING.includes(step));
    // A pump that is about to start (STARTING_PUMP, a restart after STOPPING_SOURCE) starts
    // under the published table, never the older one it holds.
    if (pumping && notPumping(engine)) await this.installRoutes(engine, desired, plan);
    if (step) {
      const prior = this.observed.get(plan.name);
      // A finished step is not run again for the same generation (steps are idempotent anyway).
      if (!(
        prior?.step === step &&
        prior.generation === desired.generation &&
        prior.outcome.kind === 'done'
      )) {
        const outcome = await this.runStep(engine, step, plan);
        // Once per step and generation (guarded above): what each step found, e.g. the source
        // rules the shadows were declared with in PREPARING.
        if (outcome.kind === 'done' && outcome.evidence)
          this.log.info('step.done', { queue: plan.name, step, evidence: outcome.evidence });
        this.record(plan, desired.generation, outcome);
      }
    }
    // An engine that never prepared has no pump and no table to install (a DEGRADED split whose
    // activation was refused asked it again on every pass, and logged the refusal each time).
    if (pumping && engine.status().phase !== 'new') {
      if (step !== 'STARTING_PUMP' && desired.phase === 'ACTIVE') await ensureRunning(engine);
      await this.installRoutes(engine, desired, plan);
    }
  }

  private async installRoutes(engine: Engine, desired: DesiredState, plan: AgentQueuePlan): Promise<void> {
    const { generation, routes: specs } = published(desired, plan);
    const outcome = await engine.reconcileRoutes(generation, specs);
    if (outcome.kind === 'done') {
      this.acked.set(plan.name, outcome.value.generation);
      this.latest.set(plan.name, outcome.checkpoint);
    } else if (outcome.kind === 'rejected') {
      const reason = outcome.errors.map((e) => `${e.path}: ${e.problem} ${e.fix}`).join('; ');
      for (const r of specs) this.failed.set(r.routeId, reason);
      if (this.firstTime(`routes.rejected/${plan.name}`, reason))
        this.log.warn('routes.rejected', { queue: plan.name, reason });
    }
  }

  private async drainRoutes(desired: DesiredState): Promise<void> {
    for (const route of desired.routes.filter((r) => r.phase === 'DRAINING')) {
      if (this.drained.get(route.routeId)?.proven) continue;
      // Only after the table without the route is in force on every queue (publish barrier).
      if (!route.queues.every((q) => (this.acked.get(q) ?? -1) >= route.generation)) continue;
      const kept: { name: string; reason: string }[] = [];
      let proven = true;
      const evidence: string[] = [];
      for (const queue of route.queues) {
        const engine = this.engines.get(queue);
        if (!engine) {
          proven = false;
          continue;
        }
        const outcome = await engine.drainRoute(routeSpec(route, queue));
        if (outcome.kind === 'done') {
          this.latest.set(queue, outcome.checkpoint);
          evidence.push(`${queue}: moved ${outcome.value.moved}, deleted ${outcome.value.deleted.length}`);
          kept.push(...outcome.value.retained.map((r) => ({ name: r.name, reason: r.reason })));
        } else {
          proven = false;
          if (outcome.kind !== 'pending') evidence.push(`${queue}: ${summary(outcome)}`);
        }
      }
      if (proven) this.drained.set(route.routeId, { proven: true, evidence: evidence.join('; '), kept });
    }
  }

  private async runStep(engine: Engine, step: WorkloadPhase, plan: AgentQueuePlan): Promise<StepOutcome> {
    switch (step) {
      case 'PREPARING': {
        const prepared = await engine.prepare();
        // An engine refuses before it touches the broker (agent/engine/contract.ts, `rejected`):
        // said so, the controller rejects the split instead of rolling back what never existed.
        if (prepared.kind === 'rejected' && this.neverPrepared(engine, plan)) {
          const reason = prepared.errors.map((e) => `${e.problem}; ${e.fix}`).join('; ');
          return { kind: 'rejected', reason, nothingChanged: true };
        }
        return toStep(prepared, (v) =>
          [
            `prepared ${v.sourceKind} source; shadows ${v.shadows.length}`,
            ...(v.reproduced ? [`declared with ${v.reproduced}`] : []),
            ...v.warnings,
          ].join('; '),
        );
      }
      case 'STARTING_PUMP':
        return toStep(await engine.start(), () => 'pump consuming the source');
      case 'ABORTING_ACTIVATION': {
        if (this.neverPrepared(engine, plan)) {
          // No agent ever reported this queue prepared (e.g. the agent could not start until an
          // operator fixed it), so no pump ran and no message moved. Preparing declares the
          // deterministic shadows again (idempotent), so the rollback and CLEANING_UP can prove
          // them empty and delete them instead of refusing an abort from `new`.
          const prepared = await engine.prepare();
          if (prepared.kind === 'rejected') return nothingDeclared(plan, prepared, 'roll back');
          if (prepared.kind !== 'done') return toStep(prepared, () => 'prepared for the rollback');
        }
        await engine.stop().catch(() => undefined);
        return toStep(
          await engine.abort(),
          (v) => `rolled back; ${v.restored} messages restored to the source`,
        );
      }
      case 'STOPPING_SOURCE': {
        const outcome = await engine.stop();
        const stepped = toStep(outcome, () => 'source consumption stopped at the frontier');
        return outcome.kind === 'done' && stepped.kind === 'done'
          ? { ...stepped, handoff: outcome.value.handoff }
          : stepped;
      }
      case 'DRAINING_APP': {
        // The app still runs here: "no backlog, consumers still attached" is this step's goal;
        // the strict proof (group empty too) is QUIESCING_FOR_HANDBACK's, after scale-down.
        const outcome = await engine.drainApplication();
        if (outcome.kind === 'pending' && outcome.code === 'consumers-attached') {
          return { kind: 'done', evidence: 'application shadow has no backlog; the app is still attached' };
        }
        return toStep(outcome, () => 'application shadow drained (no backlog)');
      }
      case 'QUIESCING_FOR_HANDBACK':
        return toStep(await engine.drainApplication(), () => 'application shadow drained (no backlog)');
      case 'COMMITTING_HANDOFF':
        if (!isHandoff(plan.handoff))
          return { kind: 'rejected', reason: 'no handoff data recorded for this queue' };
        return toStep(await engine.commitHandoff(plan.handoff), (v) => `handoff committed; ${v.moved} moved`);
      case 'CLEANING_UP': {
        if (this.neverPrepared(engine, plan)) {
          // The rollback found nothing declared (above); a source fixed since then is prepared
          // and rolled back first, so what that declares is proven empty and deleted too.
          const prepared = await engine.prepare();
          if (prepared.kind === 'rejected') return nothingDeclared(plan, prepared, 'delete');
          if (prepared.kind !== 'done') return toStep(prepared, () => '');
          const aborted = await engine.abort();
          if (aborted.kind !== 'done') return toStep(aborted, () => '');
        }
        const ready = await engine.verifyCleanupReady();
        if (ready.kind !== 'done') return toStep(ready, () => '');
        const cleaned = await engine.cleanup();
        const stepped = toStep(cleaned, (v) => `deleted ${v.deleted.join(', ') || 'nothing'}`);
        return cleaned.kind === 'done' && stepped.kind === 'done'
          ? { ...stepped, kept: cleaned.value.retained.map((r) => ({ name: r.name, reason: r.reason })) }
          : stepped;
      }
      default:
        return { kind: 'rejected', reason: `${step} is not a queue-agent step` };
    }
  }

  /** No agent of this activation ever reported the queue prepared, and this engine has not either. */
  private neverPrepared(engine: Engine, plan: AgentQueuePlan): boolean {
    return engine.status().phase === 'new' && !this.latest.has(plan.name) && plan.checkpoint === undefined;
  }

  /** Whether `reason` is new for `key`, or was last logged long enough ago to be logged again. */
  private firstTime(key: string, reason: string): boolean {
    const last = this.logged.get(key);
    const now = Date.now();
    if (last?.reason === reason && now - last.at < REPEAT_LOG_MS) return false;
    this.logged.set(key, { reason, at: now });
    return true;
  }

  private record(plan: AgentQueuePlan, generation: number, outcome: StepOutcome): void {
    if (outcome.kind === 'done' && outcome.checkpoint !== undefined)
      this.latest.set(plan.name, outcome.checkpoint);
    this.observed.set(plan.name, {
      step: plan.step ?? 'ACTIVE',
      generation,
      outcome,
      health: 'ok',
      published: {},
    });
    this.refresh(plan.name);
  }

  /**
   * The application's consumers, read from the broker while the app is redirected to its shadows
   * (REDIRECTING_APP) or restored to its sources (RESTORING_APP) and in no other phase, so a
   * steady split's observed document does not change with them: with the new pods ready and none
   * restarted, they are the controller's proof that the app consumes (ObservedQueue.appShadowConsumers,
   * sourceConsumers).
   */
  private async countConsumers(desired: DesiredState): Promise<void> {
    const counted = COUNTED[desired.phase];
    for (const plan of desired.queues) {
      const prior = this.observed.get(plan.name);
      if (!prior) continue;
      const { appShadowConsumers: _shadow, sourceConsumers: _source, ...rest } = prior;
      const engine = this.engines.get(plan.name);
      const count =
        counted && engine ? await engine.appConsumers(counted.on).catch(() => undefined) : undefined;
      this.observed.set(
        plan.name,
        count === undefined || !counted ? rest : { ...rest, [counted.field]: count },
      );
    }
  }

  /**
   * Counts, health and the latest checkpoint change without any step: refresh them every pass.
   * A queue no step has reported on since this agent started still gets its entry, so the
   * observed document always carries every queue's latest checkpoint (without it
   * the next restart fell back to the checkpoint from the split's start). Its step `ACTIVE` is
   * no agent step, so the controller never reads the entry as a step report.
   */
  private refresh(queue: string, generation?: number): void {
    const status = this.engines.get(queue)?.status();
    const prior =
      this.observed.get(queue) ??
      (generation !== undefined && this.latest.has(queue)
        ? ({
            step: 'ACTIVE',
            generation,
            outcome: { kind: 'done', evidence: `engine recovered in phase ${status?.phase ?? 'unknown'}` },
            health: 'ok',
            published: {},
          } satisfies ObservedQueue)
        : undefined);
    if (!prior || !status) return;
    const carried = this.carried.get(queue) ?? {};
    const published: Record<string, number> = { ...carried, '': (carried[''] ?? 0) + status.app.published };
    for (const r of status.routes) published[r.routeId] = (carried[r.routeId] ?? 0) + r.published;
    this.observed.set(queue, {
      ...prior,
      health: status.health,
      published,
      checkpoint: this.latest.get(queue),
    });
  }
}

/** The route table the controller published for this queue: DRAINING routes are out of it. */
function published(desired: DesiredState, plan: AgentQueuePlan): PublishedRoutes {
  return {
    generation: desired.generation,
    routes: desired.routes
      .filter((r) => r.phase !== 'DRAINING' && r.queues.includes(plan.name))
      .map((r) => routeSpec(r, plan.name)),
  };
}

function notPumping(engine: Engine): boolean {
  const phase = engine.status().phase;
  return phase === 'prepared' || phase === 'stopped';
}

async function ensureRunning(engine: Engine): Promise<void> {
  const phase = engine.status().phase;
  if (phase === 'prepared' || phase === 'stopped') await engine.start();
}

function routeSpec(route: AgentRoute, queue: string): RouteSpec {
  const shadow = route.shadows[queue];
  return {
    routeId: route.routeId,
    filter: route.filter,
    shadow: shadow?.shadow ?? '',
    ...(shadow?.sessionGroup ? { sessionGroup: shadow.sessionGroup } : {}),
    ...(shadow?.drainGroup ? { drainGroup: shadow.drainGroup } : {}),
  };
}

function toStep<T>(outcome: Outcome<T>, evidence: (value: T) => string): StepOutcome {
  switch (outcome.kind) {
    case 'done':
      return { kind: 'done', checkpoint: outcome.checkpoint, evidence: evidence(outcome.value) };
    case 'pending':
      return { kind: 'pending', reason: outcome.blockingReason };
    case 'degraded':
      return { kind: 'degraded', reason: outcome.reason, safeAction: outcome.safeAction };
    case 'rejected':
      return {
        kind: 'rejected',
        reason: outcome.errors.map((e) => `${e.path}: ${e.problem} ${e.fix}`).join('; '),
      };
  }
}

/**
 * A queue no agent ever prepared in this activation, whose preflight refuses it before anything
 * is declared (agent/engine/contract.ts, `rejected`): no shadow of it exists, so there is
 * nothing to roll back or delete, and that is the step's proof.
 */
function nothingDeclared(
  plan: AgentQueuePlan,
  refused: Extract<Outcome<unknown>, { kind: 'rejected' }>,
  what: string,
): StepOutcome {
  const reason = refused.errors.map((e) => `${e.path}: ${e.problem}`).join('; ');
  return {
    kind: 'done',
    kept: [],
    evidence: `nothing to ${what} for ${plan.name}: no engine ever prepared it in this activation, and its preflight refuses it before declaring anything (${reason})`,
  };
}

function summary(outcome: Outcome<unknown>): string {
  const s = toStep(outcome, () => '');
  return s.kind === 'done' ? 'done' : s.reason;
}

function isCheckpoint(value: unknown): value is Checkpoint {
  return (
    typeof value === 'object' &&
    value !== null &&
    'provider' in value &&
    'format' in value &&
    'state' in value
  );
}

function isHandoff(value: unknown): value is HandoffData {
  return typeof value === 'object' && value !== null && 'provider' in value && 'data' in value;
}
