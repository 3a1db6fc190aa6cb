// One workload's coordinator (docs/design.md §6): it owns the workload's state document, feeds the pure
// phase machine (core/state) with events — QueueSplit changes, lease expiry, what the queue-agent
// observed, what the controller itself checked — and carries out the actions it returns. The
// state is persisted (conditionally, by resourceVersion) before any step it describes runs.
import type { KubeConfig, V1ConfigMap } from '@kubernetes/client-node';
import { parseObserved } from '../../core/agentDocuments';
import { CLEANUP_KEY, OBSERVED_KEY, STATE_KEY, type ObservedState } from '../../core/agentProtocol';
import type { QueueSplit } from '../../core/crd/queueSplitSchema';
import { kubernetesObjectNames, type KubernetesObjectNames } from '../../core/names';
import { ORIGINAL_ENV_ANNOTATION, withOriginalEnv } from '../../core/queueConfig/originalEnv';
import type { WorkloadLike } from '../../core/queueConfig/podTemplate';
import type { ResolvedQueue } from '../../core/queueConfig/resolveQueues';
import { resolveWorkload } from '../../core/queueConfig/resolveWorkload';
import { formatFieldError } from '../../core/result';
import { recover } from '../../core/state/recovery';
import { initialState, parseState, type SplitState } from '../../core/state/stateDocument';
import { ConfigMapStore } from '../kube/configMaps';
import { describeError, type Logger } from '../log';
import { ActionRunner } from './actionRunner';
import { AgentObjects } from './agentObjects';
import { autoscalerRefusal, scaledObjectOf } from './autoscalers';
import { disruptionRefusal } from './disruptionBudgets';
import { KedaForbidden, KedaPauses, pauseState, type ScaledObject } from './keda';
import { cleanupRecord } from './cleanupRecord';
import { activationIdOf, desiredState } from './desired';
import { NamespaceDeletion } from './namespaceDeletion';
import { OwnershipLeases } from './ownershipLeases';
import { PhaseProgress } from './phaseProgress';
import { bindRoutes } from './routeBinding';
import { SplitEvents, workloadRefusal } from './splitEvents';
import type { SplitObjects } from './splitObjects';
import { sameStatus, splitStatus } from './splitStatus';
import { StateSeals } from './stateSeal';
import { StateStore } from './stateStore';
import { ENDED_PHASES, type Verdict } from './verdicts';
import { FINALIZER, Workloads, type Workload, type WorkloadKind } from './workloads';
import { WorkloadStatusPublisher, behindQueues, workloadStatusFor } from './workloadStatus';

/** How long a split waits for KEDA to confirm its pause, and how often it looks. */
const KEDA_PAUSE_TIMEOUT_MS = 60_000;
const KEDA_POLL_MS = 1_000;
/** At most this many QueueSplits are written side by side by one pass (a workload may carry hundreds). */
const STATUS_WRITES_AT_ONCE = 8;

export interface CoordinatorSettings {
  installId: string;
  controllerNamespace: string;
  /** A step the agent reports pending for longer than this times out (→ abort or DEGRADED). */
  stepTimeoutMs: number;
  /** A queue-agent unready this long during one of its steps fails the step, naming the cause. */
  agentStartTimeoutMs: number;
}

export interface CoordinatorDeps {
  kc: KubeConfig;
  workloads: Workloads;
  agents: AgentObjects;
  splits: SplitObjects;
  ownership: OwnershipLeases;
  /** The queue-agent's status ConfigMap from the controller's cache; undefined: not synced, read it. */
  observed?: (namespace: string, name: string) => { cached: V1ConfigMap | undefined } | undefined;
  log: Logger;
}

