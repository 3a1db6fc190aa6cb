// Carries out what the phase machine (core/state) returns for one workload: each action is
// idempotent and runs in order; one that fails leaves the rest for the next pass (retried while
// the phase is the same) and, where the step is the workload's, fails the step. Events that
// actions themselves produce (the workload observed, a route's shadows ready) go back through
// the machine here too.
import type { KubernetesObjectNames } from '../../core/names';
import type { ResolvedQueue } from '../../core/queueConfig/resolveQueues';
import type { SplitAction } from '../../core/state/actions';
import type { SplitEvent } from '../../core/state/events';
import { STEPS } from '../../core/state/phases';
import type { SplitState } from '../../core/state/stateDocument';
import { transition } from '../../core/state/transition';
import { isConflict } from '../kube/client';
import { describeError, type Logger } from '../log';
import type { AgentObjects } from './agentObjects';
import { queueNames } from './desired';
import type { OwnershipLeases } from './ownershipLeases';
import type { PhaseProgress } from './phaseProgress';
import type { Verdict, WorkloadId } from './verdicts';
import { overrideDrift, overridesFor, type Workloads } from './workloads';

/** What the runner reads and changes of the coordinator's workload. */
export interface RunnerHost {
  state(): SplitState;
  setState(state: SplitState): void;
  names(): KubernetesObjectNames;
  resolved(): readonly ResolvedQueue[];
  /** Writes the state document (sealed, conditionally). */
  persist(): Promise<void>;
}

/** How many times in a row a quiesce scale may be re-read after an autoscaler raced it. */
const MAX_AUTOSCALER_RACES = 3;

/**
 * Actions whose effect stays in this controller until the pass writes the state, the desired
 * document and the statuses: the agent's steps (carried by the desired document), verdicts and
 * reports, a route's shadows (its engine declares them). Every other action reaches the cluster
 * and needs the state that describes it written first.
 */
const IN_MEMORY: ReadonlySet<SplitAction['type']> = new Set<SplitAction['type']>([
  'prepareRoute',
  'rejectRoute',
  'failRoute',
  'reportDegraded',
  // run()'s default: carried by the desired document, or waits the pass's events check.
  'prepareQueues',
  'startPump',
  'stopPump',
  'stopSourceAtFrontier',
  'publishRoutes',
  'drainRoute',
  'commitHandoff',
  'cleanupQueues',
  'rollbackQueues',
  'awaitQuiesce',
  'awaitRollout',
  'awaitAppDrain',
  'verifyHandbackQuiesce',
]);

export class ActionRunner {
  /** Actions a failure interrupted, retried on the next pass while the phase is unchanged. */
  unfinished: { phase: string; actions: readonly SplitAction[] } | undefined;
  /** Quiesce scales an autoscaler raced since the last one that landed. */
  private races = 0;
  /**
   * Invariants of the state write a pass may hold back (applyAll):
   *   1. `owed` is set only while `batching`, by a `persistState` it did not run.
   *   2. No action outside IN_MEMORY runs while a write is owed: settle() runs first, and its
   *      failure fails that action (kept, with the write, for the next pass).
   *   3. The pass ends with settle() (coordinator.pass, after the desired document's write,
   *      which carries the same state when it writes): no pass ends with a write owed unless
   *      that write failed, and then the next pass's first action is the write.
   */
  private owed = false;
  private batching = false;

  constructor(
    private readonly id: WorkloadId,
    private readonly controllerNamespace: string,
    private readonly host: RunnerHost,
    private readonly deps: { workloads: Workloads; agents: AgentObjects; ownership: OwnershipLeases },
    private readonly log: Logger,
    private readonly progress: PhaseProgress,
    /** Verdicts on QueueSplits, shared with the coordinator (rejectRoute and failRoute add some). */
    private readonly verdicts: Map<string, Verdict>,
    /** Routes the workload's state has had (every applied state adds its routes). */
    private readonly seen: Set<string>,
  ) {}

