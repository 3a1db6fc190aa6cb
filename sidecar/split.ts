// The developer's QueueSplit: create it or adopt the one a previous run (or the extension)
// made, wait for the controller to make it Active with visible progress, keep its lease alive,
// watch it while delivery runs, and on stop delete it and wait while the controller drains the
// route back to the application. All with the developer's own credentials.
import { randomBytes } from 'node:crypto';
import { setTimeout as sleep } from 'node:timers/promises';
import { type QueueSplit, type QueueSplitSpec, type WorkloadRef } from '../core/crd/queueSplitSchema';
import { queueSplitObject } from '../core/crd/queueSplitObject';
import { leaseExpiry } from '../core/crd/validateQueueSplit';
import { formatFilter, parseFilter, sameFilter, type HeaderFilter } from '../core/filter';
import { specFilter } from '../core/crd/validateQueueSplit';
import { queueSplitName, routeIdFromRandomBytes } from '../core/names';
import { sessionPublicKey } from '../core/sessionSecret';
import { SidecarError, errorText } from '../laptop/errors';
import { kubeError, kubeStatus, type KubeTarget } from '../laptop/kube';
import { QUEUE_SPLIT_RESOURCE, QueueSplitClient } from '../laptop/queueSplitClient';
import type { Reporter } from './output';
import type { ControllerWords, SidecarDeliveryMode, SplitRef, StreamCounts } from '../core/sidecarProtocol';
import { loadState, saveState, type RouteState } from './state';
import type { SplitChanges } from './splitChanges';

export function splitRef(split: QueueSplit): SplitRef {
  return {
    name: split.metadata.name,
    namespace: split.metadata.namespace ?? '',
    routeId: split.spec.routeId,
    ...(split.metadata.uid !== undefined ? { uid: split.metadata.uid } : {}),
  };
}

/** Thin client of the QueueSplit resource in one namespace. */
export class QueueSplitApi {
  private readonly client: QueueSplitClient;

  constructor(readonly kube: KubeTarget) {
    this.client = new QueueSplitClient(kube.kc, kube.namespace);
  }

  private fail(err: unknown, verb: string, name?: string): SidecarError {
    return kubeError(
      err,
      {
        verb,
        resource: QUEUE_SPLIT_RESOURCE,
        namespace: this.kube.namespace,
        ...(name !== undefined ? { name } : {}),
      },
      this.kube.context,
    );
  }

  async get(name: string): Promise<QueueSplit | undefined> {
    try {
      return await this.client.get(name);
    } catch (err) {
      const failure = this.fail(err, 'get', name);
      if (kubeStatus(err) === 404 && failure.code !== 'crd-missing') return undefined;
      throw failure;
    }
  }

  async create(body: QueueSplit): Promise<QueueSplit> {
    try {
      return await this.client.create(body);
    } catch (err) {
      throw this.fail(err, 'create', body.metadata.name);
    }
  }

  async patchSpec(name: string, spec: Partial<QueueSplitSpec>): Promise<QueueSplit> {
    try {
      return await this.client.patchSpec(name, spec);
    } catch (err) {
      throw this.fail(err, 'patch', name);
    }
  }

  /** Deletes exactly this object (uid precondition); an absent one counts as deleted. */
  async delete(name: string, uid: string | undefined): Promise<void> {
    try {
      await this.client.delete(name, uid);
    } catch (err) {
      const status = kubeStatus(err);
      if (status === 404 || status === 409) return; // gone, or a different object now has the name
      throw this.fail(err, 'delete', name);
    }
  }
}

export interface SplitRequest {
  workload: WorkloadRef;
  queues: string[];
  filter: HeaderFilter;
  owner: string;
  leaseSeconds: number;
  mode: SidecarDeliveryMode;
  /** http/relay through the queue-agent: the new route's stream secret (only its hash goes in the spec). */
  sessionSecret?: string;
}

function leaseNow(seconds: number): QueueSplitSpec['lease'] {
  return { renewTime: new Date().toISOString(), durationSeconds: seconds };
}

