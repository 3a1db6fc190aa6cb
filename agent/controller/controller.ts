// The controller's main loop: every tick groups the QueueSplits by workload and starts the
// coordinator of each workload that is due and not being passed, the longest waiting first, up to
// PASS_CONCURRENCY side by side; a pass that ends ticks the loop, which fills its slot
// (passQueue.ts). Workloads whose splits are all gone but whose state is not finished (a handback
// in progress) are passed too. QueueSplits, state documents, the queue-agents' observed
// documents and the workloads are read from list-and-watch caches (agent/kube/informers.ts,
// workloadCache.ts), and a change to one of them makes its workload due at once. A workload that
// is moving (anything but a steady ACTIVE) is due again --resync-ms after its pass; a steady one
// at its next lease expiry, or after QUIET_RESYNC_MS at the latest (level-triggered: a missed
// event costs at most that long). Nothing is acted on until the QueueSplit and state caches have
// listed once: an empty cache is "not known yet", never "no splits" (docs/design.md §6, "Caches").
import { setTimeout as sleep } from 'node:timers/promises';
import {
  CoreV1Api,
  CustomObjectsApi,
  type KubeConfig,
  type KubernetesListObject,
  type KubernetesObject,
  type V1ConfigMap,
} from '@kubernetes/client-node';
import { STATE_KEY } from '../../core/agentProtocol';
import {
  QUEUE_SPLIT_GROUP,
  QUEUE_SPLIT_PLURAL,
  QUEUE_SPLIT_VERSION,
  type QueueSplit,
} from '../../core/crd/queueSplitSchema';
import { parseState } from '../../core/state/stateDocument';
import { describeError, type Logger } from '../log';
import { InformerCache, type CacheObserver, type WatchedPath } from '../kube/informers';
import { AgentObjects, type AgentSettings } from './agentObjects';
import { Coordinator, type CoordinatorSettings } from './coordinator';
import { DueTimes } from './dueTimes';
import { OwnershipLeases } from './ownershipLeases';
import { SplitObjects, classifySplits, type ClassifiedSplits } from './splitObjects';
import { VersionMemo } from './versionMemo';
import { invalidSplitStatus, sameStatus } from './splitStatus';
import { PassQueue } from './passQueue';
import { WorkloadCache } from './workloadCache';
import { Workloads, type WorkloadKind } from './workloads';

export interface ControllerSettings extends CoordinatorSettings {
  agent: AgentSettings;
  resyncMs: number;
  /**
   * A namespaced install (README "Install"): only these namespaces are listed and watched, and
   * RBAC grants nothing elsewhere. Undefined: every namespace.
   */
  watchNamespaces?: readonly string[];
}

/** A steady workload is passed at least this often, whatever the caches say. */
export const QUIET_RESYNC_MS = 30_000;
/** How many workloads are passed side by side. */
const PASS_CONCURRENCY = 16;
const STATE_SELECTOR = 'queuesplit.dev/state=true';
const AGENT_SELECTOR = 'queuesplit.dev/component=queue-agent';

export class Controller {
  private readonly coordinators = new Map<string, Coordinator>();
  /** When each workload's next pass is due. */
  private readonly due = new DueTimes();
  /** QueueSplits as the custom-objects API returns them (JSON: timestamps are strings, which
   * client-node's KubernetesObject types as Date), read back through `cachedSplits()`. */
  private readonly splitCache: InformerCache<KubernetesObject>;
  private readonly stateCache: InformerCache<V1ConfigMap>;
  private readonly agentCache: InformerCache<V1ConfigMap>;
  /** Deployments and StatefulSets: a pass starts from the cache, and a change wakes its workload. */
  private readonly workloadCache: WorkloadCache;
  /** The last pass found no QueueSplit API (logged once per change). */
  private apiMissing = false;
  /** The caches the last pass waited for (logged once per change, and once a minute while so). */
  private waitingFor = '';
  private waitingLoggedAt = 0;
  private readonly splits: SplitObjects;
  private readonly deps: ConstructorParameters<typeof Coordinator>[4];
  private wake: (() => void) | undefined;
  /** Something changed since the current pass began. */
  private poked = false;
  /** Per workload, the timer that passes it when a wait only the clock ends is over. */
  private readonly rechecks = new Map<string, NodeJS.Timeout>();
  /** Each QueueSplit's validation and each state document's workload, derived once per version. */
  private readonly validations = new VersionMemo<QueueSplit, ClassifiedSplits>((split) =>
    classifySplits([split]),
  );
  private readonly stateOwners = new VersionMemo<V1ConfigMap, string | undefined>((cm) => {
    const parsed = parseState(cm.data?.[STATE_KEY] ?? '');
    if (!parsed.ok || parsed.value.installId !== this.settings.installId) return undefined;
    const w = parsed.value.workload;
    return workloadKey(w.namespace, w.kind, w.name);
  });
  private stopped = false;
  /** The workloads being passed (agent/controller/passQueue.ts); an ended pass pokes the loop. */
  private readonly passes = new PassQueue(PASS_CONCURRENCY, () => this.poke());
  /** When the loop last looked for due workloads. */
  private lastTickAt = Date.now();

