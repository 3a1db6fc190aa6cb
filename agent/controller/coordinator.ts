// One workload's coordinator (docs/design.md §6): it owns the workload's state document, feeds the pure
// phase machine (core/state) with events — QueueSplit changes, lease expiry, what the queue-agent
// observed, what the controller itself checked — and carries out the actions it returns. The
// state is persisted (conditionally, by resourceVersion) before any step it describes runs.
import type { KubeConfig, V1ConfigMap } from '@kubernetes/client-node';
import { parseObserved } from '../../core/agentDocuments';
import { formatFieldError } from '../../core/result';
import {
  CLEANUP_KEY,
  DESIRED_KEY,
  OBSERVED_KEY,
  STATE_KEY,
  type ObservedState,
} from '../../core/agentProtocol';
import type { QueueSplit } from '../../core/crd/queueSplitSchema';
import { wholeQueueRefusal, type AdmissionRefusal } from '../../core/crd/admission';
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
import { describeError, type Logger } from '../log';
import { ConfigMapStore } from '../kube/configMaps';
import { isConflict } from '../kube/client';
import { AgentObjects } from './agentObjects';
import { activationIdOf, AGENT_STEPS, desiredState, queueNames, storedCheckpoint } from './desired';
import { OwnershipLeases } from './ownership';
import type { SplitObjects } from './splitObjects';
import { sameStatus, splitStatus } from './splitStatus';
import { StateSeals, stateDigest } from './stateSeal';
import { bindRoutes } from './routeBinding';
import {
  FINALIZER,
  overrideDrift,
  overridesFor,
  Workloads,
  type Workload,
  type WorkloadKind,
} from './workloads';
import { ORIGINAL_ENV_ANNOTATION, withOriginalEnv } from '../../core/queueConfig/originalEnv';
import { cleanupRecord } from './cleanupRecord';
import { leaseExpiry as leaseExpiryMs } from '../../core/crd/validateQueueSplit';
import { WorkloadStatusPublisher, workloadStatusFor } from './workloadStatus';
import { NamespaceDeletion } from './namespaceDeletion';

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
  /** The digest of the desired document the ConfigMap holds as sealed; undefined: read the seal. */
  private sealedDesired: string | undefined;
  /** The state text last written or loaded: a different one in the ConfigMap was not ours. */
  private lastState = '';
  /** Set while a document cannot be trusted (docs/design.md §6: when in doubt, stop and say why). */
  private halted: { reason: string; message: string; nextAction: string } | undefined;
  private blocking: string | undefined;
  /** When the queue-agent was first seen unready during one of its steps (cleared once ready). */
  private agentUnreadySince: number | undefined;
  /** When an operator last retried: the agent then gets the full start timeout, whatever the cause. */
  private retriedAt: number | undefined;
  private readonly store: ConfigMapStore;
  private readonly seals: StateSeals;
  private readonly log: Logger;
  private names: KubernetesObjectNames | undefined;
  /** Actions a failure interrupted, retried on the next pass while the phase is unchanged. */
  private unfinished: { phase: string; actions: readonly SplitAction[] } | undefined;
  /** The workload-level status: it outlives the last QueueSplit (core/workloadStatus.ts). */
  private readonly workloadStatus: WorkloadStatusPublisher;
  private readonly namespaceDeletion: NamespaceDeletion;

  constructor(
    readonly namespace: string,
    readonly kind: WorkloadKind,
    readonly name: string,
    private readonly settings: CoordinatorSettings,
    private readonly deps: CoordinatorDeps,
  ) {
    this.store = new ConfigMapStore(deps.kc, namespace);
    this.seals = new StateSeals(deps.kc, settings.controllerNamespace);
    this.log = deps.log.child({ workload: `${namespace}/${kind}/${name}` });
    this.workloadStatus = new WorkloadStatusPublisher(deps.kc, kind, namespace, name, this.log);
    this.namespaceDeletion = new NamespaceDeletion(deps.kc, settings.controllerNamespace, this.log);
  }

  /** True once nothing is split and nothing is left to do: the controller may forget us. */
  get finished(): boolean {
    return this.state === undefined && this.recovered;
  }

  /**
   * How soon this workload needs its next pass if nothing it watches changes: at once while
   * anything moves (a phase step, a route attaching or draining, an action to retry, an agent
   * behind its desired generation, something blocked); a steady ACTIVE split at its next lease
   * expiry, or `quietMs` at the latest.
   */
  nextPassInMs(quietMs: number): number {
    const state = this.state;
    if (!state) return this.recovered ? quietMs : 0;
    const moving =
      state.phase !== 'ACTIVE' ||
      state.workflow !== null ||
      state.routes.some((r) => r.phase !== 'ACTIVE') ||
      this.unfinished !== undefined ||
      this.halted !== undefined ||
      this.blocking !== undefined ||
      this.observed?.observedGeneration !== state.generation;
    if (moving) return 0;
    const expiries = state.routes.map((r) => Date.parse(r.leaseExpiresAt) - Date.now());
    return Math.max(0, Math.min(quietMs, ...expiries));
  }

  /** Whether this workload's state still carries the route (e.g. draining it). */
  hasRoute(routeId: string | undefined): boolean {
    return this.state?.routes.some((r) => r.routeId === routeId) ?? false;
  }

  /** One level-triggered pass over this workload. */
  async pass(all: readonly QueueSplit[]): Promise<void> {
    const workload = await this.deps.workloads.read(this.kind, this.namespace, this.name);
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
    if (workload) this.resolve(workload);
    if (!this.recovered) {
      this.recovered = true;
      await this.execute(recover(state).actions);
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
    if (this.unfinished) {
      const { phase, actions } = this.unfinished;
      this.unfinished = undefined;
      if (phase === state.phase) await this.execute(actions);
    }
    await this.readObserved(workload);
    if (this.halted) return this.writeHaltedStatuses(splits);
    const events = [
      ...this.routeEvents(splits, workload),
      ...this.observedEvents(),
      ...(await this.agentEvents()),
      ...(await this.controllerEvents(workload)),
      ...(await this.operatorEvents(workload)),
      ...this.routeTimeouts(),
    ];
    for (const event of events) await this.apply(event);
    await this.writeDesired(workload);
    await this.writeStatuses(splits);
    // A handback that could not finish keeps its state and says nothing else meanwhile: its
    // HandedBack status is what failed, and the next pass retries it.
    if (await this.finishIfIdle()) return;
    // Last in the pass, and not while an interrupted action waits for its retry: a scale retried
    // with a recorded resourceVersion must not meet one this write moved on.
    if (this.state && !this.unfinished) {
      await this.workloadStatus.publish(
        workload,
        workloadStatusFor({
          state: this.state,
          ...(this.blocking ? { blocking: this.blocking } : {}),
          stepTimeoutMs: this.settings.stepTimeoutMs,
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
    this.stateVersion = undefined;
    this.lastDesired = '';
    this.sealedDesired = undefined;
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
    const doc = await this.store.read(this.names.stateConfigMap);
    const text = doc?.data[STATE_KEY];
    // A state ConfigMap without its state is as unreadable as a corrupt one: it was written.
    if (!doc) return (await this.cutOverWithoutState(workload!, uid)) ? 'unreadable' : 'absent';
    const parsed = parseState(text ?? '');
    if (!parsed.ok) {
      // Never replaced by a fresh state: it records replicas and broker resources a handback needs.
      this.halt(
        'StateUnreadable',
        `the state ConfigMap ${this.namespace}/${this.names.stateConfigMap} cannot be read (${parsed.errors.map(formatFieldError).join('; ')})`,
        `Nothing was changed. Restore the ConfigMap from a backup (or ask an operator to inspect the workload and its broker resources before removing it); the controller resumes once it reads.`,
      );
      return 'unreadable';
    }
    const sealed = await this.seals.verify(this.names.stateSeal, text ?? '');
    if (sealed !== 'sealed') {
      const seal = `${this.settings.controllerNamespace}/${this.names.stateSeal}`;
      const unknownWriter = `Find out who wrote the ConfigMap (only the Queue Split controller may); restore the last state the controller wrote from a backup, or ask an operator to inspect the workload and its broker resources before removing it.`;
      this.halt(
        'StateUnsealed',
        sealed === 'absent'
          ? `the state ConfigMap ${this.namespace}/${this.names.stateConfigMap} is not one this controller wrote: it has no seal, ${seal} does not exist (deleted with the controller's namespace, or the document was planted)`
          : `the state ConfigMap ${this.namespace}/${this.names.stateConfigMap} is not one this controller wrote (its digest is not in ${seal})`,
        sealed === 'absent'
          ? `Nothing was acted on. If the controller was uninstalled during this split and installed again, an operator who has checked the document seals it, and the controller goes on: ${this.seals.resealCommand(this.names.stateSeal, text ?? '', this.name)}. Otherwise: ${unknownWriter}`
          : `Nothing was acted on. ${unknownWriter}`,
      );
      return 'unreadable';
    }
    this.halted = undefined;
    this.state = parsed.value;
    this.stateVersion = doc.resourceVersion;
    // The text as found, not re-serialised: the seal lists digests of exactly what was written.
    this.lastState = text ?? '';
    this.log.info('state.loaded', { phase: this.state.phase, generation: this.state.generation });
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

  private resolve(workload: Workload): ResolvedQueue[] | undefined {
    const resolved = resolveWorkload(withOriginalEnv(workload) as WorkloadLike & Workload);
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
      for (const s of splits) await this.deps.splits.removeFinalizer(s);
      return;
    }
    // A split this workload refuses must not start a cutover for nobody.
    const live: QueueSplit[] = [];
    for (const s of candidates) {
      const refusal = workload ? this.refusal(s, workload) : undefined;
      if (refusal) await this.setVerdict(s, { phase: 'Rejected', ...refusal });
      else live.push(s);
    }
    if (live.length === 0) return;
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
      const refusal = workload ? this.refusal(split, workload) : undefined;
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

  /** Why this workload refuses a (valid) split, e.g. an empty filter it did not opt in to. */
  private refusal(split: QueueSplit, workload: Workload): AdmissionRefusal | undefined {
    const filter = parseFilter(split.spec.filter, 'spec.filter');
    if (!filter.ok) return undefined; // reported as InvalidFilter by routeEvents
    return wholeQueueRefusal(filter.value, {
      kind: this.kind,
      namespace: this.namespace,
      name: this.name,
      annotations: workload.metadata?.annotations ?? {},
    });
  }

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
    const doc = await this.store.read(this.names!.stateConfigMap);
    if (!doc || !this.state) return;
    const desired = JSON.stringify(desiredState(this.state, this.resolved, await this.gated(workload)));
    const intact = doc.data[DESIRED_KEY] === desired && doc.data[STATE_KEY] === this.lastState;
    // Intact but unsealed (a seal from before desired documents were sealed): seal it again.
    if (intact && (await this.seals.listsDesired(this.names!.stateSeal, desired))) return;
    if (!intact) this.log.warn('state.tampered', { configMap: this.names!.stateConfigMap });
    this.lastDesired = desired;
    this.stateVersion = doc.resourceVersion;
    await this.persist();
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
        } else if (o.kind === 'rejected' && o.nothingChanged) {
          events.push({ type: 'stepFailed', phase, queue, reason: o.reason, nothingChanged: true });
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

  /**
   * A step the queue-agent must carry out cannot finish while the agent does not run: an image
   * that cannot be pulled or a refused pod fails the step at once, a crash loop or a failing
   * readiness probe once it has lasted the agent start timeout; the reason names the cause from
   * the pods' status and events and the safe next action (README "When a split is Degraded").
   */
  private async agentEvents(): Promise<SplitEvent[]> {
    const state = this.state!;
    if (!this.names || !AGENT_STEPS.includes(state.phase)) {
      this.agentUnreadySince = undefined;
      return [];
    }
    const trouble = await this.deps.agents.trouble(this.namespace, this.names);
    if (!trouble) {
      this.agentUnreadySince = undefined;
      return [];
    }
    const now = Date.now();
    this.agentUnreadySince ??= now;
    this.blocking = `waiting for the queue-agent: ${trouble.cause}`;
    const timeout = this.settings.agentStartTimeoutMs;
    const afterRetry = this.retriedAt !== undefined && now - this.retriedAt < timeout;
    const immediate = trouble.permanent && !afterRetry;
    // Once the agent has reported in this split's life it did start: a restart or a slow pass
    // later (kill -9, a long drain) is the step timeout's business, not a start failure.
    if (!immediate && (this.observed !== undefined || now - this.agentUnreadySince < timeout)) return [];
    this.log.warn('agent.cannot_run', { phase: state.phase, cause: trouble.cause });
    return [
      { type: 'stepFailed', phase: state.phase, reason: `the queue-agent cannot run: ${trouble.cause}` },
    ];
  }

  /** Proofs the controller itself can read from the API: pods gone, rollouts finished. */
  private async controllerEvents(workload: Workload | undefined): Promise<SplitEvent[]> {
    const state = this.state!;
    this.trackPhase();
    if (!workload) return [];
    const phase = state.phase;
    const manualScale = await this.manualScale();
    if (manualScale) return [{ type: 'stepFailed', phase, reason: manualScale }];
    const drift = this.envDrift(workload);
    if (drift) return [{ type: 'faultReported', reason: drift }];
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

  /**
   * While ACTIVE the app must read its application shadows: an env override changed back (a
   * GitOps sync, a person) makes it read the source beside the split, so messages meant for a
   * split can reach it. Reported DEGRADED and not re-applied (docs/design.md, "Drift").
   */
  private envDrift(workload: Workload): string | undefined {
    const state = this.state!;
    if (state.phase !== 'ACTIVE' || this.unfinished || workload.metadata?.deletionTimestamp) return undefined;
    const queues = this.resolved.filter((q) => state.activeQueues.includes(q.name));
    const changed = overrideDrift(
      workload,
      overridesFor(queues, (q) => queueNames(state, q)),
    );
    if (changed.length === 0) return undefined;
    return (
      `drift: the env override of ${changed.join(', ')} was changed by someone else while split, so the app reads its source beside the split and messages meant for a split can reach it (none is lost: the application shadow keeps what the app no longer reads). ` +
      `Make whoever changed it (a GitOps sync?) leave these env values alone while the workload is split, then retry: the retry puts the override back`
    );
  }

  /** An operator's retry annotation on the workload: acted on once, then removed. */
  private async operatorEvents(workload: Workload | undefined): Promise<SplitEvent[]> {
    if (workload?.metadata?.annotations?.[RETRY_ANNOTATION] === undefined) return [];
    await this.deps.workloads.removeAnnotation(this.kind, this.namespace, this.name, RETRY_ANNOTATION);
    const events = retryEvents(this.state!);
    this.log.info('operator.retry', { retries: events.length });
    if (events.length > 0 && this.names) {
      // The fix may have been the agent's image or the namespace's policy: bring the agent
      // Deployment up to date and give it the full start timeout before judging it again.
      // An agent that does not run ready is rolled too, so its pod is created afresh.
      const stuck = (await this.deps.agents.trouble(this.namespace, this.names)) !== undefined;
      await this.deps.agents.ensure(this.namespace, this.names, this.name, this.resolved, stuck);
      this.retriedAt = Date.now();
      this.agentUnreadySince = undefined;
    }
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
        const overrides = overridesFor(queues, (q) => queueNames(state, q));
        if (action.type === 'applyOverrides' && state.phase !== 'REDIRECTING_APP') {
          // A retry's re-apply: only where someone changed them, so a retry does not roll the app for nothing.
          const current = await this.deps.workloads.read(this.kind, this.namespace, this.name);
          if (current && overrideDrift(current, overrides).length === 0) return;
        }
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
          reason: action.type === 'rejectRoute' ? action.reason : 'ActivationFailed',
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
    const text = serializeState(this.state!);
    // Sealed first: a crash between the two writes leaves a state (and a desired document) the
    // seal still lists.
    this.sealedDesired ??= await this.seals.newestDesired(names.stateSeal);
    await this.seals.seal(
      names.stateSeal,
      { next: text, current: this.lastState, desired: this.lastDesired, sealedDesired: this.sealedDesired },
      this.name,
    );
    const write = () =>
      this.store.write(
        names.stateConfigMap,
        {
          [STATE_KEY]: text,
          ...(this.lastDesired ? { [DESIRED_KEY]: this.lastDesired } : {}),
        },
        {
          labels: { 'queuesplit.dev/state': 'true', 'queuesplit.dev/workload': this.name },
          resourceVersion: this.stateVersion,
        },
      );
    try {
      this.stateVersion = await write();
    } catch (err) {
      if (!isConflict(err)) throw err;
      // Someone else wrote the ConfigMap. If our state in it is unchanged they edited only
      // the desired document (which the agent checks): ours replaces it. Otherwise another
      // writer changed the state itself, and the conflict stands.
      const current = await this.store.read(names.stateConfigMap);
      if (!current || current.data[STATE_KEY] !== this.lastState) throw err;
      this.log.warn('state.tampered', { configMap: names.stateConfigMap });
      this.stateVersion = current.resourceVersion;
      this.stateVersion = await write();
    }
    this.lastState = text;
    this.sealedDesired = this.lastDesired ? stateDigest(this.lastDesired) : '';
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
    await this.deps.workloads.removeFinalizer(this.kind, this.namespace, this.name);
    await this.store.remove(names.stateConfigMap);
    await this.seals.remove(names.stateSeal);
    this.log.info('workload.handed_back', { cleanupPending: state.cleanupPending.length });
    this.state = undefined;
    this.stateVersion = undefined;
    this.lastDesired = '';
    this.sealedDesired = undefined;
    this.lastState = '';
    return false;
  }
}

/** The lease expiry as the state document records it (ISO time). */
export function leaseExpiry(split: QueueSplit): string {
  return new Date(leaseExpiryMs(split.spec)).toISOString();
}

export type { WorkloadPhase };