/** What differs between an existing split and the request (immutable fields only). */
function specDifferences(existing: QueueSplitSpec, request: SplitRequest): string[] {
  const out: string[] = [];
  if (existing.workload.kind !== request.workload.kind || existing.workload.name !== request.workload.name) {
    out.push(`workload ${existing.workload.kind}/${existing.workload.name}`);
  }
  const sameQueues =
    existing.queues.length === request.queues.length &&
    existing.queues.every((q) => request.queues.includes(q));
  if (!sameQueues) out.push(`queues ${existing.queues.join(',')}`);
  const existingFilter = parseFilter(specFilter(existing));
  if (!existingFilter.ok || !sameFilter(existingFilter.value, request.filter))
    out.push(`filter "${formatFilter(specFilter(existing))}"`);
  if (existing.owner !== request.owner) out.push(`owner ${existing.owner}`);
  return out;
}

export interface AcquireOptions {
  api: QueueSplitApi;
  reporter: Reporter;
  /** --split: adopt exactly this object. */
  splitName?: string;
  request: SplitRequest;
  stateFile: string;
  /** How long to wait for a previous route that is still draining. */
  timeoutMs: number;
  signal: AbortSignal;
}

export interface Acquired {
  split: QueueSplit;
  adopted: boolean;
  /** The route's stream secret this sidecar holds: made at its create, or kept in its state file. */
  sessionSecret?: string;
}

/** Adopts the split named by --split or the state file, else creates a new one. */
export async function acquireSplit(options: AcquireOptions): Promise<Acquired> {
  const { api, reporter, request } = options;
  const namespace = api.kube.namespace;
  if (options.splitName !== undefined) {
    const existing = await api.get(options.splitName);
    if (existing === undefined || existing.metadata.deletionTimestamp !== undefined) {
      throw new SidecarError(
        'split-conflict',
        `QueueSplit ${options.splitName} ${existing === undefined ? 'does not exist' : 'is being deleted'} in namespace ${namespace}.`,
        `Check the name with \`kubectl get queuesplits -n ${namespace}\`, or start without --split to create a new split.`,
        '--split',
      );
    }
    return { split: await adopt(api, reporter, existing, request), adopted: true };
  }

  const state = loadState(options.stateFile);
  if (state !== undefined) {
    if (
      state.namespace !== namespace ||
      state.workload.name !== request.workload.name ||
      state.workload.kind !== request.workload.kind
    ) {
      throw new SidecarError(
        'split-conflict',
        `The state file ${options.stateFile} belongs to ${state.workload.kind}/${state.workload.name} in namespace ${state.namespace}, not to this session.`,
        'Pass a different --state-file for this workload (or omit it to use the default per workload).',
        '--state-file',
      );
    }
    const existing = await api.get(state.splitName);
    if (
      existing !== undefined &&
      existing.spec.routeId === state.routeId &&
      existing.metadata.deletionTimestamp === undefined
    ) {
      const differences = specDifferences(existing.spec, request);
      if (differences.length > 0) {
        throw new SidecarError(
          'split-conflict',
          `Your split ${state.splitName} from an earlier run is still attached with ${differences.join(', ')}; a split's workload, queues and filter cannot change.`,
          `Start the sidecar with the same settings to adopt it, or stop it first (\`kubectl delete queuesplit ${state.splitName} -n ${namespace}\` drains it back to the app).`,
        );
      }
      return {
        split: await adopt(api, reporter, existing, request),
        adopted: true,
        ...(state.sessionSecret !== undefined ? { sessionSecret: state.sessionSecret } : {}),
      };
    }
    if (existing !== undefined && existing.spec.routeId === state.routeId) {
      reporter.emit({
        type: 'progress',
        stage: 'creating',
        message: `Your previous split ${state.splitName} is still draining; waiting for it to finish before creating a new one.`,
      });
      await waitUntilGone(api, reporter, existing, { ...options, pollMs: GONE_POLL_MS }, false);
    } else {
      reporter.emit({
        type: 'progress',
        stage: 'creating',
        message: `Your previous split ${state.splitName} is gone (stopped, or its lease expired and it was drained); creating a new route.`,
      });
    }
  }
  return {
    split: await create(api, reporter, request, options.stateFile),
    adopted: false,
    ...(request.sessionSecret !== undefined ? { sessionSecret: request.sessionSecret } : {}),
  };
}