export class Coordinator {
  private state: SplitState | undefined;
  private recovered = false;
  private resolved: ResolvedQueue[] = [];
  private observed: ObservedState | undefined;
  private readonly verdicts = new Map<string, Verdict>();
  /** Routes this coordinator has had in its state: a QueueSplit whose route left is not re-added. */
  private readonly seen = new Set<string>();
  /** Set while a document cannot be trusted (docs/design.md §6: when in doubt, stop and say why). */
  private halted: { reason: string; message: string; nextAction: string } | undefined;
  private readonly progress = new PhaseProgress();
  private readonly store: ConfigMapStore;
  private readonly states: StateStore;
  private readonly events: SplitEvents;
  private readonly actions: ActionRunner;
  private readonly log: Logger;
  private names: KubernetesObjectNames | undefined;
  /** The workload-level status: it outlives the last QueueSplit (core/workloadStatus.ts). */
  private readonly workloadStatus: WorkloadStatusPublisher;
  private readonly namespaceDeletion: NamespaceDeletion;
  private readonly keda: KedaPauses;
  /** Since when a split waits for KEDA to confirm its pause (docs/design.md, "KEDA-scaled workloads"). */
  private kedaWaitSince: number | undefined;

  constructor(
    readonly namespace: string,
    readonly kind: WorkloadKind,
    readonly name: string,
    private readonly settings: CoordinatorSettings,
    private readonly deps: CoordinatorDeps,
  ) {
    this.store = new ConfigMapStore(deps.kc, namespace);
    this.log = deps.log.child({ workload: `${namespace}/${kind}/${name}` });
    const id = { namespace, kind, name };
    this.states = new StateStore(
      this.store,
      new StateSeals(deps.kc, settings.controllerNamespace),
      name,
      this.log,
    );
    this.events = new SplitEvents(id, settings, deps, this.log, this.progress, this.verdicts, this.seen);
    this.actions = new ActionRunner(
      id,
      settings.controllerNamespace,
      {
        state: () => this.state!,
        setState: (state) => (this.state = state),
        names: () => this.names!,
        resolved: () => this.resolved,
        persist: () => this.persist(),
      },
      deps,
      this.log,
      this.progress,
      this.verdicts,
      this.seen,
    );
    this.workloadStatus = new WorkloadStatusPublisher(deps.kc, kind, namespace, name, this.log, (w) =>
      deps.workloads.wrote(kind, w),
    );
    this.namespaceDeletion = new NamespaceDeletion(deps.kc, settings.controllerNamespace, this.log);
    this.keda = new KedaPauses(deps.kc);
  }

  /** True once nothing is split and nothing is left to do: the controller may forget us. */
  get finished(): boolean {
    return this.state === undefined && this.recovered && this.kedaWaitSince === undefined;
  }

  /**
   * How soon this workload needs its next pass if nothing it watches changes: at once while
   * anything moves (a phase step, a route attaching or draining, an action to retry, an agent
   * behind its desired generation, something blocked); a steady ACTIVE split at its next lease
   * expiry, or `quietMs` at the latest.
   */
  nextPassInMs(quietMs: number): number {
    const state = this.state;
    if (!state) return this.kedaWaitSince !== undefined ? KEDA_POLL_MS : this.recovered ? quietMs : 0;
    const moving =
      state.phase !== 'ACTIVE' ||
      state.workflow !== null ||
      state.routes.some((r) => r.phase !== 'ACTIVE') ||
      this.actions.unfinished !== undefined ||
      this.halted !== undefined ||
      this.progress.blocking !== undefined ||
      this.observed?.observedGeneration !== state.generation;
    if (moving) return 0;
    const expiries = state.routes.map((r) => Date.parse(r.leaseExpiresAt) - Date.now());
    return Math.max(0, Math.min(quietMs, ...expiries));
  }

  /**
   * How soon a wait that only the clock ends is over, to pass the workload then; undefined when
   * there is none or its moment has passed (the passes' own cadence applies: a moment left behind
   * by a pass that did not re-check must not make passes run back to back).
   */
  recheckInMs(): number | undefined {
    const at = this.progress.recheckAt;
    const inMs = at === undefined ? 0 : at - Date.now();
    return inMs > 0 ? inMs : undefined;
  }

  /** Whether this workload's state still carries the route (e.g. draining it). */
  hasRoute(routeId: string | undefined): boolean {
    return this.state?.routes.some((r) => r.routeId === routeId) ?? false;
  }