  /**
   * Retries what the last pass left unfinished, if `phase` is still the one it was for; true
   * when it ran anything.
   */
  async resume(phase: string): Promise<boolean> {
    if (!this.unfinished) return false;
    const { phase: was, actions } = this.unfinished;
    this.unfinished = undefined;
    if (was !== phase) return false;
    await this.execute(actions);
    return true;
  }

  /**
   * A pass's events in order, with the state written once for all of them where no step needs
   * it sooner (a burst of attaches and acks: each used to write the state and its seal, and then
   * the desired document did again). Invariants beside `owed`.
   */
  async applyAll(events: readonly SplitEvent[]): Promise<void> {
    this.batching = true;
    try {
      for (const event of events) await this.apply(event);
    } finally {
      this.batching = false;
    }
  }

  /** Writes the state if a pass held its write back (applyAll); a no-op otherwise. */
  async settle(): Promise<void> {
    if (!this.owed) return;
    await this.host.persist();
    this.owed = false;
  }

  /** Feeds the event to the phase machine and carries out the actions of the new state. */
  async apply(event: SplitEvent): Promise<void> {
    const result = transition(this.host.state(), event);
    if (result.outcome === 'invalid') this.log.warn('event.invalid', { type: event.type, note: result.note });
    if (result.outcome !== 'applied' && result.outcome !== 'rejected') return;
    this.log.info('event.applied', { type: event.type, note: result.note, phase: result.state.phase });
    this.host.setState(result.state);
    for (const r of result.state.routes) this.seen.add(r.routeId);
    await this.execute(result.actions);
  }

  /** Runs the actions in order; a failure keeps the rest for the next pass (`unfinished`). */
  async execute(actions: readonly SplitAction[]): Promise<void> {
    for (const [index, action] of actions.entries()) {
      try {
        await this.run(action);
      } catch (err) {
        const reason = describeError(err);
        this.log.error('action.failed', { action: action.type, reason });
        // Every action is idempotent: the rest of the list is retried on the next pass, after
        // the state write it waited for if that is what failed (invariant 2).
        const rest = actions.slice(index);
        this.unfinished = {
          phase: this.host.state().phase,
          actions: this.owed && rest[0]?.type !== 'persistState' ? [{ type: 'persistState' }, ...rest] : rest,
        };
        const phase = this.host.state().phase;
        if (
          isConflict(err) &&
          action.type === 'scaleWorkload' &&
          (await this.autoscalerRaced(action, phase))
        ) {
          this.unfinished = undefined;
          await this.apply({ type: 'scaleRaced' });
        } else if (isConflict(err) && action.type === 'scaleWorkload') {
          // Someone scaled the workload during cutover: take the proved abort/degraded path.
          await this.apply({
            type: 'stepFailed',
            phase,
            reason: 'the workload was changed concurrently (resourceVersion conflict)',
          });
        } else if (STEPS[phase]?.scope === 'workload') {
          await this.apply({ type: 'stepFailed', phase, reason });
        }
        return;
      }
    }
  }

  /**
   * Whether a quiesce scale's conflict was the workload's autoscaler scaling it between our read
   * and our write (an HPA targets it): then nothing was scaled by us, and the count is read again
   * — a few times at most, after which it is a race like any other (docs/design.md,
   * "Autoscaled workloads").
   */
  private async autoscalerRaced(action: SplitAction, phase: string): Promise<boolean> {
    if (action.type !== 'scaleWorkload' || action.resourceVersion === undefined) return false;
    if (phase !== 'QUIESCING_APP' && phase !== 'QUIESCING_FOR_HANDBACK') return false;
    if (this.races >= MAX_AUTOSCALER_RACES) return false;
    const hpas = await this.deps.workloads.autoscalersOf(this.id.kind, this.id.namespace, this.id.name);
    if (hpas.length === 0) return false;
    this.races += 1;
    this.log.info('scale.autoscaler_raced', { phase, hpa: hpas.map((h) => h.metadata?.name).join(',') });
    return true;
  }

