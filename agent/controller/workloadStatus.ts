// The workload-level status (core/workloadStatus.ts) as the controller derives and publishes it:
// an annotation on the workload plus a Kubernetes Event whenever it changes what it says, so
// `kubectl describe` shows the handback's progress — and what blocks it — after the last
// QueueSplit is gone.
import * as os from 'node:os';
import { AppsV1Api, CoreV1Api, type KubeConfig } from '@kubernetes/client-node';
import { retryHint } from '../../core/state/operatorRetry';
import type { ObservedState } from '../../core/agentProtocol';
import type { SplitState } from '../../core/state/stateDocument';
import {
  WORKLOAD_STATUS_ANNOTATION,
  sameWorkloadStatus,
  serializeWorkloadStatus,
  type WorkloadSplitPhase,
  type WorkloadSplitStatus,
} from '../../core/workloadStatus';
import { parseWorkloadStatus } from '../../core/workloadStatusParse';
import { describeError, type Logger } from '../log';
import { isNotFound, mergePatch } from '../kube/client';
import type { Workload, WorkloadKind } from './workloads';
import { shownBacklog } from './splitStatus';

const PHASE_OF: Record<SplitState['phase'], WorkloadSplitPhase> = {
  IDLE: 'Splitting',
  PREPARING: 'Splitting',
  QUIESCING_APP: 'Splitting',
  STARTING_PUMP: 'Splitting',
  REDIRECTING_APP: 'Splitting',
  ACTIVE: 'Split',
  ABORTING_ACTIVATION: 'RollingBack',
  STOPPING_SOURCE: 'HandingBack',
  DRAINING_APP: 'HandingBack',
  QUIESCING_FOR_HANDBACK: 'HandingBack',
  COMMITTING_HANDOFF: 'HandingBack',
  RESTORING_APP: 'HandingBack',
  CLEANING_UP: 'HandingBack',
  DEGRADED: 'Degraded',
};

export interface WorkloadStatusInputs {
  /** Undefined once the workload is handed back (the state document is gone). */
  state: SplitState | undefined;
  /** What the current step waits for, as the split status shows it. */
  blocking?: string;
  stepTimeoutMs: number;
  cleanupConfigMap?: string;
  /** Queues whose source outgrows the queue-agent (the observed document's `behindSince`,
   * docs/design.md "The lag a split adds"), with their backlog where known. */
  behind?: readonly { queue: string; backlog?: number }[];
  now?: Date;
}

/** The queues the queue-agent says fall behind (WorkloadStatusInputs.behind). */
export function behindQueues(
  observed: ObservedState | undefined,
): NonNullable<WorkloadStatusInputs['behind']> {
  return Object.entries(observed?.queues ?? {}).flatMap(([queue, q]) => {
    if (!q.lag?.behindSince) return [];
    const backlog = shownBacklog(q.lag.source) ?? q.lag.source;
    return [{ queue, ...(backlog !== undefined ? { backlog } : {}) }];
  });
}

/** What the workload's status says now. Pure. */
export function workloadStatusFor(inputs: WorkloadStatusInputs): WorkloadSplitStatus {
  const { state, blocking } = inputs;
  const updated = (inputs.now ?? new Date()).toISOString().replace(/\.\d{3}Z$/, 'Z');
  const cleanup = inputs.cleanupConfigMap !== undefined ? { cleanupConfigMap: inputs.cleanupConfigMap } : {};
  if (state === undefined) {
    return {
      phase: 'HandedBack',
      message:
        'Handed back: nothing is split, the app consumes its own sources again.' +
        (inputs.cleanupConfigMap !== undefined
          ? ` Broker resources that could not be proven empty were kept; ConfigMap ${inputs.cleanupConfigMap} lists them.`
          : ''),
      routes: 0,
      ...cleanup,
      updated,
    };
  }
  const routes = state.routes.length;
  const step = state.phase;
  const phase: WorkloadSplitPhase = step === 'IDLE' && routes === 0 ? 'HandingBack' : PHASE_OF[step];
  const waiting = blocking !== undefined ? ` Waiting: ${blocking}.` : '';
  const minutes = Math.max(1, Math.round(inputs.stepTimeoutMs / 60_000));
  const base = { phase, step, routes, ...cleanup, updated };
  switch (phase) {
    case 'Splitting':
      return { ...base, message: `Setting up the split (step ${step}).${waiting}` };
    case 'Split': {
      const behind = inputs.behind ?? [];
      if (behind.length === 0)
        return {
          ...base,
          message: `${routes} split route(s); the app consumes its application shadow meanwhile.`,
        };
      const which = behind
        .map(
          (b) =>
            `${b.queue} (${b.backlog !== undefined ? `about ${b.backlog}` : 'more and more'} messages waiting)`,
        )
        .join(', ');
      return {
        ...base,
        message: `${routes} split route(s); falling behind: the source of ${which} carries more than the queue-agent copies, so the app reads late while the workload is split. Nothing is lost.`,
        nextAction:
          'Stop the splits no longer used: once the last one stops, the app reads its sources directly again.',
      };
    }
    case 'RollingBack':
      return {
        ...base,
        message: `The activation failed; the proved rollback gives the app its sources back.${waiting}`,
      };
    case 'HandingBack':
      return {
        ...base,
        message: `The last split ended; the app is getting its sources back (step ${step}).${waiting}`,
        nextAction:
          blocking !== undefined
            ? `Nothing is lost: unconsumed messages stay in the app's shadow. The handback needs the workload's pods running and consuming; it continues by itself once they do (if it cannot finish within about ${minutes} min it turns Degraded and waits for an operator retry).`
            : 'Nothing to do: the handback continues by itself.',
      };
    case 'Degraded':
      return {
        ...base,
        message: `Degraded: ${state.degraded?.reason ?? 'a step could not be proven'}.`,
        nextAction: `Nothing was lost; the messages are kept. Fix the cause named here, then retry: ${retryHint(state.workload)}`,
      };
    case 'HandedBack':
      return { ...base, message: 'Handed back.' };
  }
}