  /** One level-triggered pass over this workload, with the QueueSplits as listed at `listedAt`. */
  async pass(all: readonly QueueSplit[], listedAt: number): Promise<void> {
    let workload = await this.deps.workloads.forPass(this.kind, this.namespace, this.name);
    if (await this.namespaceDeleted(workload, all)) return;
    if (!this.state) {
      const loaded = await this.load(workload);
      if (loaded === 'unreadable') return this.writeHaltedStatuses(all);
      if (loaded === 'absent') {
        this.recovered = true;
        await this.startIfWanted(workload, await this.bind(all));
        if (!this.state) return;
      }
    }
    // From here on, one object per routeId: a copy of another split's routeId is refused.
    const splits = await this.bind(all);
    const state = this.state!;
    if (workload) await this.resolve(workload);
    // Recovery and a retried action may write the workload (the redirect's overrides again).
    let acted = false;
    if (!this.recovered) {
      this.recovered = true;
      acted = true;
      await this.actions.execute(recover(state).actions);
      // A controller (re)started with other agent settings (an upgrade: a new --agent-image)
      // brings this workload's queue-agent up to date: its Deployment is replaced and the agent
      // restarts from its checkpoints, as after a crash (README "When the queue-agent restarts").
      if (this.state?.phase !== 'IDLE' && this.names)
        await this.deps.agents
          .ensure(this.namespace, this.names, this.name, this.resolved)
          .catch((err: unknown) => this.log.warn('agent.update_failed', { reason: describeError(err) }));
      // The ownership Leases live in the controller's namespace: after a reinstall that deleted
      // it (README "Uninstall") they are taken again, so no other workload splits these sources.
      if (this.state?.phase !== 'IDLE' && workload && this.resolved.length > 0) {
        const conflict = await this.deps.ownership
          .acquire(this.settings.controllerNamespace, this.namespace, workload, this.resolved)
          .catch((err: unknown) => describeError(err));
        if (conflict) this.log.warn('ownership.not_taken', { reason: conflict });
      }
    }
    if (await this.actions.resume(state.phase)) acted = true;
    // The checks below judge the workload as those writes left it, not as the pass found it: an
    // override recovery just wrote again is not "changed back by someone else" (the cache has
    // every write of ours, so this costs no request).
    if (acted) workload = await this.deps.workloads.forPass(this.kind, this.namespace, this.name);
    await this.readObserved(workload);
    if (this.halted) return this.writeHaltedStatuses(splits);
    // Each source reads the state as it is when its turn comes (the list is built in order).
    const events = [
      ...this.events.routeEvents(this.state!, splits, workload, listedAt),
      ...this.events.observedEvents(this.state!, this.observed),
      ...(await this.events.agentEvents(this.state!, this.names, this.observed)),
      ...(await this.events.controllerEvents(
        this.state!,
        workload,
        this.resolved,
        this.actions.unfinished !== undefined,
        this.observed,
      )),
      ...(await this.events.operatorEvents(this.state!, workload, this.names, this.resolved)),
      ...this.events.routeTimeouts(this.state!),
    ];
    await this.actions.applyAll(events);
    // The desired document is written with the state (one ConfigMap); the write a pass held back
    // follows if that did not carry it, before any status says what the state says.
    await this.writeDesired(workload);
    await this.actions.settle();
    await this.writeStatuses(splits);
    // A handback that could not finish keeps its state and says nothing else meanwhile: its
    // HandedBack status is what failed, and the next pass retries it.
    if (await this.finishIfIdle()) return;
    // Last in the pass, and not while an interrupted action waits for its retry: a scale retried
    // with a recorded resourceVersion must not meet one this write moved on.
    if (this.state && !this.actions.unfinished) {
      await this.workloadStatus.publish(
        workload,
        workloadStatusFor({
          state: this.state,
          ...(this.progress.blocking ? { blocking: this.progress.blocking } : {}),
          stepTimeoutMs: this.settings.stepTimeoutMs,
          behind: behindQueues(this.observed),
        }),
      );
    }
  }