  /** The liveness probe fails once this is too old: the loop stopped turning, or a pass hangs. */
  get lastPassAt(): number {
    return Math.min(this.lastTickAt, this.passes.oldestStart() ?? Infinity);
  }

  constructor(
    private readonly kc: KubeConfig,
    private readonly settings: ControllerSettings,
    private readonly log: Logger,
    cacheObserver?: CacheObserver,
  ) {
    this.splits = new SplitObjects(kc, settings.watchNamespaces);
    const namespaces = settings.watchNamespaces;
    const custom = kc.makeApiClient(CustomObjectsApi);
    const core = kc.makeApiClient(CoreV1Api);
    const splitApi = { group: QUEUE_SPLIT_GROUP, version: QUEUE_SPLIT_VERSION, plural: QUEUE_SPLIT_PLURAL };
    const splitPaths: WatchedPath<KubernetesObject>[] = (namespaces ?? [undefined]).map((namespace) => ({
      path: `/apis/${QUEUE_SPLIT_GROUP}/${QUEUE_SPLIT_VERSION}${namespace ? `/namespaces/${namespace}` : ''}/${QUEUE_SPLIT_PLURAL}`,
      list: async () =>
        (await (namespace
          ? custom.listNamespacedCustomObject({ ...splitApi, namespace })
          : custom.listClusterCustomObject(splitApi))) as KubernetesListObject<KubernetesObject>,
    }));
    const configMapPaths = (labelSelector: string): WatchedPath<V1ConfigMap>[] =>
      (namespaces ?? [undefined]).map((namespace) => ({
        path: namespace ? `/api/v1/namespaces/${namespace}/configmaps` : '/api/v1/configmaps',
        list: () =>
          namespace
            ? core.listNamespacedConfigMap({ namespace, labelSelector })
            : core.listConfigMapForAllNamespaces({ labelSelector }),
      }));
    this.splitCache = new InformerCache(
      kc,
      QUEUE_SPLIT_PLURAL,
      splitPaths,
      log,
      (object) => {
        const split = object as unknown as QueueSplit;
        const spec = split.spec as Partial<QueueSplit['spec']> | undefined;
        if (spec?.workload)
          this.touch(split.metadata.namespace ?? 'default', spec.workload.kind, spec.workload.name);
        else this.poke();
      },
      undefined,
      cacheObserver,
    );
    this.stateCache = new InformerCache(
      kc,
      'state configmaps',
      configMapPaths(STATE_SELECTOR),
      log,
      (cm) => {
        const parsed = parseState(cm.data?.[STATE_KEY] ?? '');
        if (parsed.ok)
          this.touch(parsed.value.workload.namespace, parsed.value.workload.kind, parsed.value.workload.name);
      },
      STATE_SELECTOR,
      cacheObserver,
    );
    this.agentCache = new InformerCache(
      kc,
      'queue-agent configmaps',
      configMapPaths(AGENT_SELECTOR),
      log,
      (cm) => {
        const workload = cm.metadata?.labels?.['queuesplit.dev/workload'];
        const namespace = cm.metadata?.namespace;
        if (workload && namespace)
          for (const kind of ['Deployment', 'StatefulSet']) this.touch(namespace, kind, workload);
      },
      AGENT_SELECTOR,
      cacheObserver,
    );
    this.workloadCache = new WorkloadCache(
      kc,
      namespaces,
      log,
      (kind, namespace, name) => {
        if (this.coordinators.has(workloadKey(namespace, kind, name))) this.touch(namespace, kind, name);
      },
      cacheObserver,
    );
    this.deps = {
      kc,
      workloads: new Workloads(kc, this.workloadCache),
      agents: new AgentObjects(kc, settings.agent),
      splits: this.splits,
      ownership: new OwnershipLeases(kc),
      // The queue-agent's observed document from the cache once it is synced, else a read.
      observed: (namespace, name) =>
        this.agentCache.ready ? { cached: this.agentCache.get(namespace, name) } : undefined,
      log,
    };
  }

  /** Something of this workload changed: pass it at the next tick. */
  private touch(namespace: string, kind: string, name: string): void {
    this.due.touch(workloadKey(namespace, kind, name));
    this.poke();
  }