/** What a change of status is called in the workload's Events. */
function eventOf(status: WorkloadSplitStatus): { reason: string; type: 'Normal' | 'Warning' } {
  if (status.phase === 'Degraded') return { reason: 'SplitDegraded', type: 'Warning' };
  if (status.phase === 'RollingBack') return { reason: 'SplitRollingBack', type: 'Warning' };
  if (status.phase === 'HandingBack' && status.message.includes(' Waiting: '))
    return { reason: 'HandbackWaiting', type: 'Warning' };
  if (status.phase === 'Split' && status.message.includes('; falling behind: '))
    return { reason: 'SplitFallingBehind', type: 'Warning' };
  return { reason: status.phase, type: 'Normal' };
}

/** A waiting reason's counts change often: rewrite the annotation at most this often within a phase. */
const REWRITE_MS = 15_000;

/**
 * Whether a status that differs from the one last written (at `writtenAt`) may wait: only one
 * that tells the same story (same phase and event reason, and the same number of routes: a route
 * that came or went is news the sidecar's last words and `kubectl describe` read at once), for
 * up to REWRITE_MS. HandedBack, the last word, is written in full.
 */
export function mayHoldBack(
  current: WorkloadSplitStatus | undefined,
  status: WorkloadSplitStatus,
  writtenAt: number | undefined,
  now: number,
): boolean {
  if (current === undefined || writtenAt === undefined || status.phase === 'HandedBack') return false;
  const sameStory =
    current.phase === status.phase &&
    eventOf(current).reason === eventOf(status).reason &&
    current.routes === status.routes;
  return sameStory && now - writtenAt < REWRITE_MS;
}

/** Publishes a workload's status: the annotation when it says something new, an Event when its reason changes. */
export class WorkloadStatusPublisher {
  private readonly apps: AppsV1Api;
  private readonly core: CoreV1Api;
  private last: { status: WorkloadSplitStatus; at: number } | undefined;

  constructor(
    kc: KubeConfig,
    private readonly kind: WorkloadKind,
    private readonly namespace: string,
    private readonly name: string,
    private readonly log: Logger,
    /** Told each version this publisher writes (the controller's workload cache must not serve an older one). */
    private readonly wrote?: (workload: Workload) => void,
  ) {
    this.apps = kc.makeApiClient(AppsV1Api);
    this.core = kc.makeApiClient(CoreV1Api);
  }

  /**
   * Writes `status` unless the workload already says it. Never throws: the status is a report,
   * and a failure to write it must not fail the step it reports on. Returns false only when the
   * write failed, so a caller whose next step would end all later passes (the handback's last
   * one) can stop and retry instead of leaving the workload saying something stale for good.
   */
  async publish(workload: Workload | undefined, status: WorkloadSplitStatus): Promise<boolean> {
    // Gone or being deleted: nobody reads its status any more.
    if (!workload?.metadata?.uid || workload.metadata.deletionTimestamp) return true;
    const current =
      this.last?.status ?? parseWorkloadStatus(workload.metadata.annotations?.[WORKLOAD_STATUS_ANNOTATION]);
    if (sameWorkloadStatus(current, status)) return true;
    const event = eventOf(status);
    const previous = current !== undefined ? eventOf(current).reason : undefined;
    if (mayHoldBack(current, status, this.last?.at, Date.now())) return true;
    try {
      const body = {
        metadata: { annotations: { [WORKLOAD_STATUS_ANNOTATION]: serializeWorkloadStatus(status) } },
      };
      const written =
        this.kind === 'Deployment'
          ? await this.apps.patchNamespacedDeployment(
              { name: this.name, namespace: this.namespace, body },
              mergePatch,
            )
          : await this.apps.patchNamespacedStatefulSet(
              { name: this.name, namespace: this.namespace, body },
              mergePatch,
            );
      this.wrote?.(written);
    } catch (err) {
      if (isNotFound(err)) return true;
      this.log.warn('workload.status_unwritten', { phase: status.phase, reason: describeError(err) });
      return false;
    }
    this.last = { status, at: Date.now() };
    // The Event tells the same story as the annotation already written: best effort.
    if (event.reason !== previous)
      await this.event(workload, event, status).catch((err: unknown) =>
        this.log.warn('workload.event_unwritten', { reason: describeError(err) }),
      );
    return true;
  }

  private async event(
    workload: Workload,
    event: { reason: string; type: 'Normal' | 'Warning' },
    status: WorkloadSplitStatus,
  ): Promise<void> {
    const now = new Date().toISOString();
    const message =
      status.nextAction !== undefined ? `${status.message} ${status.nextAction}` : status.message;
    await this.core.createNamespacedEvent({
      namespace: this.namespace,
      body: {
        metadata: { generateName: `${this.name}.queuesplit.`, namespace: this.namespace },
        involvedObject: {
          apiVersion: 'apps/v1',
          kind: this.kind,
          name: this.name,
          namespace: this.namespace,
          uid: workload.metadata!.uid!,
        },
        reason: event.reason,
        // The Events API caps messages at 1 KiB.
        message: message.length > 1024 ? `${message.slice(0, 1021)}...` : message,
        type: event.type,
        source: { component: 'queuesplit-controller' },
        reportingComponent: 'queuesplit.dev/controller',
        reportingInstance: os.hostname(),
        firstTimestamp: new Date(now),
        lastTimestamp: new Date(now),
        count: 1,
      },
    });
  }
}