async function adopt(
  api: QueueSplitApi,
  reporter: Reporter,
  existing: QueueSplit,
  request: SplitRequest,
): Promise<QueueSplit> {
  reporter.emit({
    type: 'progress',
    stage: 'adopting',
    split: splitRef(existing),
    ...(existing.status?.phase !== undefined ? { phase: existing.status.phase } : {}),
    message: `Adopting QueueSplit ${existing.metadata.name} (route ${existing.spec.routeId}).`,
  });
  // Renew at once: an adopted split may be close to expiry (the previous sidecar died).
  return api.patchSpec(existing.metadata.name, {
    lease: leaseNow(request.leaseSeconds),
    delivery: { mode: request.mode },
  });
}

async function create(
  api: QueueSplitApi,
  reporter: Reporter,
  request: SplitRequest,
  stateFile: string,
): Promise<QueueSplit> {
  const routeId = routeIdFromRandomBytes(randomBytes(16));
  const name = queueSplitName({ owner: request.owner, workloadName: request.workload.name, routeId });
  const state: RouteState = {
    version: 1,
    routeId,
    splitName: name,
    context: api.kube.context,
    namespace: api.kube.namespace,
    workload: request.workload,
    createdAt: new Date().toISOString(),
    ...(request.sessionSecret !== undefined ? { sessionSecret: request.sessionSecret } : {}),
  };
  // Before the create: a crash right after it still finds (and adopts) this route.
  saveState(stateFile, state);
  const body = queueSplitObject({
    name,
    namespace: api.kube.namespace,
    createdBy: 'sidecar',
    workload: request.workload,
    queues: request.queues,
    filter: request.filter,
    owner: request.owner,
    routeId,
    lease: leaseNow(request.leaseSeconds),
    mode: request.mode,
    ...(request.sessionSecret !== undefined
      ? { sessionPublicKey: sessionPublicKey(request.sessionSecret) }
      : {}),
  });
  reporter.emit({
    type: 'progress',
    stage: 'creating',
    message: `Creating QueueSplit ${name} for ${request.workload.kind}/${request.workload.name} (queues ${request.queues.join(', ')}, filter "${formatFilter(request.filter)}").`,
  });
  return api.create(body);
}

/** The controller's explanation of a phase: a blocking condition's message, then nextAction. */
export function statusText(split: QueueSplit): ControllerWords {
  const status = split.status;
  const phase = status?.phase ?? 'Pending';
  const conditions = status?.conditions ?? [];
  const blocking =
    conditions.find((c) => c.status === 'False' && c.message !== '') ??
    conditions.find((c) => c.message !== '');
  // Per-queue phases, when they say more than the split's own.
  const queues = (status?.queues ?? []).filter((q) => q.phase !== phase).map((q) => `${q.name} ${q.phase}`);
  const message = `${blocking !== undefined ? `${phase}: ${blocking.message}` : phase}${queues.length > 0 ? ` (${queues.join(', ')})` : ''}`;
  return { phase, message, ...(status?.nextAction !== undefined ? { nextAction: status.nextAction } : {}) };
}

function activeQueuesReady(split: QueueSplit): boolean {
  const statuses = split.status?.queues ?? [];
  return split.spec.queues.every((q) =>
    statuses.some((s) => s.name === q && s.shadow?.source !== undefined && s.shadow.source !== ''),
  );
}

export interface WaitOptions {
  timeoutMs: number;
  leaseSeconds: number;
  pollMs: number;
  signal: AbortSignal;
  /** Ends a wait between reads when the split changes (./splitChanges.ts). */
  changes?: Pick<SplitChanges, 'next'>;
}

/** Waits `pollMs` between reads, or until `changes` says the split changed. */
function betweenReads(options: Pick<WaitOptions, 'pollMs' | 'signal' | 'changes'>): Promise<unknown> {
  return options.changes
    ? options.changes.next(options.pollMs, options.signal)
    : sleep(options.pollMs, undefined, { signal: options.signal });
}

