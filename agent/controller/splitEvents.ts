// The events of one workload's pass (docs/design.md §6), from each source the phase machine
// listens to: the QueueSplits (routes requested, leases, deletions), what the queue-agent
// observed, whether the queue-agent runs at all, what the controller reads from the API itself
// (pods gone, rollouts, manual scaling, env drift), an operator's retry, and the clocks of
// routes that attach or drain too long. They read; the coordinator applies what they return.
import { wholeQueueRefusal, type AdmissionRefusal } from '../../core/crd/admission';
import type { QueueSplit } from '../../core/crd/queueSplitSchema';
import type { ObservedState } from '../../core/agentProtocol';
import { parseFilter } from '../../core/filter';
import type { KubernetesObjectNames } from '../../core/names';
import type { ResolvedQueue } from '../../core/queueConfig/resolveQueues';
import type { SplitEvent } from '../../core/state/events';
import { RETRY_ANNOTATION, retryEvents } from '../../core/state/operatorRetry';
import { pendingQueues } from '../../core/state/phaseActions';
import { STEPS } from '../../core/state/phases';
import type { SplitState } from '../../core/state/stateDocument';
import type { Logger } from '../log';
import type { AgentObjects } from './agentObjects';
import { autoscalerNames } from './autoscalers';
import { leaseEvents, leaseExpiry, leaseRanOut } from './leaseEvents';
import { AGENT_STEPS, queueNames, storedCheckpoint } from './desired';
import type { PhaseProgress } from './phaseProgress';
import type { Verdict, WorkloadId } from './verdicts';
import { ENDED_PHASES } from './verdicts';
import { overrideDrift, overridesFor, type Workload, type Workloads } from './workloads';
import { specFilter } from '../../core/crd/validateQueueSplit';

export interface EventSettings {
  /** A step the agent reports pending for longer than this times out (→ abort or DEGRADED). */
  stepTimeoutMs: number;
  /** A queue-agent unready this long during one of its steps fails the step, naming the cause. */
  agentStartTimeoutMs: number;
}

export class SplitEvents {
  /** When each route entered its current ATTACHING/DRAINING phase (restarts begin afresh). */
  private readonly routeEntered = new Map<string, { phase: string; at: number }>();
  /** When the queue-agent was first seen unready during one of its steps (cleared once ready). */
  private agentUnreadySince: number | undefined;
  /** When an operator last retried: the agent then gets the full start timeout, whatever the cause. */
  private retriedAt: number | undefined;

  constructor(
    private readonly id: WorkloadId,
    private readonly settings: EventSettings,
    private readonly deps: { workloads: Workloads; agents: AgentObjects },
    private readonly log: Logger,
    private readonly progress: PhaseProgress,
    /** Verdicts on QueueSplits, shared with the coordinator (routeEvents adds some). */
    private readonly verdicts: Map<string, Verdict>,
    /** Routes the workload's state has had: a QueueSplit whose route left is not re-added. */
    private readonly seen: ReadonlySet<string>,
  ) {}

