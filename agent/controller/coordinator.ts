// One workload's coordinator (DESIGN §6): it owns the workload's state document, feeds the pure
// phase machine (core/state) with events — QueueSplit changes, lease expiry, what the queue-agent
// observed, what the controller itself checked — and carries out the actions it returns. The
// state is persisted (conditionally, by resourceVersion) before any step it describes runs.
import type { KubeConfig } from '@kubernetes/client-node';
import {
  CLEANUP_KEY,
  DESIRED_KEY,
  OBSERVED_KEY,
  STATE_KEY,
  type ObservedState,
} from '../../core/agentProtocol';
import type { QueueSplit } from '../../core/crd/queueSplitSchema';
import { parseFilter } from '../../core/filter';
import { kubernetesObjectNames, type KubernetesObjectNames } from '../../core/names';
import type { ResolvedQueue } from '../../core/queueConfig/resolveQueues';
import { resolveWorkload } from '../../core/queueConfig/resolveWorkload';
import type { WorkloadLike } from '../../core/queueConfig/podTemplate';
import type { SplitAction } from '../../core/state/actions';
import type { SplitEvent } from '../../core/state/events';
import { pendingQueues } from '../../core/state/phaseActions';
import { RETRY_ANNOTATION, retryEvents } from '../../core/state/operatorRetry';
import { recover } from '../../core/state/recovery';
import { STEPS, type WorkloadPhase } from '../../core/state/phases';
import { initialState, parseState, serializeState, type SplitState } from '../../core/state/stateDocument';
import { transition } from '../../core/state/transition';
import { describeError, type Logger } from '../engine/log';
import { ConfigMapStore } from '../kube/configMaps';
import { isConflict } from '../kube/client';
import { AgentObjects } from './agentObjects';
import { AGENT_STEPS, desiredState, queueNames, storedCheckpoint } from './desired';
import { OwnershipLeases } from './ownership';
import type { SplitObjects } from './splitObjects';
import { sameStatus, splitStatus } from './splitStatus';
import { overridesFor, Workloads, type Workload, type WorkloadKind } from './workloads';
import { withOriginalEnv } from '../../core/queueConfig/originalEnv';
import { cleanupRecord } from './cleanupRecord';
import { leaseExpiry as leaseExpiryMs } from '../../core/crd/validateQueueSplit';

export interface CoordinatorSettings {
  installId: string;
  controllerNamespace: string;
  /** A step the agent reports pending for longer than this times out (→ abort or DEGRADED). */
  stepTimeoutMs: number;
}

export interface CoordinatorDeps {
  kc: KubeConfig;
  workloads: Workloads;
  agents: AgentObjects;
  splits: SplitObjects;
  ownership: OwnershipLeases;
  log: Logger;
}

const ENDED_PHASES: readonly string[] = ['Stopped', 'Failed', 'Rejected'];

interface Verdict {
  phase: 'Rejected' | 'Failed' | 'Stopped';
  reason: string;
  message: string;
}

export class Coordinator {
  private state: SplitState | undefined;
  private stateVersion: string | undefined;
  private recovered = false;
  private resolved: ResolvedQueue[] = [];
  private observed: ObservedState | undefined;
  private readonly verdicts = new Map<string, Verdict>();
  /** Routes this coordinator has had in its state: a QueueSplit whose route left is not re-added. */
  private readonly seen = new Set<string>();
  private phaseEntered = { phase: '' as string, generation: 0, at: Date.now() };
  /** When each route entered its current ATTACHING/DRAINING phase (restarts begin afresh). */
  private readonly routeEntered = new Map<string, { phase: string; at: number }>();
  private lastDesired = '';
  private blocking: string | undefined;
  private readonly store: ConfigMapStore;
  private readonly log: Logger;
  private names: KubernetesObjectNames | undefined;
  /** Actions a failure interrupted, retried on the next pass while the phase is unchanged. */
  private unfinished: { phase: string; actions: readonly SplitAction[] } | undefined;