  private async run(action: SplitAction): Promise<void> {
    if (action.type === 'persistState') {
      if (this.batching) {
        this.owed = true;
        return;
      }
      await this.host.persist();
      this.owed = false;
      return;
    }
    if (!IN_MEMORY.has(action.type)) await this.settle();
    const state = this.host.state();
    const names = this.host.names();
    const { kind, namespace, name } = this.id;
    switch (action.type) {
      case 'ensureQueueAgent':
        return this.deps.agents.ensure(namespace, names, name, this.host.resolved());
      case 'observeWorkload': {
        const workload = await this.deps.workloads.read(kind, namespace, name);
        if (!workload) throw new Error('the workload is gone');
        return this.apply({
          type: 'workloadObserved',
          replicas: workload.spec?.replicas ?? 1,
          resourceVersion: workload.metadata?.resourceVersion ?? '',
        });
      }
      case 'scaleWorkload':
        await this.deps.workloads.scale(
          kind,
          namespace,
          name,
          action.replicas,
          action.resourceVersion,
          action.from,
        );
        this.races = 0;
        return;
      case 'applyOverrides':
      case 'removeOverrides': {
        const keep =
          action.type === 'applyOverrides'
            ? action.queues
            : state.activeQueues.filter((q) => !action.queues.includes(q));
        const queues = this.host.resolved().filter((q) => keep.includes(q.name));
        const overrides = overridesFor(queues, (q) => queueNames(state, q));
        if (action.type === 'applyOverrides' && state.phase !== 'REDIRECTING_APP') {
          // A retry's re-apply: only where someone changed them, so a retry does not roll the app for nothing.
          const current = await this.deps.workloads.read(kind, namespace, name);
          if (
            current &&
            overrideDrift(current, overrides).length === 0 &&
            (await this.deps.workloads.fileDrift(kind, current, overrides)).length === 0
          )
            return;
        }
        return this.deps.workloads.setOverrides(kind, namespace, name, overrides, action.generation);
      }
      case 'prepareRoute':
        // The engine declares a route's session shadows when it installs the route table.
        return this.apply({ type: 'routeShadowsReady', routeId: action.routeId });
      case 'rejectRoute':
      case 'failRoute': {
        const message =
          action.type === 'rejectRoute'
            ? action.errors.map((e) => `${e.path}: ${e.problem} Fix: ${e.fix}`).join(' | ')
            : `${action.reason}. Nothing was lost; the application kept its messages. Fix the cause, then start the split again.`;
        this.verdicts.set(action.routeId, {
          phase: action.type === 'rejectRoute' ? 'Rejected' : 'Failed',
          reason: action.type === 'rejectRoute' ? action.reason : 'ActivationFailed',
          message,
        });
        return;
      }
      case 'reportDegraded':
        this.log.warn('workload.degraded', { reason: action.reason, nextAction: action.nextAction });
        this.progress.blocking = `${action.reason} — ${action.nextAction}`;
        return;
      case 'acquireLease': {
        const workload = await this.deps.workloads.read(kind, namespace, name);
        if (!workload) throw new Error('the workload is gone');
        const conflict = await this.deps.ownership.acquire(
          this.controllerNamespace,
          namespace,
          workload,
          this.host.resolved(),
        );
        if (conflict) throw new Error(conflict);
        return;
      }
      case 'ensureFinalizer': {
        const workload = await this.deps.workloads.read(kind, namespace, name);
        if (!workload) throw new Error('the workload is gone');
        return this.deps.workloads.addFinalizer(kind, workload);
      }
      case 'releaseLease':
        return this.deps.ownership.release(this.controllerNamespace, state.workload.uid);
      case 'reapQueueAgent':
        return this.deps.agents.reap(namespace, names);
      default:
        // Agent steps (prepareQueues, startPump, stopSourceAtFrontier, publishRoutes, drainRoute,
        // ...) are carried by the desired document, written after every pass; waits
        // (awaitQuiesce, awaitRollout) are checked by controllerEvents.
        return;
    }
  }
}