  /** The QueueSplits' wishes: routes requested, leases renewed or expired, routes deleted.
   * `splits` as listed at `listedAt` (ms since the epoch). */
  routeEvents(
    state: SplitState,
    splits: readonly QueueSplit[],
    workload: Workload | undefined,
    listedAt: number,
  ): SplitEvent[] {
    const events: SplitEvent[] = [];
    const byRoute = new Map(splits.map((s) => [s.spec.routeId, s]));
    const workloadGone = !workload || Boolean(workload.metadata?.deletionTimestamp);
    for (const route of state.routes) {
      const split = byRoute.get(route.routeId);
      if (!split || split.metadata.deletionTimestamp || workloadGone) {
        events.push({ type: 'routeDeleted', routeId: route.routeId });
        continue;
      }
      events.push(...leaseEvents(route, split, listedAt));
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
      if (leaseRanOut(split, listedAt)) continue; // its owner is gone
      const filter = parseFilter(specFilter(split.spec), 'spec.filter');
      if (!filter.ok) {
        this.verdicts.set(routeId, {
          phase: 'Rejected',
          reason: 'InvalidFilter',
          message: filter.errors.map((e) => `${e.path}: ${e.problem} Fix: ${e.fix}`).join(' | '),
        });
        continue;
      }
      const refusal = workload ? workloadRefusal(split, workload, this.id) : undefined;
      if (refusal) {
        this.verdicts.set(routeId, { phase: 'Rejected', ...refusal });
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
          ...(split.spec.session?.publicKey ? { publicKey: split.spec.session.publicKey } : {}),
          ...(split.metadata.uid ? { splitUid: split.metadata.uid } : {}),
        },
      });
    }
    return events;
  }

  /** What the queue-agent reported: steps done, failed or still pending, routes acked and drained. */
  observedEvents(state: SplitState, observed: ObservedState | undefined): SplitEvent[] {
    if (!observed) return [];
    const events: SplitEvent[] = [];
    this.progress.track(state);
    if (AGENT_STEPS.includes(state.phase)) {
      const spec = STEPS[state.phase];
      for (const queue of pendingQueues(state)) {
        const obs = observed.queues[queue];
        if (!obs || obs.step !== state.phase || obs.generation < this.progress.entered.generation) continue;
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
        } else if (o.kind === 'rejected' && o.nothingChanged) {
          events.push({ type: 'stepFailed', phase, queue, reason: o.reason, nothingChanged: true });
        } else if (o.kind === 'degraded' || o.kind === 'rejected') {
          events.push({ type: 'stepFailed', phase, queue, reason: o.reason });
        } else {
          this.progress.blocking = `${queue}: ${o.reason}`;
          if (this.progress.longerThan(this.settings.stepTimeoutMs)) {
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
  routeTimeouts(state: SplitState): SplitEvent[] {
    const events: SplitEvent[] = [];
    for (const route of state.routes) {
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

  /**
   * A step the queue-agent must carry out cannot finish while the agent does not run: an image
   * that cannot be pulled or a refused pod fails the step at once, a crash loop or a failing
   * readiness probe once it has lasted the agent start timeout; the reason names the cause from
   * the pods' status and events and the safe next action (README "When a split is Degraded").
   */
  async agentEvents(
    state: SplitState,
    names: KubernetesObjectNames | undefined,
    observed: ObservedState | undefined,
  ): Promise<SplitEvent[]> {
    if (!names || !AGENT_STEPS.includes(state.phase)) {
      this.agentUnreadySince = undefined;
      return [];
    }
    const trouble = await this.deps.agents.trouble(this.id.namespace, names);
    if (!trouble) {
      this.agentUnreadySince = undefined;
      return [];
    }
    const now = Date.now();
    this.agentUnreadySince ??= now;
    this.progress.blocking = `waiting for the queue-agent: ${trouble.cause}`;
    const timeout = this.settings.agentStartTimeoutMs;
    const afterRetry = this.retriedAt !== undefined && now - this.retriedAt < timeout;
    const immediate = trouble.permanent && !afterRetry;
    // Once the agent has reported in this split's life it did start: a restart or a slow pass
    // later (kill -9, a long drain) is the step timeout's business, not a start failure.
    if (!immediate && (observed !== undefined || now - this.agentUnreadySince < timeout)) return [];
    this.log.warn('agent.cannot_run', { phase: state.phase, cause: trouble.cause });
    return [
      { type: 'stepFailed', phase: state.phase, reason: `the queue-agent cannot run: ${trouble.cause}` },
    ];
  }

  /** Proofs the controller itself can read from the API: pods gone, rollouts finished. */
  async controllerEvents(
    state: SplitState,
    workload: Workload | undefined,
    resolved: readonly ResolvedQueue[],
    unfinished: boolean,
    observed?: ObservedState,
  ): Promise<SplitEvent[]> {
    this.progress.track(state);
    if (!workload) return [];
    const phase = state.phase;
    const manualScale = await this.manualScale(state, unfinished);
    if (manualScale) return [{ type: 'stepFailed', phase, reason: manualScale }];
    await this.holdZeroWindow(state, unfinished);
    const reverted = this.redirectReverted(state, workload, resolved, unfinished);
    if (reverted) return [{ type: 'stepFailed', phase, reason: reverted }];
    const drift = await this.envDrift(state, workload, resolved, unfinished);
    if (drift) return [{ type: 'faultReported', reason: drift }];
    if (phase === 'QUIESCING_APP' && state.preActivationReplicas !== null) {
      const pods = await this.deps.workloads.pods(workload);
      if (pods.length === 0) {
        return [{ type: 'proofReported', phase, proven: true, evidence: 'the workload has no pods left' }];
      }
      this.progress.blocking = `waiting for ${pods.length} application pod(s) to stop`;
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
      const consumed = appConsumes(state, observed);
      const rollout = await this.deps.workloads.rolledOut(this.id.kind, workload, overridden, consumed);
      this.progress.recheckAt = rollout.stableInMs ? Date.now() + rollout.stableInMs : undefined;
      if (rollout.ok) return [{ type: 'proofReported', phase, proven: true, evidence: rollout.why }];
      if (phase === 'REDIRECTING_APP' && rollout.failed) {
        // The redirected app will not come up: abort now rather than after the step timeout.
        const reason = `the application did not start with its source pointed at the split: ${rollout.failed}`;
        return [{ type: 'stepFailed', phase, reason }];
      }
      this.progress.blocking = `rollout: ${rollout.failed ?? rollout.why}`;
    }
    if (phase === 'REDIRECTING_APP' || phase === 'RESTORING_APP' || phase === 'QUIESCING_APP') {
      if (this.progress.longerThan(this.settings.stepTimeoutMs)) return [{ type: 'stepTimedOut', phase }];
    }
    return [];
  }

  /**
   * From the quiesce to the redirect the controller holds the workload at a replica count it
   * chose (0, then the recorded count). Anyone else scaling it meanwhile — which the
   * resourceVersion precondition catches only at the moment of our own scale — aborts the
   * activation into the proved rollback instead of racing the pump for the source.
   *
   * An HPA does not scale a target held at zero; once the redirect scaled it up again its pods
   * carry the override, so an HPA scaling it then is its own business, not a race. An HPA that
   * did scale during the zero window (a reconcile in flight when we scaled: it retries a
   * conflict with the count it computed before) is a race like any other, and is named.
   */
  private async manualScale(state: SplitState, unfinished: boolean): Promise<string | undefined> {
    if (state.preActivationReplicas === null || unfinished) return undefined;
    const held =
      state.phase === 'QUIESCING_APP' || state.phase === 'STARTING_PUMP'
        ? 0
        : state.phase === 'REDIRECTING_APP'
          ? state.preActivationReplicas
          : undefined;
    if (held === undefined) return undefined;
    // Fresh: actions earlier in this pass may have scaled it after the pass's first read.
    const workload = await this.deps.workloads.read(this.id.kind, this.id.namespace, this.id.name);
    const replicas = workload?.spec?.replicas ?? 1;
    if (!workload || workload.metadata?.deletionTimestamp || replicas === held) return undefined;
    const hpas = await this.deps.workloads.autoscalersOf(this.id.kind, this.id.namespace, this.id.name);
    if (hpas.length > 0 && held > 0) return undefined;
    const who = hpas.length > 0 ? `${autoscalerNames(hpas)} (or someone else)` : 'someone else';
    return `the workload was scaled to ${replicas} replicas by ${who} during the cutover (Queue Split holds it at ${held} until the split is active); do not scale a workload while its split activates`;
  }

  /**
   * The windows that need the app at zero pods hold it there, level-based: the handback from its
   * scale-down until the restore (a scale-up would attach the app to its shadow while the agent
   * proves it drained), and a rollback that scaled it down (the rollback republishes or reuses
   * the group only with the app gone). Whoever scaled it up meanwhile (an HPA reconcile in
   * flight, a GitOps sync putting back its replica count) is undone and counted, so the status
   * can name it, and the proof waits for the pods to go again; once they stop scaling it, the
   * step finishes by itself.
   */
  private async holdZeroWindow(state: SplitState, unfinished: boolean): Promise<void> {
    const window =
      ((state.phase === 'QUIESCING_FOR_HANDBACK' || state.phase === 'COMMITTING_HANDOFF') &&
        state.handbackReplicas !== null) ||
      (state.phase === 'ABORTING_ACTIVATION' && state.preActivationReplicas !== null);
    if (!window || unfinished) return;
    const workload = await this.deps.workloads.read(this.id.kind, this.id.namespace, this.id.name);
    const replicas = workload?.spec?.replicas ?? 1;
    if (!workload || workload.metadata?.deletionTimestamp || replicas === 0) return;
    this.log.warn('zero_window.rescaled', { phase: state.phase, replicas });
    await this.deps.workloads.scale(this.id.kind, this.id.namespace, this.id.name, 0);
    this.progress.rescaled = { times: (this.progress.rescaled?.times ?? 0) + 1, replicas };
  }

  /**
   * While ACTIVE the app must read its application shadows: an env override changed back (a
   * GitOps sync, a person) makes it read the source beside the split, so messages meant for a
   * split can reach it; so does a volume that names its ConfigMap again instead of the split's
   * copy. A copy deleted or edited, or its original changed (the app reads an old copy of its
   * configuration), is drift too. Reported DEGRADED and not re-applied (docs/design.md, "Drift").
   */
  private async envDrift(
    state: SplitState,
    workload: Workload,
    resolved: readonly ResolvedQueue[],
    unfinished: boolean,
  ): Promise<string | undefined> {
    if (state.phase !== 'ACTIVE' || unfinished || workload.metadata?.deletionTimestamp) return undefined;
    const queues = resolved.filter((q) => state.activeQueues.includes(q.name));
    const overrides = overridesFor(queues, (q) => queueNames(state, q));
    const changed = overrideDrift(workload, overrides);
    if (changed.length === 0) {
      const files = await this.deps.workloads.fileDrift(this.id.kind, workload, overrides);
      if (files.length === 0) return undefined;
      return (
        `drift: the ConfigMap copy the split serves the app no longer holds: ${files.join('; ')}. ` +
        `The app may read its source beside the split or an outdated configuration (no message is lost: the application shadow keeps what the app no longer reads). ` +
        `Leave the ConfigMap alone while the workload is split (or stop the split first), then retry: the retry copies it again`
      );
    }
    return (
      `drift: the env override of ${changed.join(', ')} was changed by someone else while split, so the app reads its source beside the split and messages meant for a split can reach it (none is lost: the application shadow keeps what the app no longer reads). ` +
      `Make whoever changed it (a GitOps sync?) leave these env values alone while the workload is split, then retry: the retry puts the override back`
    );
  }

  /**
   * The redirect's override put back by someone else before the split is active (a GitOps sync
   * re-applying the manifest): the rollout would never bring pods of the wanted env, so the
   * activation rolls back now, naming it, instead of after the step timeout.
   */
  private redirectReverted(
    state: SplitState,
    workload: Workload,
    resolved: readonly ResolvedQueue[],
    unfinished: boolean,
  ): string | undefined {
    if (state.phase !== 'REDIRECTING_APP' || unfinished || workload.metadata?.deletionTimestamp)
      return undefined;
    const wanted = new Set([...state.activeQueues, ...(state.workflow?.queues ?? [])]);
    const changed = overrideDrift(
      workload,
      overridesFor(
        resolved.filter((q) => wanted.has(q.name)),
        (q) => queueNames(state, q),
      ),
    );
    if (changed.length === 0) return undefined;
    return `the env override of ${changed.join(', ')} was changed back by someone else during the redirect (a GitOps sync re-applying the manifest?); make it leave these env values alone while the workload is split (README, "The workloads it splits")`;
  }

  /**
   * An operator's retry annotation on the workload: acted on, then removed. Removed only after
   * the retry's own work (the agent's roll) succeeded: a pass that fails before (a 409 on the
   * agent Deployment) leaves it for the next pass, never loses it. Rolling twice is harmless.
   */
  async operatorEvents(
    state: SplitState,
    workload: Workload | undefined,
    names: KubernetesObjectNames | undefined,
    resolved: readonly ResolvedQueue[],
  ): Promise<SplitEvent[]> {
    if (workload?.metadata?.annotations?.[RETRY_ANNOTATION] === undefined) return [];
    const events = retryEvents(state);
    if (events.length > 0 && names) {
      // The fix may have been the agent's image or the namespace's policy: bring the agent
      // Deployment up to date and give it the full start timeout before judging it again.
      // An agent that does not run ready is rolled too, so its pod is created afresh.
      const stuck = (await this.deps.agents.trouble(this.id.namespace, names)) !== undefined;
      await this.deps.agents.ensure(this.id.namespace, names, this.id.name, resolved, stuck);
    }
    await this.deps.workloads.removeAnnotation(
      this.id.kind,
      this.id.namespace,
      this.id.name,
      RETRY_ANNOTATION,
    );
    this.log.info('operator.retry', { retries: events.length });
    if (events.length > 0 && names) {
      this.retriedAt = Date.now();
      this.agentUnreadySince = undefined;
    }
    return events;
  }
}

/** Why this workload refuses a (valid) split, e.g. an empty filter it did not opt in to. */
export function workloadRefusal(
  split: QueueSplit,
  workload: Workload,
  id: WorkloadId,
): AdmissionRefusal | undefined {
  const filter = parseFilter(specFilter(split.spec), 'spec.filter');
  if (!filter.ok) return undefined; // reported as InvalidFilter by routeEvents
  return wholeQueueRefusal(filter.value, {
    kind: id.kind,
    namespace: id.namespace,
    name: id.name,
    annotations: workload.metadata?.annotations ?? {},
  });
}

/**
 * The queue-agent read a consumer of the application on every queue this workflow redirects or
 * restores, in this generation of the desired document: on the application shadow in
 * REDIRECTING_APP (the app was quiesced before, so every consumer there is a redirected pod's),
 * on the source in RESTORING_APP (the pump has stopped: every consumer there is a restored pod's).
 * The agent reads them in those phases only.
 */
function appConsumes(state: SplitState, observed: ObservedState | undefined): boolean {
  const field =
    state.phase === 'REDIRECTING_APP'
      ? 'appShadowConsumers'
      : state.phase === 'RESTORING_APP'
        ? 'sourceConsumers'
        : undefined;
  const queues = state.workflow?.queues ?? [];
  if (!field || !observed || observed.observedGeneration < state.generation || queues.length === 0)
    return false;
  return queues.every((q) => (observed.queues[q]?.[field] ?? 0) > 0);
}
