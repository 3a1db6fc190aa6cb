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
import { Workloads, type WorkloadKind } from './workloads';

export interface ControllerSettings extends CoordinatorSettings {
  agent: AgentSettings;
  resyncMs: number;
}

export class Controller {
  private readonly coordinators = new Map<string, Coordinator>();
  private readonly splits: SplitObjects;
  private readonly deps: ConstructorParameters<typeof Coordinator>[4];
  private wake: (() => void) | undefined;
  private stopped = false;

  constructor(
    private readonly kc: KubeConfig,
    private readonly settings: ControllerSettings,
    private readonly log: Logger,
  ) {
    this.splits = new SplitObjects(kc);
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
    const { valid, invalid } = await this.splits.list();
    for (const { split, problem } of invalid) {
      this.log.warn('split.invalid', {
        split: `${split.metadata.namespace}/${split.metadata.name}`,
        problem,
      });
    }
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

  private async statefulWorkloads(): Promise<string[]> {
    const core = this.kc.makeApiClient(CoreV1Api);
    const list = await core.listConfigMapForAllNamespaces({ labelSelector: 'queuesplit.dev/state=true' });
    const keys: string[] = [];
    for (const cm of list.items) {
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
    const path = `/apis/${QUEUE_SPLIT_GROUP}/${QUEUE_SPLIT_VERSION}/${QUEUE_SPLIT_PLURAL}`;
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
