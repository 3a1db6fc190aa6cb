// The controller's main loop: every pass lists QueueSplits, groups them by workload, and runs
// each workload's coordinator (also for workloads whose splits are all gone but whose state is
// not finished: a handback in progress). A watch on QueueSplits only makes passes come sooner.
import { setTimeout as sleep } from 'node:timers/promises';
import { CoreV1Api, Watch, type KubeConfig } from '@kubernetes/client-node';
import { STATE_KEY } from '../../core/agentProtocol';
import {
  QUEUE_SPLIT_GROUP,
  QUEUE_SPLIT_PLURAL,
  QUEUE_SPLIT_VERSION,
  type QueueSplit,
} from '../../core/crd/queueSplitSchema';
import { parseState } from '../../core/state/stateDocument';
import { describeError, type Logger } from '../engine/log';
import { AgentObjects, type AgentSettings } from './agentObjects';
import { Coordinator, type CoordinatorSettings } from './coordinator';
import { OwnershipLeases } from './ownership';
import { SplitObjects } from './splitObjects';
import { invalidSplitStatus, sameStatus } from './splitStatus';
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

export class Controller {
  private readonly coordinators = new Map<string, Coordinator>();
  /** The last pass found no QueueSplit API (logged once per change). */
  private apiMissing = false;
  private readonly splits: SplitObjects;
  private readonly deps: ConstructorParameters<typeof Coordinator>[4];
  private wake: (() => void) | undefined;
  private stopped = false;
  /** When the loop last began a pass: the liveness probe fails once it stops turning. */
  lastPassAt = Date.now();

  constructor(
    private readonly kc: KubeConfig,
    private readonly settings: ControllerSettings,
    private readonly log: Logger,
  ) {
    this.splits = new SplitObjects(kc, settings.watchNamespaces);
    this.deps = {
      kc,
      workloads: new Workloads(kc),
      agents: new AgentObjects(kc, settings.agent),
      splits: this.splits,
      ownership: new OwnershipLeases(kc),
      log,
    };
  }

  stop(): void {
    this.stopped = true;
    this.wake?.();
  }

  async run(): Promise<void> {
    void this.watch();
    while (!this.stopped) {
      const started = Date.now();
      this.lastPassAt = started;
      try {
        await this.pass();
      } catch (err) {
        this.log.error('controller.pass_failed', { reason: describeError(err) });
      }
      const wait = Math.max(0, this.settings.resyncMs - (Date.now() - started));
      await Promise.race([sleep(wait), new Promise<void>((resolve) => (this.wake = resolve))]);
    }
  }

  private async pass(): Promise<void> {
    const { valid, invalid, apiMissing } = await this.splits.list();
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

    for (const [key, splits] of groups) {
      let coordinator = this.coordinators.get(key);
      if (!coordinator) {
        const [namespace, kind, name] = key.split('/') as [string, WorkloadKind, string];
        coordinator = new Coordinator(namespace, kind, name, this.settings, this.deps);
        this.coordinators.set(key, coordinator);
      }
      try {
        await coordinator.pass(splits);
      } catch (err) {
        this.log.error('workload.pass_failed', { workload: key, reason: describeError(err) });
      }
      if (coordinator.finished && splits.length === 0) this.coordinators.delete(key);
    }
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

  private async statefulWorkloads(): Promise<string[]> {
    const core = this.kc.makeApiClient(CoreV1Api);
    const labelSelector = 'queuesplit.dev/state=true';
    const items = [];
    if (!this.settings.watchNamespaces)
      items.push(...(await core.listConfigMapForAllNamespaces({ labelSelector })).items);
    else
      for (const namespace of this.settings.watchNamespaces)
        items.push(...(await core.listNamespacedConfigMap({ namespace, labelSelector })).items);
    const keys: string[] = [];
    for (const cm of items) {
      const parsed = parseState(cm.data?.[STATE_KEY] ?? '');
      if (parsed.ok) {
        const w = parsed.value.workload;
        if (parsed.value.installId === this.settings.installId)
          keys.push(workloadKey(w.namespace, w.kind, w.name));
      }
    }
    return keys;
  }

  private async watch(): Promise<void> {
    const base = `/apis/${QUEUE_SPLIT_GROUP}/${QUEUE_SPLIT_VERSION}`;
    const paths = this.settings.watchNamespaces?.map(
      (namespace) => `${base}/namespaces/${namespace}/${QUEUE_SPLIT_PLURAL}`,
    ) ?? [`${base}/${QUEUE_SPLIT_PLURAL}`];
    await Promise.all(paths.map((path) => this.watchPath(path)));
  }

  private async watchPath(path: string): Promise<void> {
    while (!this.stopped) {
      await new Promise<void>((resolve) => {
        new Watch(this.kc)
          .watch(
            path,
            {},
            () => this.wake?.(),
            () => resolve(),
          )
          .catch(() => resolve());
      });
      await sleep(1000);
    }
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