  /**
   * A terminating namespace cannot host a queue-agent, so no handback can finish there: every
   * broker resource is recorded in the controller's namespace, then the finalizers and the
   * ownership Leases are released so the namespace can go (README, "When a split is Degraded").
   * Checked only while something is being deleted, to spare the API a read per pass.
   */
  private async namespaceDeleted(workload: Workload | undefined, splits: readonly QueueSplit[]) {
    const deleting =
      !workload ||
      Boolean(workload.metadata?.deletionTimestamp) ||
      splits.some((s) => s.metadata.deletionTimestamp);
    const ours = this.state || splits.length > 0 || workload?.metadata?.finalizers?.includes(FINALIZER);
    if (!deleting || !ours) return false;
    if (!(await this.namespaceDeletion.terminating(this.namespace))) return false;
    if (!this.state) await this.load(workload);
    if (this.state && this.names) {
      const earlier = await this.store.read(this.names.cleanupConfigMap);
      await this.namespaceDeletion.record(
        this.names.cleanupConfigMap,
        this.state,
        earlier?.data[CLEANUP_KEY],
      );
      await this.deps.ownership.release(this.settings.controllerNamespace, this.state.workload.uid);
      await this.deps.agents.removeSealReader(this.names);
    } else if (workload?.metadata?.finalizers?.includes(FINALIZER)) {
      await this.namespaceDeletion.stateLost(`${this.namespace}/${this.kind}/${this.name}`);
    }
    if (workload) await this.deps.workloads.removeFinalizer(this.kind, this.namespace, this.name);
    for (const split of splits) await this.deps.splits.removeFinalizer(split);
    this.state = undefined;
    this.states.forget();
    this.recovered = true;
    return true;
  }

  // ---- loading and starting -------------------------------------------------------------

  private async load(workload: Workload | undefined): Promise<'loaded' | 'absent' | 'unreadable'> {
    const uid = workload?.metadata?.uid;
    if (!uid) return 'absent';
    this.names = kubernetesObjectNames({
      installId: this.settings.installId,
      workloadUid: uid,
      workloadName: this.name,
    });
    const read = await this.states.read(this.names);
    // A state ConfigMap without its state is as unreadable as a corrupt one: it was written.
    if (read.kind === 'absent')
      return (await this.cutOverWithoutState(workload!, uid)) ? 'unreadable' : 'absent';
    if (read.kind === 'unreadable') {
      // Never replaced by a fresh state: it records replicas and broker resources a handback needs.
      this.halt(
        'StateUnreadable',
        `the state ConfigMap ${this.namespace}/${this.names.stateConfigMap} cannot be read (${read.problem})`,
        `Nothing was changed. Restore the ConfigMap from a backup (or ask an operator to inspect the workload and its broker resources before removing it); the controller resumes once it reads.`,
      );
      return 'unreadable';
    }
    if (read.kind === 'unsealed') {
      const seal = `${this.settings.controllerNamespace}/${this.names.stateSeal}`;
      const unknownWriter = `Find out who wrote the ConfigMap (only the Queue Split controller may); restore the last state the controller wrote from a backup, or ask an operator to inspect the workload and its broker resources before removing it.`;
      this.halt(
        'StateUnsealed',
        read.seal === 'absent'
          ? `the state ConfigMap ${this.namespace}/${this.names.stateConfigMap} is not one this controller wrote: it has no seal, ${seal} does not exist (deleted with the controller's namespace, or the document was planted)`
          : `the state ConfigMap ${this.namespace}/${this.names.stateConfigMap} is not one this controller wrote (its digest is not in ${seal})`,
        read.seal === 'absent'
          ? `Nothing was acted on. If the controller was uninstalled during this split and installed again, an operator who has checked the document seals it, and the controller goes on: ${this.states.resealCommand(this.names, read.text)}. Otherwise: ${unknownWriter}`
          : `Nothing was acted on. ${unknownWriter}`,
      );
      return 'unreadable';
    }
    this.halted = undefined;
    this.state = read.state;
    this.log.info('state.loaded', { phase: read.state.phase, generation: read.state.generation });
    return 'loaded';
  }