  constructor(
    readonly namespace: string,
    readonly kind: WorkloadKind,
    readonly name: string,
    private readonly settings: CoordinatorSettings,
    private readonly deps: CoordinatorDeps,
  ) {
    this.store = new ConfigMapStore(deps.kc, namespace);
    this.log = deps.log.child({ workload: `${namespace}/${kind}/${name}` });
  }

  /** True once nothing is split and nothing is left to do: the controller may forget us. */
  get finished(): boolean {
    return this.state === undefined && this.recovered;
  }

  /** One level-triggered pass over this workload. */
  async pass(splits: readonly QueueSplit[]): Promise<void> {
    const workload = await this.deps.workloads.read(this.kind, this.namespace, this.name);
    if (!this.state && !(await this.load(workload))) {
      this.recovered = true;
      await this.startIfWanted(workload, splits);
      if (!this.state) return;
    }
    const state = this.state!;
    if (workload) this.resolve(workload);
    if (!this.recovered) {
      this.recovered = true;
      await this.execute(recover(state).actions);
    }
    if (this.unfinished) {
      const { phase, actions } = this.unfinished;
      this.unfinished = undefined;
      if (phase === state.phase) await this.execute(actions);
    }
    await this.readObserved();
    const events = [
      ...this.routeEvents(splits, workload),
      ...this.observedEvents(),
      ...(await this.controllerEvents(workload)),
      ...(await this.operatorEvents(workload)),
      ...this.routeTimeouts(),
    ];
    for (const event of events) await this.apply(event);
    await this.writeDesired(workload);
    await this.writeStatuses(splits);
    await this.finishIfIdle();
  }

  // ---- loading and starting -------------------------------------------------------------

  private async load(workload: Workload | undefined): Promise<boolean> {
    const uid = workload?.metadata?.uid;
    if (!uid) return false;
    this.names = kubernetesObjectNames({
      installId: this.settings.installId,
      workloadUid: uid,
      workloadName: this.name,
    });
    const doc = await this.store.read(this.names.stateConfigMap);
    const text = doc?.data[STATE_KEY];
    if (!doc || !text) return false;
    const parsed = parseState(text);
    if (!parsed.ok) {
      this.log.error('state.unreadable', {
        problem: parsed.errors.map((e) => `${e.path} ${e.problem}`).join('; '),
      });
      return false;
    }
    this.state = parsed.value;
    this.stateVersion = doc.resourceVersion;
    this.log.info('state.loaded', { phase: this.state.phase, generation: this.state.generation });
    return true;
  }

  private resolve(workload: Workload): ResolvedQueue[] | undefined {
    const resolved = resolveWorkload(withOriginalEnv(workload) as WorkloadLike & Workload);
    if (!resolved.ok) return undefined;
    this.resolved = resolved.value.queues;
    return this.resolved;
  }