/** Polls until Active with every queue's shadow named; progress on every change, and every 15s. */
export async function waitForActive(
  api: QueueSplitApi,
  reporter: Reporter,
  split: QueueSplit,
  options: WaitOptions,
): Promise<QueueSplit> {
  const started = Date.now();
  const ref = splitRef(split);
  let lastKey = '';
  let lastReport = 0;
  let warnedSilent = false;
  for (;;) {
    const current = await api.get(ref.name);
    if (
      current === undefined ||
      current.metadata.uid !== ref.uid ||
      current.metadata.deletionTimestamp !== undefined
    ) {
      throw new SidecarError(
        'split-deleted',
        `QueueSplit ${ref.name} was deleted before it became Active.`,
        'Someone (or a cleanup) removed it; start the sidecar again for a new split.',
      );
    }
    const controller = statusText(current);
    const { phase, message, nextAction } = controller;
    const elapsed = Math.round((Date.now() - started) / 1000);
    if (phase === 'Active' && activeQueuesReady(current)) return current;
    if (phase === 'Rejected' || phase === 'Failed') {
      throw new SidecarError(
        phase === 'Rejected' ? 'split-rejected' : 'split-failed',
        `QueueSplit ${ref.name} is ${message}`,
        nextAction ?? `See \`kubectl describe queuesplit ${ref.name} -n ${ref.namespace}\`.`,
        undefined,
        controller,
      );
    }
    if (phase === 'Draining' || phase === 'Stopped') {
      throw new SidecarError(
        'split-failed',
        `QueueSplit ${ref.name} is ${message} before it became Active (did its lease expire?).`,
        'Start the sidecar again for a new split.',
        undefined,
        controller,
      );
    }
    const key = `${phase}\u0000${message}`;
    if (key !== lastKey || Date.now() - lastReport >= 15_000) {
      reporter.emit({
        type: 'progress',
        stage: 'waiting',
        split: ref,
        phase,
        message: key === lastKey ? `Still ${message} (${elapsed}s).` : message,
        controller,
      });
      lastKey = key;
      lastReport = Date.now();
    }
    if (current.status === undefined && !warnedSilent && Date.now() - started > 20_000) {
      warnedSilent = true;
      reporter.emit({
        type: 'warning',
        code: 'controller-silent',
        message: `Nothing has reported on QueueSplit ${ref.name} for ${elapsed}s.`,
        suggestedAction:
          'Check that the Queue Split controller runs in the cluster (and watches this namespace).',
      });
    }
    if (Date.now() - started > options.timeoutMs) {
      throw new SidecarError(
        'split-timeout',
        `QueueSplit ${ref.name} is still ${message} after ${elapsed}s.`,
        `${nextAction ?? `See \`kubectl describe queuesplit ${ref.name} -n ${ref.namespace}\` and the controller logs.`} The split stays until its lease runs out (${options.leaseSeconds}s after the sidecar exits): start again to adopt it, or raise --ready-timeout.`,
      );
    }
    await betweenReads(options);
  }
}

/**
 * Renews spec.lease.renewTime every third of the lease. A failed renewal warns once per streak
 * (and again if the lease then runs out); the loop keeps trying until stopped.
 */
export class LeaseKeeper {
  private readonly controller = new AbortController();
  private expiresAt: number;
  private loop: Promise<void> | undefined;

  constructor(
    private readonly api: QueueSplitApi,
    private readonly reporter: Reporter,
    private readonly split: QueueSplit,
    private readonly leaseSeconds: number,
  ) {
    this.expiresAt = leaseExpiry(split.spec);
  }

  start(): void {
    this.loop ??= this.run();
  }

  private async run(): Promise<void> {
    const every = Math.max(1_000, (this.leaseSeconds * 1000) / 3);
    let failing = false;
    let warnedExpired = false;
    const name = this.split.metadata.name;
    while (!this.controller.signal.aborted) {
      try {
        await sleep(every, undefined, { signal: this.controller.signal });
      } catch {
        return;
      }
      try {
        const renewed = await this.api.patchSpec(name, { lease: leaseNow(this.leaseSeconds) });
        const late = Date.now() > this.expiresAt;
        this.expiresAt = leaseExpiry(renewed.spec);
        if (late && !warnedExpired) {
          this.reporter.emit({
            type: 'warning',
            code: 'lease-expired',
            message: `The lease of ${name} ran out before this renewal got through; the controller may have started draining the route.`,
            suggestedAction: 'If the split leaves Active, restart the sidecar for a new route.',
          });
        }
        if (failing) this.reporter.log(`lease of ${name} renewed again`);
        failing = false;
        warnedExpired = false;
      } catch (err) {
        if (this.controller.signal.aborted) return;
        if (!failing) {
          this.reporter.emit({
            type: 'warning',
            code: 'lease-renewal-failed',
            message: `Cannot renew the lease of ${name}: ${errorText(err)}. Retrying; the lease holds until ${new Date(this.expiresAt).toISOString()}.`,
            suggestedAction:
              'Check your connection to the cluster; if the lease runs out the route drains back to the app.',
          });
        }
        failing = true;
        if (Date.now() > this.expiresAt && !warnedExpired) {
          warnedExpired = true;
          this.reporter.emit({
            type: 'warning',
            code: 'lease-expired',
            message: `The lease of ${name} has run out; the controller drains the route back to the app.`,
            suggestedAction:
              'Restore the cluster connection; restart the sidecar for a new route if the split is gone.',
          });
        }
      }
    }
  }

  async stop(): Promise<void> {
    this.controller.abort();
    await this.loop;
  }
}

/** Phases an Active split does not come back from: the sidecar stops consuming. */
const TERMINAL_WHILE_ACTIVE: ReadonlySet<string> = new Set(['Draining', 'Stopped', 'Failed', 'Rejected']);

export interface MonitorHandlers {
  onGone(err: SidecarError): void;
  /** What this sidecar's session stream counted (parked messages, unreadable frames, takeovers). */
  streamCounts?(): StreamCounts;
}

/**
 * Watches the Active split: `status` lines when the controller's counts change, a warning when
 * it is Degraded (and progress when it is Active again), a fatal `split-deleted` when it
 * disappears or is drained without our asking.
 */
export class SplitMonitor {
  private readonly controller = new AbortController();
  private loop: Promise<void> | undefined;

  constructor(
    private readonly api: QueueSplitApi,
    private readonly reporter: Reporter,
    private readonly split: QueueSplit,
    private readonly pollMs: number,
    private readonly handlers: MonitorHandlers,
  ) {}

  start(): void {
    this.loop ??= this.run();
  }

  private async run(): Promise<void> {
    const ref = splitRef(this.split);
    let lastStatus = '';
    let lastPhase = 'Active';
    let failures = 0;
    const restarts = new RestartWatch(this.reporter);
    while (!this.controller.signal.aborted) {
      try {
        await sleep(this.pollMs, undefined, { signal: this.controller.signal });
      } catch {
        return;
      }
      let current: QueueSplit | undefined;
      try {
        current = await this.api.get(ref.name);
        failures = 0;
      } catch (err) {
        if (++failures === 3)
          this.reporter.log(`cannot read QueueSplit ${ref.name}: ${errorText(err)} (retrying)`);
        continue;
      }
      if (this.controller.signal.aborted) return;
      if (
        current === undefined ||
        current.metadata.uid !== ref.uid ||
        current.metadata.deletionTimestamp !== undefined
      ) {
        this.handlers.onGone(
          new SidecarError(
            'split-deleted',
            `QueueSplit ${ref.name} was deleted while the sidecar was using it; its route drains back to the app.`,
            'Someone stopped the split (or its lease expired); start the sidecar again for a new split.',
          ),
        );
        return;
      }
      restarts.check(current, false);
      const status = current.status;
      const summary = {
        ...(status?.phase !== undefined ? { phase: status.phase } : {}),
        ...(status?.delivered !== undefined ? { delivered: status.delivered } : {}),
        ...(status?.lag !== undefined ? { lag: status.lag } : {}),
        queues: (status?.queues ?? []).map((q) => ({
          name: q.name,
          phase: q.phase,
          ...(q.delivered !== undefined ? { delivered: q.delivered } : {}),
          ...(q.lag !== undefined ? { lag: q.lag } : {}),
        })),
      };
      const counts = this.handlers.streamCounts?.();
      const stream =
        counts && (counts.parked > 0 || counts.unreadableFrames > 0 || counts.replaced > 0)
          ? { stream: counts }
          : {};
      const key = JSON.stringify({ ...summary, ...stream });
      if (key !== lastStatus) {
        lastStatus = key;
        this.reporter.emit({ type: 'status', ...summary, ...stream });
      }
      const controller = statusText(current);
      const { phase, message, nextAction } = controller;
      if (TERMINAL_WHILE_ACTIVE.has(phase)) {
        // The route is being drained (or failed) without us asking — typically its lease ran
        // out while the sidecar could not reach the cluster. Consuming on would hold up the drain,
        // which waits for the session consumer to be gone.
        this.handlers.onGone(
          new SidecarError(
            'split-deleted',
            `QueueSplit ${ref.name} is ${message} — the route is no longer yours to consume.`,
            nextAction ?? 'Its lease probably ran out; start the sidecar again for a new split.',
          ),
        );
        return;
      }
      if (phase !== lastPhase) {
        if (phase === 'Active') {
          this.reporter.emit({
            type: 'progress',
            stage: 'active',
            split: ref,
            phase,
            message: `QueueSplit ${ref.name} is Active again.`,
          });
        } else {
          this.reporter.emit({
            type: 'warning',
            code: 'split-not-active',
            message: `QueueSplit ${ref.name} is ${message}`,
            suggestedAction:
              nextAction ?? `See \`kubectl describe queuesplit ${ref.name} -n ${ref.namespace}\`.`,
          });
        }
        lastPhase = phase;
      }
    }
  }

  async stop(): Promise<void> {
    this.controller.abort();
    await this.loop;
  }
}

