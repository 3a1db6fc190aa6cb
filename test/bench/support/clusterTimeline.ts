// What happened in one namespace, and when (Date.now() at the moment each watch event arrived):
// the pods' milestones (created, scheduled, started, Ready, terminating, gone), each QueueSplit's
// status phase and deletion, and the workload phases the controller persists in its state
// document (docs/design.md §6). The split-path bench cuts a split's lifecycle into phases with it.
// Watch events, not polls: a phase of a few hundred milliseconds is seen, and its time is exact
// to the watch's delivery delay rather than a poll period.
import { Watch, type KubeConfig, type V1ConfigMap, type V1Pod } from '@kubernetes/client-node';
import { STATE_KEY } from '../../../core/agentProtocol';
import type { QueueSplit } from '../../../core/crd/queueSplitSchema';
import { queueSplitApi } from '../../support/splits';

export type PodRole = 'agent' | 'app';
export type PodMilestone = 'created' | 'scheduled' | 'started' | 'ready' | 'terminating' | 'gone';

export interface PodSeen {
  name: string;
  role: PodRole;
  at: Partial<Record<PodMilestone, number>>;
}

export interface Transition {
  /** The QueueSplit's owner, or the workload for state phases. */
  who: string;
  /** A status phase, `created` or `deleted` (splits); a workload phase or `removed` (state). */
  phase: string;
  at: number;
}

export class ClusterTimeline {
  readonly pods = new Map<string, PodSeen>();
  readonly splits: Transition[] = [];
  readonly states: Transition[] = [];
  private readonly aborts: AbortController[] = [];
  private stopped = false;
  private readonly lastSplitPhase = new Map<string, string>();
  private lastState = '';

  constructor(
    private readonly kc: KubeConfig,
    private readonly namespace: string,
    private readonly workload: string,
  ) {}

  /** Starts the three watches; resolves once each has been accepted by the API server. */
  async start(): Promise<void> {
    const ns = this.namespace;
    await Promise.all([
      this.watch(`/api/v1/namespaces/${ns}/pods`, {}, (type, pod: V1Pod) => this.onPod(type, pod)),
      this.watch(
        `/apis/${queueSplitApi.group}/${queueSplitApi.version}/namespaces/${ns}/${queueSplitApi.plural}`,
        {},
        (type, split: QueueSplit) => this.onSplit(type, split),
      ),
      this.watch(
        `/api/v1/namespaces/${ns}/configmaps`,
        { labelSelector: `queuesplit.dev/state=true,queuesplit.dev/workload=${this.workload}` },
        (type, cm: V1ConfigMap) => this.onState(type, cm),
      ),
    ]);
  }

  stop(): void {
    this.stopped = true;
    for (const a of this.aborts) a.abort();
  }

  /** The first time `who` (a split's owner) reached `phase`, at or after `after`. */
  splitAt(who: string, phase: string, after = 0): number | undefined {
    return this.splits.find((t) => t.who === who && t.phase === phase && t.at >= after)?.at;
  }

  /** The first time the workload's state document showed `phase`, at or after `after`. */
  stateAt(phase: string, after = 0): number | undefined {
    return this.states.find((t) => t.phase === phase && t.at >= after)?.at;
  }

  /** Pods of `role` first created at or after `after`, oldest first. */
  podsCreatedAfter(role: PodRole, after: number): PodSeen[] {
    return [...this.pods.values()]
      .filter((p) => p.role === role && (p.at.created ?? 0) >= after)
      .sort((a, b) => a.at.created! - b.at.created!);
  }

  /** Pods of `role` that existed before `before`. */
  podsCreatedBefore(role: PodRole, before: number): PodSeen[] {
    return [...this.pods.values()].filter((p) => p.role === role && (p.at.created ?? 0) < before);
  }

  private async watch<T>(
    path: string,
    query: Record<string, string>,
    handle: (type: string, obj: T) => void,
  ): Promise<void> {
    const connect = async (): Promise<void> => {
      if (this.stopped) return;
      this.aborts.push(
        await new Watch(this.kc).watch(
          path,
          query,
          (type: string, obj: T) => handle(type, obj),
          // A watch ends now and then (server timeout): resume it; the re-list repeats ADDED
          // events, which only ever keep the first time seen.
          () => void setTimeout(() => void connect().catch(() => undefined), 100),
        ),
      );
    };
    await connect();
  }

  private onPod(type: string, pod: V1Pod): void {
    const now = Date.now();
    const name = pod.metadata?.name ?? '';
    const labels = pod.metadata?.labels ?? {};
    const role: PodRole = labels['queuesplit.dev/component'] === 'queue-agent' ? 'agent' : 'app';
    if (role === 'app' && labels.app !== this.workload) return;
    let seen = this.pods.get(name);
    if (!seen) this.pods.set(name, (seen = { name, role, at: {} }));
    const mark = (m: PodMilestone, when: boolean) => {
      if (when && seen.at[m] === undefined) seen.at[m] = now;
    };
    mark('created', true);
    mark('scheduled', Boolean(pod.spec?.nodeName));
    const statuses = pod.status?.containerStatuses ?? [];
    mark('started', statuses.length > 0 && statuses.every((c) => c.state?.running));
    mark('ready', pod.status?.conditions?.some((c) => c.type === 'Ready' && c.status === 'True') ?? false);
    mark('terminating', Boolean(pod.metadata?.deletionTimestamp));
    mark('gone', type === 'DELETED');
  }

  private onSplit(type: string, split: QueueSplit): void {
    const who = split.spec?.owner ?? split.metadata.name;
    const phase = type === 'DELETED' ? 'deleted' : (split.status?.phase ?? 'created');
    if (this.lastSplitPhase.get(who) === phase) return;
    this.lastSplitPhase.set(who, phase);
    this.splits.push({ who, phase, at: Date.now() });
  }

  private onState(type: string, cm: V1ConfigMap): void {
    const text = type === 'DELETED' ? undefined : cm.data?.[STATE_KEY];
    const phase = text ? String((JSON.parse(text) as { phase?: string }).phase ?? '') : 'removed';
    if (phase === this.lastState) return;
    this.lastState = phase;
    this.states.push({ who: this.workload, phase, at: Date.now() });
  }
}