  private async startIfWanted(workload: Workload | undefined, splits: readonly QueueSplit[]): Promise<void> {
    // A split that already ended (Failed after a rollback, Stopped, Rejected) starts nothing:
    // the developer starts a new one.
    const live = splits.filter(
      (s) => !s.metadata.deletionTimestamp && !ENDED_PHASES.includes(s.status?.phase ?? 'Pending'),
    );
    if (live.length === 0) {
      for (const s of splits) await this.deps.splits.removeFinalizer(s);
      return;
    }
    const reject = async (reason: string, message: string) => {
      for (const s of live) await this.setVerdict(s, { phase: 'Rejected', reason, message });
    };
    if (!workload?.metadata?.uid) {
      return reject(
        'WorkloadNotFound',
        `${this.kind} ${this.namespace}/${this.name} does not exist. Check spec.workload.`,
      );
    }
    if (workload.metadata.deletionTimestamp) {
      return reject('WorkloadDeleting', 'The workload is being deleted; it cannot be split.');
    }
    const hpa = await this.deps.workloads.autoscalerOf(this.kind, this.namespace, this.name);
    if (hpa) {
      return reject(
        'AutoscalerManaged',
        `HorizontalPodAutoscaler ${hpa} scales this workload; Queue Split must control replicas during a split. Split a workload without an HPA.`,
      );
    }
    const resolved = resolveWorkload(withOriginalEnv(workload) as WorkloadLike & Workload);
    if (!resolved.ok) {
      const detail = resolved.errors.map((e) => `${e.path}: ${e.problem} Fix: ${e.fix}`).join(' | ');
      return reject('InvalidDeclaration', detail);
    }
    this.resolved = resolved.value.queues;
    const conflict = await this.deps.ownership.acquire(
      this.settings.controllerNamespace,
      this.namespace,
      workload,
      this.resolved,
    );
    if (conflict) return reject('SourceOwnedElsewhere', conflict);
    this.names = kubernetesObjectNames({
      installId: this.settings.installId,
      workloadUid: workload.metadata.uid,
      workloadName: this.name,
    });
    this.state = initialState({
      workload: { kind: this.kind, namespace: this.namespace, name: this.name, uid: workload.metadata.uid },
      installId: this.settings.installId,
      queues: Object.fromEntries(this.resolved.map((q) => [q.name, q.provider])),
    });
    this.stateVersion = undefined;
    await this.deps.workloads.addFinalizer(this.kind, workload);
    await this.persist();
    this.log.info('state.created', { queues: this.resolved.map((q) => q.name).join(',') });
  }

  // ---- events -----------------------------------------------------------------------------

  private routeEvents(splits: readonly QueueSplit[], workload: Workload | undefined): SplitEvent[] {
    const state = this.state!;
    const events: SplitEvent[] = [];
    const byRoute = new Map(splits.map((s) => [s.spec.routeId, s]));
    const workloadGone = !workload || Boolean(workload.metadata?.deletionTimestamp);
    for (const route of state.routes) {
      const split = byRoute.get(route.routeId);
      if (!split || split.metadata.deletionTimestamp || workloadGone) {
        events.push({ type: 'routeDeleted', routeId: route.routeId });
        continue;
      }
      const expires = leaseExpiry(split);
      if (expires !== route.leaseExpiresAt)
        events.push({ type: 'leaseRenewed', routeId: route.routeId, expiresAt: expires });
      if (Date.parse(expires) < Date.now() && route.phase !== 'DRAINING') {
        events.push({ type: 'leaseExpired', routeId: route.routeId });
      }
    }
    if (workloadGone) return events;
    for (const split of splits) {
      const routeId = split.spec.routeId;
      if (split.metadata.deletionTimestamp || this.verdicts.has(routeId)) continue;
      if (state.routes.some((r) => r.routeId === routeId)) continue;
      // A route that already ran and ended (drained after a failure or an expired lease) is
      // not started again by its old object: the developer starts a new split.
      if (ENDED_PHASES.includes(split.status?.phase ?? 'Pending')) continue;
      if (this.seen.has(routeId)) {
        this.verdicts.set(routeId, {
          phase: 'Stopped',
          reason: 'RouteEnded',
          message: 'This split ended (see the controller events). Start a new split.',
        });
        continue;
      }
      if (Date.parse(leaseExpiry(split)) < Date.now()) continue; // its owner is gone
      const filter = parseFilter(split.spec.filter, 'spec.filter');
      if (!filter.ok) {
        this.verdicts.set(routeId, {
          phase: 'Rejected',
          reason: 'InvalidFilter',
          message: filter.errors.map((e) => `${e.path}: ${e.problem} Fix: ${e.fix}`).join(' | '),
        });
        continue;
      }
      events.push({
        type: 'routeRequested',
        route: {
          routeId,
          owner: split.spec.owner,
          queues: split.spec.queues,
          filter: filter.value,
          leaseExpiresAt: leaseExpiry(split),
        },
      });
    }
    return events;
  }