export interface DetachResult {
  drained: boolean;
  waitedMs: number;
}

/**
 * Warns once per queue-agent restart the controller reports (the `AgentRestarted` condition):
 * messages in flight may come again, a drain resumes. A restart from before the
 * watch began (whole seconds: condition times have no fractions) is not news.
 */
export class RestartWatch {
  /** Per split uid, the restart last warned about: the monitor and the drain share it. */
  private static readonly seen = new Map<string, string>();
  private readonly since = Math.floor(Date.now() / 1000) * 1000;

  constructor(private readonly reporter: Reporter) {}

  check(split: QueueSplit, draining: boolean): void {
    const restart = split.status?.conditions?.find((c) => c.type === 'AgentRestarted');
    const at = restart?.lastTransitionTime;
    const key = split.metadata.uid ?? split.metadata.name;
    if (at === undefined || at === RestartWatch.seen.get(key)) return;
    RestartWatch.seen.set(key, at);
    if (Date.parse(at) < this.since) return;
    this.reporter.emit({
      type: 'warning',
      code: 'agent-restarted',
      message: draining
        ? `The queue-agent restarted at ${at} while ${split.metadata.name} was draining; the drain resumes where it was.`
        : `The queue-agent restarted at ${at}; ${split.metadata.name} stays active. Messages in flight at the restart may be delivered to you again.`,
      suggestedAction:
        'Nothing to do unless it keeps restarting; make handlers idempotent for repeated deliveries (see the README on agent restarts).',
    });
  }
}