  /** Starts the next pass now; a change that arrives during a pass starts the next one as soon
   * as this one ends, instead of after the resync interval (each hop of a route's attach, the
   * request and the agent's ack, used to wait up to --resync-ms when a pass was running). */
  private poke(): void {
    this.poked = true;
    this.wake?.();
  }

  stop(): void {
    this.stopped = true;
    this.poke();
  }

  async run(): Promise<void> {
    await Promise.all([
      this.splitCache.start(),
      this.stateCache.start(),
      this.agentCache.start(),
      this.workloadCache.start(),
    ]);
    while (!this.stopped) {
      const started = Date.now();
      this.lastTickAt = started;
      this.poked = false;
      try {
        // With every slot taken nothing could start: the end of a pass ticks again (a burst of
        // watch events would otherwise group every QueueSplit once per event).
        if (this.passes.free > 0) await this.tick();
      } catch (err) {
        this.log.error('controller.pass_failed', { reason: describeError(err) });
      }
      const now = Date.now();
      const wait = Math.min(
        Math.max(0, this.settings.resyncMs - (now - started)),
        this.due.soonestInMs(now) ?? Infinity,
      );
      if (!this.poked)
        await Promise.race([sleep(wait), new Promise<void>((resolve) => (this.wake = resolve))]);
    }
    await this.passes.idle();
    await Promise.all([
      this.splitCache.stop(),
      this.stateCache.stop(),
      this.agentCache.stop(),
      this.workloadCache.stop(),
    ]);
  }

  /**
   * The caches a pass must not run without, with why they have not listed; empty once both
   * have. A missing QueueSplit API (404) is an answer, not a gap: every split is gone.
   */
  private unsyncedCaches(): { caches: string[]; reasons: string[] } {
    const caches: string[] = [];
    const reasons: string[] = [];
    for (const [name, cache] of [
      [QUEUE_SPLIT_PLURAL, this.splitCache],
      ['state configmaps', this.stateCache],
    ] as const) {
      if (cache.hasSynced || (cache === this.splitCache && cache.apiMissing)) continue;
      caches.push(name);
      reasons.push(...cache.unsyncedReasons.map((r) => `${name}: ${r}`));
    }
    return { caches, reasons };
  }

  /** True (and said) while a cache the pass reads has never listed. */
  private waitForCaches(): boolean {
    const { caches, reasons } = this.unsyncedCaches();
    const key = caches.join(',');
    const now = Date.now();
    if (key === '') {
      if (this.waitingFor !== '') this.log.info('controller.caches_synced', { waitedFor: this.waitingFor });
      this.waitingFor = '';
      return false;
    }
    // A first list in progress is normal at start: say it only once it failed.
    if (reasons.every((r) => r.endsWith('not listed yet'))) return true;
    if (key !== this.waitingFor || now - this.waitingLoggedAt >= 60_000) {
      this.waitingLoggedAt = now;
      this.log.warn('controller.caches_not_synced', {
        caches: key,
        reasons: reasons.join('; '),
        effect: 'nothing is acted on (no split started, drained or handed back) until these caches list',
        safeAction:
          'grant the controller list and watch on them (README "Install": its ClusterRole or namespaced Roles), or wait for the API server; /metrics queuesplit_controller_cache_synced says when',
      });
    }
    this.waitingFor = key;
    return true;
  }

  /** Starts a pass of each due workload not being passed, the longest waiting first, while a
   * slot is free; a pass that ends pokes the loop, which fills its slot. */
  private async tick(): Promise<void> {
    // The caches are read now: a change from here on is one these passes may not have seen.
    const passStarted = Date.now();
    if (this.waitForCaches()) return;
    const apiMissing = this.splitCache.apiMissing;
    const { valid, invalid } = apiMissing
      ? { valid: [], invalid: [] }
      : this.classified(this.splitCache.list() as unknown as QueueSplit[]);
    if ((apiMissing === true) !== this.apiMissing) {
      this.apiMissing = apiMissing === true;
      if (this.apiMissing)
        this.log.warn('controller.queuesplit_api_missing', {
          why: 'the QueueSplit CRD is not installed (deleting it deleted every split)',
          effect: 'workloads still in a split are handed back; no new split can be made',
          safeAction:
            'reinstall deploy/crd/queuesplit.crd.yaml to serve splits again, or finish the uninstall (README "Uninstall")',
        });
      else this.log.info('controller.queuesplit_api_back', {});
    }
    for (const { split, problem } of invalid) await this.refuse(split, problem);
    const groups = new Map<string, QueueSplit[]>();
    for (const split of valid) {
      const key = workloadKey(
        split.metadata.namespace ?? 'default',
        split.spec.workload.kind,
        split.spec.workload.name,
      );
      groups.set(key, [...(groups.get(key) ?? []), split]);
    }
    // Workloads with a persisted state but no QueueSplit left still need their handback.
    for (const key of await this.statefulWorkloads()) if (!groups.has(key)) groups.set(key, []);
    for (const key of this.coordinators.keys()) if (!groups.has(key)) groups.set(key, []);

    const now = Date.now();
    const due = [...groups]
      .filter(([key]) => !this.passes.has(key) && this.due.isDue(key, now))
      .sort(([a], [b]) => this.due.dueSince(a) - this.due.dueSince(b));
    // Workloads are independent (each coordinator owns its own documents; the API server arbitrates
    // what they share, such as ownership Leases), so due workloads are passed side by side: one
    // pass waits mostly on the API server, and in turn 200 workloads made a new split wait for
    // every other workload's pass before its own.
    for (const [key, splits] of due.slice(0, this.passes.free))
      this.passes.start(key, () => this.passWorkload(key, splits, passStarted));
  }