  private async readObserved(): Promise<void> {
    if (!this.names) return;
    const doc = await this.store.read(this.names.agentStatusConfigMap);
    const text = doc?.data[OBSERVED_KEY];
    this.observed = text ? (JSON.parse(text) as ObservedState) : undefined;
  }

  private observedEvents(): SplitEvent[] {
    const state = this.state!;
    const observed = this.observed;
    if (!observed) return [];
    const events: SplitEvent[] = [];
    this.trackPhase();
    if (AGENT_STEPS.includes(state.phase)) {
      const spec = STEPS[state.phase];
      for (const queue of pendingQueues(state)) {
        const obs = observed.queues[queue];
        if (!obs || obs.step !== state.phase || obs.generation < this.phaseEntered.generation) continue;
        const phase = state.phase;
        const o = obs.outcome;
        if (o.kind === 'done') {
          const prior = storedCheckpoint(state, queue);
          const checkpoint = { engine: o.checkpoint ?? prior.engine, handoff: o.handoff ?? prior.handoff };
          events.push(
            spec?.completion === 'proof'
              ? {
                  type: 'proofReported',
                  phase,
                  queue,
                  proven: true,
                  evidence: o.evidence,
                  kept: o.kept ?? [],
                  checkpoint,
                }
              : { type: 'stepSucceeded', phase, queue, checkpoint },
          );
        } else if (o.kind === 'degraded' || o.kind === 'rejected') {
          events.push({ type: 'stepFailed', phase, queue, reason: o.reason });
        } else {
          this.blocking = `${queue}: ${o.reason}`;
          if (Date.now() - this.phaseEntered.at > this.settings.stepTimeoutMs) {
            events.push({ type: 'stepTimedOut', phase, queue });
          }
        }
      }
    }
    for (const route of state.routes) {
      const obs = observed.routes[route.routeId];
      if (!obs) continue;
      if (route.phase === 'ATTACHING' && obs.ackedGeneration >= route.generation) {
        events.push({ type: 'routeAcked', routeId: route.routeId, generation: obs.ackedGeneration });
      }
      if (route.phase === 'ATTACHING' && obs.failed) {
        events.push({ type: 'routeStepFailed', routeId: route.routeId, reason: obs.failed });
      }
      if (route.phase === 'DRAINING' && obs.drained) {
        events.push({
          type: 'routeDrained',
          routeId: route.routeId,
          proven: obs.drained.proven,
          evidence: obs.drained.evidence,
          kept: obs.drained.kept,
        });
      }
    }
    return events;
  }

  /** A route attaching or draining for longer than a step may take times out: an attach then
   * drains, a drain degrades (its shadow kept, the reason shown) instead of waiting silently. */
  private routeTimeouts(): SplitEvent[] {
    const events: SplitEvent[] = [];
    for (const route of this.state!.routes) {
      const { routeId, phase } = route;
      if (phase !== 'ATTACHING' && phase !== 'DRAINING') {
        this.routeEntered.delete(routeId);
        continue;
      }
      const seen = this.routeEntered.get(routeId);
      if (seen?.phase !== phase) this.routeEntered.set(routeId, { phase, at: Date.now() });
      else if (Date.now() - seen.at > this.settings.stepTimeoutMs) {
        this.routeEntered.delete(routeId);
        events.push({ type: 'routeTimedOut', routeId });
      }
    }
    return events;
  }

  private trackPhase(): void {
    const state = this.state!;
    if (this.phaseEntered.phase !== state.phase) {
      this.phaseEntered = { phase: state.phase, generation: state.generation, at: Date.now() };
      this.blocking = undefined;
    }
  }