/** Reads of a split being deleted, when no watch wakes the wait sooner. */
const GONE_POLL_MS = 1_000;

/** Deletes the split and waits until the controller has drained it and the object is gone. */
export async function detachSplit(
  api: QueueSplitApi,
  reporter: Reporter,
  split: QueueSplit,
  options: { timeoutMs: number; signal: AbortSignal; changes?: WaitOptions['changes']; pollMs?: number },
): Promise<DetachResult> {
  const started = Date.now();
  await api.delete(split.metadata.name, split.metadata.uid);
  const drained = await waitUntilGone(
    api,
    reporter,
    split,
    { ...options, pollMs: options.pollMs ?? GONE_POLL_MS },
    true,
  );
  return { drained, waitedMs: Date.now() - started };
}

async function waitUntilGone(
  api: QueueSplitApi,
  reporter: Reporter,
  split: QueueSplit,
  options: Pick<WaitOptions, 'timeoutMs' | 'pollMs' | 'signal' | 'changes'>,
  report: boolean,
): Promise<boolean> {
  const { timeoutMs } = options;
  const ref = splitRef(split);
  const started = Date.now();
  let lastKey = '';
  let lastReport = 0;
  const restarts = new RestartWatch(reporter);
  for (;;) {
    const current = await api.get(ref.name);
    if (current === undefined || current.metadata.uid !== ref.uid) return true;
    if (report) restarts.check(current, true);
    const { phase, message } = statusText(current);
    const lag = current.status?.lag;
    const key = `${message}\u0000${lag ?? ''}`;
    if (report && (key !== lastKey || Date.now() - lastReport >= 15_000)) {
      reporter.emit({
        type: 'progress',
        stage: 'draining',
        split: ref,
        phase,
        ...(lag !== undefined ? { lag } : {}),
        message: `Waiting for the controller to drain ${ref.name} back to the app (${message}${lag !== undefined ? `, ${lag} left` : ''}).`,
      });
      lastKey = key;
      lastReport = Date.now();
    }
    if (Date.now() - started > timeoutMs) return false;
    try {
      await betweenReads(options);
    } catch {
      return false;
    }
  }
}