  private async passWorkload(key: string, splits: QueueSplit[], passStarted: number): Promise<void> {
    let coordinator = this.coordinators.get(key);
    if (!coordinator) {
      const [namespace, kind, name] = key.split('/') as [string, WorkloadKind, string];
      coordinator = new Coordinator(namespace, kind, name, this.settings, this.deps);
      this.coordinators.set(key, coordinator);
    }
    let failed = false;
    try {
      await coordinator.pass(splits, passStarted);
    } catch (err) {
      failed = true;
      this.log.error('workload.pass_failed', { workload: key, reason: describeError(err) });
    }
    clearTimeout(this.rechecks.get(key));
    this.rechecks.delete(key);
    if (coordinator.finished && splits.length === 0) {
      this.coordinators.delete(key);
      this.due.forget(key);
      this.workloadCache.forget(coordinator.kind, coordinator.namespace, coordinator.name);
    } else {
      // "At once" is at the next resync unless something of it changes: a pass that ends fills its
      // slot at once, so a moving workload would otherwise be passed back to back, each pass
      // reading its pods and workload from the API (a failed pass likewise).
      const next = failed ? 0 : coordinator.nextPassInMs(QUIET_RESYNC_MS);
      this.due.passed(key, passStarted, Math.max(next, this.settings.resyncMs));
      this.recheckWhenDue(key, coordinator.recheckInMs());
    }
  }

  /** A wait only the clock ends (the redirected pods' stable window) ends in a pass at once,
   * not at the next interval pass after it. */
  private recheckWhenDue(key: string, inMs: number | undefined): void {
    if (inMs === undefined) return;
    const timer = setTimeout(() => {
      this.rechecks.delete(key);
      this.due.touch(key);
      this.poke();
    }, inMs);
    timer.unref();
    this.rechecks.set(key, timer);
  }

  /** An invalid split gets a status that says why (once: unchanged statuses are not rewritten). */
  private async refuse(split: QueueSplit, problem: string): Promise<void> {
    const status = invalidSplitStatus(split, problem);
    try {
      if (!sameStatus(split.status, status)) {
        this.log.warn('split.invalid', {
          split: `${split.metadata.namespace}/${split.metadata.name}`,
          problem,
        });
        await this.splits.writeStatus(split, status);
      }
      // Deleted: let it go unless a workload still drains a route by its id.
      const draining = [...this.coordinators.values()].some((c) => c.hasRoute(routeIdOf(split)));
      if (split.metadata.deletionTimestamp && !draining) await this.splits.removeFinalizer(split);
    } catch (err) {
      this.log.error('split.status_failed', { reason: describeError(err) });
    }
  }

  /** Every QueueSplit validated, each only when it changed. */
  private classified(items: readonly QueueSplit[]): ClassifiedSplits {
    const each = this.validations.map(items);
    return { valid: each.flatMap((c) => c.valid), invalid: each.flatMap((c) => c.invalid) };
  }

  private async statefulWorkloads(): Promise<string[]> {
    return this.stateOwners.map(this.stateCache.list()).flatMap((key) => (key === undefined ? [] : [key]));
  }
}
const workloadKey = (namespace: string, kind: string, name: string) => `${namespace}/${kind}/${name}`;

/** The route id of an object that may not even have a spec (it failed validation). */
function routeIdOf(split: QueueSplit): string | undefined {
  const spec: unknown = split.spec;
  const routeId: unknown =
    typeof spec === 'object' && spec !== null ? (spec as { routeId?: unknown }).routeId : undefined;
  return typeof routeId === 'string' ? routeId : undefined;
}