  /** Proofs the controller itself can read from the API: pods gone, rollouts finished. */
  private async controllerEvents(workload: Workload | undefined): Promise<SplitEvent[]> {
    const state = this.state!;
    this.trackPhase();
    if (!workload) return [];
    const phase = state.phase;
    const manualScale = await this.manualScale();
    if (manualScale) return [{ type: 'stepFailed', phase, reason: manualScale }];
    if (phase === 'QUIESCING_APP' && state.preActivationReplicas !== null) {
      const pods = await this.deps.workloads.pods(workload);
      if (pods.length === 0) {
        return [{ type: 'proofReported', phase, proven: true, evidence: 'the workload has no pods left' }];
      }
      this.blocking = `waiting for ${pods.length} application pod(s) to stop`;
    }
    if (phase === 'RESTORING_APP' && workload.metadata?.deletionTimestamp) {
      return [
        {
          type: 'proofReported',
          phase,
          proven: true,
          evidence: 'the workload is being deleted: nothing to restore',
        },
      ];
    }
    if (phase === 'REDIRECTING_APP' || phase === 'RESTORING_APP') {
      const overridden =
        phase === 'REDIRECTING_APP' || state.activeQueues.some((q) => !state.workflow?.queues.includes(q));
      const rollout = await this.deps.workloads.rolledOut(this.kind, workload, overridden);
      if (rollout.ok) return [{ type: 'proofReported', phase, proven: true, evidence: rollout.why }];
      if (phase === 'REDIRECTING_APP' && rollout.failed) {
        // The redirected app will not come up: abort now rather than after the step timeout.
        const reason = `the application did not start with its source pointed at the split: ${rollout.failed}`;
        return [{ type: 'stepFailed', phase, reason }];
      }
      this.blocking = `rollout: ${rollout.failed ?? rollout.why}`;
    }
    if (phase === 'REDIRECTING_APP' || phase === 'RESTORING_APP' || phase === 'QUIESCING_APP') {
      if (Date.now() - this.phaseEntered.at > this.settings.stepTimeoutMs)
        return [{ type: 'stepTimedOut', phase }];
    }
    return [];
  }

  /**
   * From the quiesce to the redirect the controller holds the workload at a replica count it
   * chose (0, then the recorded count). Anyone else scaling it meanwhile — which the
   * resourceVersion precondition catches only at the moment of our own scale — aborts the
   * activation into the proved rollback instead of racing the pump for the source.
   */
  private async manualScale(): Promise<string | undefined> {
    const state = this.state!;
    if (state.preActivationReplicas === null || this.unfinished) return undefined;
    const held =
      state.phase === 'QUIESCING_APP' || state.phase === 'STARTING_PUMP'
        ? 0
        : state.phase === 'REDIRECTING_APP'
          ? state.preActivationReplicas
          : undefined;
    if (held === undefined) return undefined;
    // Fresh: actions earlier in this pass may have scaled it after the pass's first read.
    const workload = await this.deps.workloads.read(this.kind, this.namespace, this.name);
    const replicas = workload?.spec?.replicas ?? 1;
    if (!workload || workload.metadata?.deletionTimestamp || replicas === held) return undefined;
    return `the workload was scaled to ${replicas} replicas by someone else during the cutover (Queue Split holds it at ${held} until the split is active); do not scale a workload while its split activates`;
  }

  /** An operator's retry annotation on the workload: acted on once, then removed. */
  private async operatorEvents(workload: Workload | undefined): Promise<SplitEvent[]> {
    if (workload?.metadata?.annotations?.[RETRY_ANNOTATION] === undefined) return [];
    await this.deps.workloads.removeAnnotation(this.kind, this.namespace, this.name, RETRY_ANNOTATION);
    const events = retryEvents(this.state!);
    this.log.info('operator.retry', { retries: events.length });
    return events;
  }

  private async apply(event: SplitEvent): Promise<void> {
    const result = transition(this.state!, event);
    if (result.outcome === 'invalid') this.log.warn('event.invalid', { type: event.type, note: result.note });
    if (result.outcome !== 'applied' && result.outcome !== 'rejected') return;
    this.log.info('event.applied', { type: event.type, note: result.note, phase: result.state.phase });
    this.state = result.state;
    for (const r of result.state.routes) this.seen.add(r.routeId);
    await this.execute(result.actions);
  }