  /**
   * Whether the workload is split without a state this controller can load, so that starting a
   * split on it would cut over a workload that is already cut over (README "Uninstall"). Halts
   * when another install's state names the workload (the controller's namespace was deleted
   * and the controller installed again: a new install id, so new names), or when the workload's
   * env is overridden (its original env kept in an annotation) and no state is left at all.
   * Another install's queue-agent, if any, goes on feeding the app meanwhile.
   */
  private async cutOverWithoutState(workload: Workload, uid: string): Promise<boolean> {
    // Every install adds its finalizer before its first state and removes it after the env is
    // restored: without it nothing is split, and the LIST below is not needed on every pass.
    if (!workload.metadata?.finalizers?.includes(FINALIZER)) return false;
    const mine = this.settings.installId;
    const foreign = (
      await this.store.list(`queuesplit.dev/state=true,queuesplit.dev/workload=${this.name}`)
    ).flatMap((cm) => {
      const parsed = parseState(cm.data[STATE_KEY] ?? '');
      return parsed.ok && parsed.value.workload.uid === uid && parsed.value.installId !== mine
        ? [{ configMap: cm.name, installId: parsed.value.installId }]
        : [];
    });
    const controllerNs = this.settings.controllerNamespace;
    if (foreign.length > 0) {
      const found = foreign
        .map((f) => `${this.namespace}/${f.configMap} (install ${f.installId})`)
        .join(', ');
      this.halt(
        'StateOfAnotherInstall',
        `the workload is split by another Queue Split install: state ${found}; this controller is install ${mine}`,
        `Nothing was acted on. If the controller was uninstalled during the split and installed again, give it the earlier install id and restart it: kubectl -n ${controllerNs} create configmap queuesplit-install --from-literal=installId=${foreign[0]!.installId} --dry-run=client -o yaml | kubectl replace -f - && kubectl -n ${controllerNs} rollout restart deployment/queuesplit-controller. It then finds that state and asks for its seal. If that install still runs, stop one of the two: both serve this namespace.`,
      );
      return true;
    }
    if (workload.metadata?.annotations?.[ORIGINAL_ENV_ANNOTATION] !== undefined) {
      this.halt(
        'StateNotFound',
        `the workload's env is overridden by a split (annotation ${ORIGINAL_ENV_ANNOTATION}) but its state ConfigMap ${this.namespace}/${this.names!.stateConfigMap} does not exist`,
        `Nothing was acted on. Restore the state ConfigMap from a backup; without it an operator hands the workload back by hand: its env as the annotation ${ORIGINAL_ENV_ANNOTATION} records it, then the qs-* broker resources of this workload, their messages moved to the source before they are deleted.`,
      );
      return true;
    }
    return false;
  }

  /** Stops acting on this workload: every split shows Degraded with the cause and the fix. */
  private halt(reason: string, cause: string, nextAction: string): void {
    if (this.halted?.message !== cause) this.log.error('workload.halted', { reason, cause });
    this.halted = { reason, message: cause, nextAction };
  }

  /** While halted nothing is acted on — finalizers stay, nothing is deleted or rewritten. */
  private async writeHaltedStatuses(splits: readonly QueueSplit[]): Promise<void> {
    const halted = this.halted!;
    for (const split of splits) {
      const status = splitStatus(split, {
        state: undefined,
        observed: undefined,
        resolved: this.resolved,
        halted,
      });
      if (!sameStatus(split.status, status)) await this.deps.splits.writeStatus(split, status);
    }
  }

  private async resolve(workload: Workload): Promise<ResolvedQueue[] | undefined> {
    const declared = withOriginalEnv(workload) as WorkloadLike & Workload;
    const resolved = resolveWorkload(declared, await this.deps.workloads.configMaps(declared));
    if (!resolved.ok) return undefined;
    this.resolved = resolved.value.queues;
    return this.resolved;
  }