  // ---- actions ----------------------------------------------------------------------------

  private async execute(actions: readonly SplitAction[]): Promise<void> {
    for (const [index, action] of actions.entries()) {
      try {
        await this.run(action);
      } catch (err) {
        const reason = describeError(err);
        this.log.error('action.failed', { action: action.type, reason });
        // Every action is idempotent: the rest of the list is retried on the next pass.
        this.unfinished = { phase: this.state!.phase, actions: actions.slice(index) };
        const phase = this.state!.phase;
        if (isConflict(err) && action.type === 'scaleWorkload') {
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

  private async run(action: SplitAction): Promise<void> {
    const state = this.state!;
    const names = this.names!;
    switch (action.type) {
      case 'persistState':
        return this.persist();
      case 'ensureQueueAgent':
        return this.deps.agents.ensure(this.namespace, names, this.name, this.resolved);
      case 'observeWorkload': {
        const workload = await this.deps.workloads.read(this.kind, this.namespace, this.name);
        if (!workload) throw new Error('the workload is gone');
        return this.apply({
          type: 'workloadObserved',
          replicas: workload.spec?.replicas ?? 1,
          resourceVersion: workload.metadata?.resourceVersion ?? '',
        });
      }
      case 'scaleWorkload':
        return this.deps.workloads.scale(
          this.kind,
          this.namespace,
          this.name,
          action.replicas,
          action.resourceVersion,
        );
      case 'applyOverrides':
      case 'removeOverrides': {
        const keep =
          action.type === 'applyOverrides'
            ? action.queues
            : state.activeQueues.filter((q) => !action.queues.includes(q));
        const queues = this.resolved.filter((q) => keep.includes(q.name));
        const overrides = overridesFor(queues, (q) => queueNames(state, q.name));
        return this.deps.workloads.setOverrides(
          this.kind,
          this.namespace,
          this.name,
          overrides,
          action.generation,
        );
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
          reason: action.type === 'rejectRoute' ? 'FilterOverlaps' : 'ActivationFailed',
          message,
        });
        return;
      }
      case 'reportDegraded':
        this.log.warn('workload.degraded', { reason: action.reason, nextAction: action.nextAction });
        this.blocking = `${action.reason} — ${action.nextAction}`;
        return;
      case 'acquireLease': {
        const workload = await this.deps.workloads.read(this.kind, this.namespace, this.name);
        if (!workload) throw new Error('the workload is gone');
        const conflict = await this.deps.ownership.acquire(
          this.settings.controllerNamespace,
          this.namespace,
          workload,
          this.resolved,
        );
        if (conflict) throw new Error(conflict);
        return;
      }
      case 'ensureFinalizer': {
        const workload = await this.deps.workloads.read(this.kind, this.namespace, this.name);
        if (!workload) throw new Error('the workload is gone');
        return this.deps.workloads.addFinalizer(this.kind, workload);
      }
      case 'removeFinalizer':
        return this.deps.workloads.removeFinalizer(this.kind, this.namespace, this.name);
      case 'releaseLease':
        return this.deps.ownership.release(this.settings.controllerNamespace, state.workload.uid);
      case 'reapQueueAgent':
        return this.deps.agents.reap(this.namespace, names);
      default:
        // Agent steps (prepareQueues, startPump, stopSourceAtFrontier, publishRoutes, drainRoute,
        // ...) are carried by the desired document, written after every pass; waits
        // (awaitQuiesce, awaitRollout) are checked by controllerEvents.
        return;
    }
  }

  private async persist(): Promise<void> {
    const names = this.names!;
    this.stateVersion = await this.store.write(
      names.stateConfigMap,
      {
        [STATE_KEY]: serializeState(this.state!),
        ...(this.lastDesired ? { [DESIRED_KEY]: this.lastDesired } : {}),
      },
      {
        labels: { 'queuesplit.dev/state': 'true', 'queuesplit.dev/workload': this.name },
        resourceVersion: this.stateVersion,
      },
    );
  }

  /** The agent's step gates: a rollback or the handback check needs the app at zero pods. */
  private async gated(workload: Workload | undefined): Promise<boolean> {
    const state = this.state!;
    const needsZero =
      (state.phase === 'ABORTING_ACTIVATION' && state.preActivationReplicas !== null) ||
      (state.phase === 'QUIESCING_FOR_HANDBACK' && state.handbackReplicas !== null);
    if (state.phase === 'QUIESCING_FOR_HANDBACK' && state.handbackReplicas === null) return false;
    if (!needsZero || !workload) return true;
    const pods = await this.deps.workloads.pods(workload);
    if (pods.length > 0) this.blocking = `waiting for ${pods.length} application pod(s) to stop`;
    return pods.length === 0;
  }

  private async writeDesired(workload: Workload | undefined): Promise<void> {
    if (!this.state || !this.names) return;
    const desired = JSON.stringify(desiredState(this.state, this.resolved, await this.gated(workload)));
    if (desired === this.lastDesired) return;
    this.lastDesired = desired;
    await this.persist();
  }

  private async writeStatuses(splits: readonly QueueSplit[]): Promise<void> {
    for (const split of splits) {
      const routeId = split.spec.routeId;
      const inState = this.state?.routes.some((r) => r.routeId === routeId) ?? false;
      const verdict = this.verdicts.get(routeId);
      if (inState || verdict) await this.deps.splits.addFinalizer(split);
      const status = splitStatus(split, {
        state: this.state,
        observed: this.observed,
        resolved: this.resolved,
        ...(verdict ? { verdict } : {}),
        ...(this.blocking ? { blocking: this.blocking } : {}),
      });
      if (!sameStatus(split.status, status)) await this.deps.splits.writeStatus(split, status);
      // A deleted split is released once its route is drained (or was never accepted).
      if (split.metadata.deletionTimestamp && !inState) await this.deps.splits.removeFinalizer(split);
    }
  }

  private async setVerdict(split: QueueSplit, verdict: Verdict): Promise<void> {
    this.verdicts.set(split.spec.routeId, verdict);
    const status = splitStatus(split, { state: undefined, observed: undefined, resolved: [], verdict });
    if (!sameStatus(split.status, status)) await this.deps.splits.writeStatus(split, status);
  }

  /** The state document goes with the handback; kept resources must not vanish from view. */
  private async recordCleanupPending(state: SplitState): Promise<void> {
    const names = this.names!;
    const existing = await this.store.read(names.cleanupConfigMap);
    await this.store.write(names.cleanupConfigMap, cleanupRecord(state, existing?.data[CLEANUP_KEY]), {
      labels: { 'queuesplit.dev/cleanup': 'true', 'queuesplit.dev/workload': this.name },
      resourceVersion: existing?.resourceVersion,
    });
    this.log.warn('workload.cleanup_pending', {
      configMap: names.cleanupConfigMap,
      resources: state.cleanupPending.map((p) => p.resource.name).join(','),
    });
  }

  private async finishIfIdle(): Promise<void> {
    const state = this.state;
    if (!state || state.phase !== 'IDLE' || state.routes.length > 0 || state.workflow !== null) return;
    const names = this.names!;
    await this.deps.agents.reap(this.namespace, names);
    await this.deps.workloads.removeFinalizer(this.kind, this.namespace, this.name);
    if (state.cleanupPending.length > 0) await this.recordCleanupPending(state);
    await this.store.remove(names.stateConfigMap);
    this.log.info('workload.handed_back', { cleanupPending: state.cleanupPending.length });
    this.state = undefined;
    this.stateVersion = undefined;
    this.lastDesired = '';
  }
}

/** The lease expiry as the state document records it (ISO time). */
export function leaseExpiry(split: QueueSplit): string {
  return new Date(leaseExpiryMs(split.spec)).toISOString();
}

export type { WorkloadPhase };