  private async startIfWanted(workload: Workload | undefined, splits: readonly QueueSplit[]): Promise<void> {
    // A split that already ended (Failed after a rollback, Stopped, Rejected) starts nothing:
    // the developer starts a new one.
    const candidates = splits.filter(
      (s) => !s.metadata.deletionTimestamp && !ENDED_PHASES.includes(s.status?.phase ?? 'Pending'),
    );
    if (candidates.length === 0) {
      // A split that ended before it started (refused, deleted while KEDA paused) resumes what it paused.
      if (workload?.metadata?.uid) await this.resumeKeda(workload.metadata.uid);
      this.kedaWaitSince = undefined;
      for (const s of splits) await this.deps.splits.removeFinalizer(s);
      return;
    }
    // A split this workload refuses must not start a cutover for nobody.
    const live: QueueSplit[] = [];
    for (const s of candidates) {
      const refusal = workload ? workloadRefusal(s, workload, this) : undefined;
      if (refusal) await this.setVerdict(s, { phase: 'Rejected', ...refusal });
      else live.push(s);
    }
    if (live.length === 0) return;
    const reject = async (reason: string, message: string) => {
      for (const s of live) await this.setVerdict(s, { phase: 'Rejected', reason, message });
      if (workload?.metadata?.uid) await this.resumeKeda(workload.metadata.uid);
      this.kedaWaitSince = undefined;
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
    const refused = autoscalerRefusal(
      await this.deps.workloads.autoscalersOf(this.kind, this.namespace, this.name),
    );
    if (refused) return reject(refused.reason, refused.message);
    const undisruptable = disruptionRefusal(
      await this.deps.workloads.disruptionBudgets(this.namespace),
      workload.spec?.template.metadata?.labels ?? {},
      workload.spec?.replicas ?? 1,
    );
    if (undisruptable) return reject(undisruptable.reason, undisruptable.message);
    const declared = withOriginalEnv(workload) as WorkloadLike & Workload;
    const resolved = resolveWorkload(declared, await this.deps.workloads.configMaps(declared));
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
    if (!(await this.holdKeda(workload, live, reject))) return;
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
    this.states.startNew();
    await this.deps.workloads.addFinalizer(this.kind, workload);
    await this.persist();
    this.log.info('state.created', { queues: this.resolved.map((q) => q.name).join(',') });
  }

  /**
   * Pauses the workload's KEDA ScaledObjects for the split and answers whether all confirmed
   * (agent/controller/keda.ts, invariants 1-3); until then the split waits, and a KEDA that does
   * not confirm in time refuses it. The splits get their finalizer first, so deleting one while
   * it waits still reaches the resume.
   */
  private async holdKeda(
    workload: Workload,
    live: readonly QueueSplit[],
    reject: (reason: string, message: string) => Promise<void>,
  ): Promise<boolean> {
    let scaledObjects: ScaledObject[];
    try {
      scaledObjects = await this.keda.targeting(this.kind, this.namespace, this.name);
    } catch (err) {
      if (!(err instanceof KedaForbidden)) throw err; // transient: the pass is retried
      await reject('KedaUnreadable', `${err.message}.`);
      return false;
    }
    if (scaledObjects.length === 0) return true;
    const uid = workload.metadata!.uid!;
    for (const s of live) await this.deps.splits.addFinalizer(s);
    const hpas = await this.deps.workloads.autoscalersOf(this.kind, this.namespace, this.name);
    const waiting: string[] = [];
    for (const so of scaledObjects) {
      const state = pauseState(
        so,
        uid,
        hpas.some((h) => scaledObjectOf(h) === so.metadata.name),
      );
      if (!state.asked) await this.keda.pause(this.namespace, so, uid);
      if (!state.done) waiting.push(so.metadata.name);
    }
    if (waiting.length === 0) {
      if (this.kedaWaitSince !== undefined)
        this.log.info('keda.paused', { scaledObjects: scaledObjects.length });
      this.kedaWaitSince = undefined;
      // KEDA had scaled an idle app to zero: it runs one replica while split, so its shadow is
      // read (and drained at the handback); the handback restores the count and KEDA takes over.
      if ((workload.spec?.replicas ?? 1) === 0)
        await this.deps.workloads.scale(this.kind, this.namespace, this.name, 1);
      return true;
    }
    this.kedaWaitSince ??= Date.now();
    if (Date.now() - this.kedaWaitSince > KEDA_PAUSE_TIMEOUT_MS) {
      await reject(
        'KedaNotPausing',
        `KEDA did not confirm pausing ScaledObject ${waiting.join(', ')} within ${KEDA_PAUSE_TIMEOUT_MS / 1000}s (its Paused condition, or its HPA still there), so the split did not start: nothing was changed and the pause was removed. ` +
          'Check that the KEDA operator runs (its logs name the ScaledObject), then start the split again.',
      );
      return false;
    }
    this.progress.blocking = `waiting for KEDA to pause ScaledObject ${waiting.join(', ')}`;
    return false;
  }

  private async resumeKeda(workloadUid: string): Promise<void> {
    const resumed = await this.keda.resume(this.namespace, workloadUid);
    if (resumed.length > 0) this.log.info('keda.resumed', { scaledObjects: resumed.join(',') });
  }

  // ---- events -----------------------------------------------------------------------------

  private async readObserved(workload: Workload | undefined): Promise<void> {
    if (!this.names) return;
    const fromCache = this.deps.observed?.(this.namespace, this.names.agentStatusConfigMap);
    const text = fromCache
      ? fromCache.cached?.data?.[OBSERVED_KEY]
      : (await this.store.read(this.names.agentStatusConfigMap))?.data[OBSERVED_KEY];
    const parsed = text ? parseObserved(text) : undefined;
    const agent = `${this.namespace}/${this.names.agentDeployment}`;
    if (parsed && !parsed.ok) {
      this.observed = undefined;
      return this.halt(
        'ObservedUnreadable',
        `the queue-agent's observed document (ConfigMap ${this.namespace}/${this.names.agentStatusConfigMap}) cannot be read (${parsed.errors.map(formatFieldError).join('; ')})`,
        `Nothing was acted on. Restart the queue-agent so it rewrites it: kubectl -n ${this.namespace} rollout restart deployment/${this.names.agentDeployment}`,
      );
    }
    if (parsed?.value.refused) {
      this.observed = undefined;
      await this.restoreDesired(workload);
      return this.halt(
        'DesiredRefused',
        `the queue-agent ${agent} refused the desired document and acted on none of it: ${parsed.value.refused}`,
        `Nothing was acted on; the controller rewrote its document. Find out who changed ConfigMap ${this.namespace}/${this.names.stateConfigMap} (only the controller may write it).`,
      );
    }
    this.halted = undefined;
    // Another activation's document (a previous split of this workload) says nothing about this one.
    this.observed =
      parsed && this.state && parsed.value.activationId === activationIdOf(this.state)
        ? parsed.value
        : undefined;
  }

  /** The desired document in the ConfigMap is not the one this controller wrote: write it again. */
  private async restoreDesired(workload: Workload | undefined): Promise<void> {
    if (!this.state) return;
    await this.states.restoreDesired(this.names!, this.state, () => this.desired(workload));
  }

  /** The state document with the desired document as it stands. */
  private persist(): Promise<void> {
    return this.states.persist(this.names!, this.state!);
  }

  private async desired(workload: Workload | undefined): Promise<string> {
    return JSON.stringify(desiredState(this.state!, this.resolved, await this.gated(workload)));
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
    // Fresh: this pass may have scaled it to zero after its first read. Zero pods is not enough:
    // a scale-up whose pod is not created yet would let the agent act beside a starting app.
    const current = await this.deps.workloads.read(this.kind, this.namespace, this.name);
    const replicas = current && !current.metadata?.deletionTimestamp ? (current.spec?.replicas ?? 1) : 0;
    if (pods.length === 0 && replicas === 0) return true;
    const step = state.phase === 'ABORTING_ACTIVATION' ? 'the rollback' : 'the handback';
    const rescaled = this.progress.rescaled;
    const scaledBack = replicas > 0 ? replicas : rescaled?.replicas;
    this.progress.blocking =
      scaledBack !== undefined
        ? `the workload was scaled back to ${scaledBack} replica(s) by someone else (a GitOps sync? an autoscaler?) while ${step} needs it at zero; ` +
          (rescaled
            ? `Queue Split scaled it to zero again${rescaled.times > 1 ? ` (${rescaled.times} times so far)` : ''} and nothing is lost meanwhile. `
            : 'Queue Split scales it to zero again and nothing is lost meanwhile. ') +
          `Stop whoever scales it (pause the sync); ${step} then finishes by itself`
        : `waiting for ${pods.length} application pod(s) to stop`;
    return false;
  }

  private async writeDesired(workload: Workload | undefined): Promise<void> {
    if (!this.state || !this.names) return;
    await this.states.writeDesired(this.names, this.state, await this.desired(workload));
  }

  private async writeStatuses(splits: readonly QueueSplit[]): Promise<void> {
    // Each split is its own object, so their writes go side by side: a pass that attached k
    // splits waited for 2k requests one after another before the next pass could begin.
    for (let i = 0; i < splits.length; i += STATUS_WRITES_AT_ONCE) {
      const writes = splits.slice(i, i + STATUS_WRITES_AT_ONCE).map((split) => this.writeStatusOf(split));
      const failed = (await Promise.allSettled(writes)).find((r) => r.status === 'rejected');
      if (failed) throw failed.reason;
    }
  }

  /** One split's finalizer and status as this pass leaves them. */
  private async writeStatusOf(split: QueueSplit): Promise<void> {
    const routeId = split.spec.routeId;
    const inState = this.state?.routes.some((r) => r.routeId === routeId) ?? false;
    const verdict = this.verdicts.get(routeId);
    if (inState || verdict) await this.deps.splits.addFinalizer(split);
    const status = splitStatus(split, {
      state: this.state,
      observed: this.observed,
      resolved: this.resolved,
      ...(verdict ? { verdict } : {}),
      ...(this.progress.blocking ? { blocking: this.progress.blocking } : {}),
    });
    if (!sameStatus(split.status, status)) await this.deps.splits.writeStatus(split, status);
    // A deleted split is released once its route is drained (or was never accepted).
    if (split.metadata.deletionTimestamp && !inState) await this.deps.splits.removeFinalizer(split);
  }

  /** The splits this workload reads, one per routeId; the copies get a Rejected status. */
  private async bind(splits: readonly QueueSplit[]): Promise<QueueSplit[]> {
    const { accepted, copies } = bindRoutes(this.state?.routes ?? [], splits);
    for (const { split, holder } of copies) {
      const verdict: Verdict = {
        phase: 'Rejected',
        reason: 'RouteIdTaken',
        message:
          `spec.routeId "${split.spec.routeId}" is the route of another QueueSplit (${holder}); a route id belongs to the split made with it. ` +
          'Fix: delete this QueueSplit and start the split again from the extension or sidecar, which choose a fresh route id.',
      };
      const status = splitStatus(split, { state: undefined, observed: undefined, resolved: [], verdict });
      if (!sameStatus(split.status, status)) {
        this.log.warn('split.route_id_taken', { split: split.metadata.name, holder });
        await this.deps.splits.writeStatus(split, status);
      }
      // Never this coordinator's to hold: a finalizer (added before routes were bound) goes.
      if (split.metadata.deletionTimestamp) await this.deps.splits.removeFinalizer(split);
    }
    return accepted;
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

  /**
   * The handback's last step, once nothing is split any more. Every step is idempotent and the
   * state document goes last: while it exists the next pass comes back here, so nothing that
   * fails in between (the HandedBack status in particular) is left undone for good. The order is
   * what a user reading `kubectl describe` may rely on: the app already has its env and replicas
   * back (the phases before IDLE), the queue-agent is gone and kept resources are listed before
   * the workload says HandedBack, and the finalizer goes only once it says so.
   * Returns true when it is idle but could not finish this pass.
   */
  private async finishIfIdle(): Promise<boolean> {
    const state = this.state;
    if (!state || state.phase !== 'IDLE' || state.routes.length > 0 || state.workflow !== null) return false;
    const names = this.names!;
    await this.deps.agents.reap(this.namespace, names);
    if (state.cleanupPending.length > 0) await this.recordCleanupPending(state);
    const said = await this.workloadStatus.publish(
      await this.deps.workloads.read(this.kind, this.namespace, this.name),
      workloadStatusFor({
        state: undefined,
        stepTimeoutMs: this.settings.stepTimeoutMs,
        ...(state.cleanupPending.length > 0 ? { cleanupConfigMap: names.cleanupConfigMap } : {}),
      }),
    );
    if (!said) return true;
    // Before the state goes: a crash in between resumes on the next pass (the state is its anchor).
    await this.resumeKeda(state.workload.uid);
    await this.deps.workloads.removeFinalizer(this.kind, this.namespace, this.name);
    await this.states.remove(names);
    this.log.info('workload.handed_back', { cleanupPending: state.cleanupPending.length });
    this.state = undefined;
    return false;
  }
}
