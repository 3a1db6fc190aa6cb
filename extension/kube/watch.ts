// Live view of one namespace: watches (list + watch, through @kubernetes/client-node informers)
// on QueueSplits, Deployments and StatefulSets. Started when the tree's context node is
// expanded (or a command needs live state), stopped when nobody holds it. A failed watch
// restarts with backoff; the last good state stays visible meanwhile, with the error.
import {
  makeInformer,
  type Informer,
  type KubernetesListObject,
  type KubernetesObject,
  type ObjectCache,
  type V1Deployment,
  type V1StatefulSet,
  AppsV1Api,
  CustomObjectsApi,
} from '@kubernetes/client-node';
import {
  QUEUE_SPLIT_GROUP,
  QUEUE_SPLIT_PLURAL,
  QUEUE_SPLIT_VERSION,
  type QueueSplit,
} from '../../core/crd/queueSplitSchema';
import type { WorkloadLike } from '../../core/queueConfig/podTemplate';
import type { WorkloadInfo } from '../model/types';
import { isAnnotated, summarizeWorkload } from '../model/workloads';
import { failureFacts, type KubeConnection } from './connection';
import { kubeProblem, type KubeProblem } from './errors';

export interface NamespaceState {
  workloads: WorkloadInfo[];
  splits: QueueSplit[];
  /** True until every watch has delivered its first list. */
  loading: boolean;
  /** The latest watch failure, cleared when the watch works again. */
  error?: KubeProblem;
}

type Cached<T extends KubernetesObject> = Informer<T> & ObjectCache<T>;

const RESTART_MIN_MS = 1_000;
const RESTART_MAX_MS = 30_000;

export class NamespaceWatch {
  private readonly informers: {
    name: string;
    informer: Cached<KubernetesObject>;
    synced: boolean;
    failed: boolean;
    backoff: number;
  }[] = [];
  private stopped = false;
  private timer: NodeJS.Timeout | undefined;
  private restartTimers = new Set<NodeJS.Timeout>();
  private state: NamespaceState = { workloads: [], splits: [], loading: true };
  private readonly listeners = new Set<(state: NamespaceState) => void>();

  constructor(
    private readonly connection: KubeConnection,
    private readonly log: (line: string) => void,
  ) {
    const { kc, target } = connection;
    const ns = target.namespace;
    const custom = kc.makeApiClient(CustomObjectsApi);
    const apps = kc.makeApiClient(AppsV1Api);
    this.add(
      'queuesplits',
      makeInformer<KubernetesObject>(
        kc,
        `/apis/${QUEUE_SPLIT_GROUP}/${QUEUE_SPLIT_VERSION}/namespaces/${ns}/${QUEUE_SPLIT_PLURAL}`,
        async () =>
          (await custom.listNamespacedCustomObject({
            group: QUEUE_SPLIT_GROUP,
            version: QUEUE_SPLIT_VERSION,
            namespace: ns,
            plural: QUEUE_SPLIT_PLURAL,
          })) as KubernetesListObject<KubernetesObject>,
      ),
    );
    this.add(
      'deployments',
      makeInformer<KubernetesObject>(
        kc,
        `/apis/apps/v1/namespaces/${ns}/deployments`,
        () =>
          apps.listNamespacedDeployment({ namespace: ns }) as Promise<KubernetesListObject<KubernetesObject>>,
      ),
    );
    this.add(
      'statefulsets',
      makeInformer<KubernetesObject>(
        kc,
        `/apis/apps/v1/namespaces/${ns}/statefulsets`,
        () =>
          apps.listNamespacedStatefulSet({ namespace: ns }) as Promise<
            KubernetesListObject<KubernetesObject>
          >,
      ),
    );
  }

  get namespace(): string {
    return this.connection.target.namespace;
  }

  get current(): NamespaceState {
    return this.state;
  }

  onChange(listener: (state: NamespaceState) => void): { dispose(): void } {
    this.listeners.add(listener);
    return { dispose: () => this.listeners.delete(listener) };
  }

  private add(name: string, informer: Cached<KubernetesObject>): void {
    const entry = { name, informer, synced: false, failed: false, backoff: RESTART_MIN_MS };
    this.informers.push(entry);
    const changed = () => this.schedule();
    informer.on('add', changed);
    informer.on('update', changed);
    informer.on('delete', changed);
    informer.on('connect', () => {
      entry.backoff = RESTART_MIN_MS;
    });
    informer.on('error', (err: unknown) => {
      entry.failed = true;
      if (this.stopped) return;
      const problem = kubeProblem(err, {
        verb: 'watch',
        resource: name === 'queuesplits' ? `${QUEUE_SPLIT_PLURAL}.${QUEUE_SPLIT_GROUP}` : `${name}.apps`,
        namespace: this.connection.target.namespace,
        ...failureFacts(this.connection),
      });
      this.log(`watch of ${name} failed (${problem.message}); restarting in ${entry.backoff / 1000}s`);
      // Said once until the watch recovers: each informer's retries refuse again (in turns,
      // naming its own resource), and every redraw makes VS Code drop the rows' handles for a
      // moment, so an inline action clicked then would run without its row.
      if (this.state.error === undefined) {
        this.state = { ...this.state, error: problem };
        this.emit();
      }
      const timer = setTimeout(() => {
        this.restartTimers.delete(timer);
        if (!this.stopped) void this.startOne(entry);
      }, entry.backoff);
      this.restartTimers.add(timer);
      entry.backoff = Math.min(RESTART_MAX_MS, entry.backoff * 2);
    });
  }

  private async startOne(entry: (typeof this.informers)[number]): Promise<void> {
    try {
      entry.failed = false;
      await entry.informer.start();
      if (entry.failed) return;
      entry.synced = true;
      if (this.state.error !== undefined && this.informers.every((i) => i.synced)) {
        this.state = { ...this.state, error: undefined };
      }
      this.schedule();
    } catch {
      // reported through the informer's error callback
    }
  }

  async start(): Promise<void> {
    this.log(`watching ${this.connection.target.context}/${this.connection.target.namespace}`);
    await Promise.all(this.informers.map((entry) => this.startOne(entry)));
    this.recompute();
  }

  private schedule(): void {
    if (this.timer !== undefined || this.stopped) return;
    this.timer = setTimeout(() => {
      this.timer = undefined;
      this.recompute();
    }, 100);
  }

  private recompute(): void {
    if (this.stopped) return;
    const byName = new Map(this.informers.map((i) => [i.name, i.informer]));
    const splits = [...(byName.get('queuesplits')?.list() ?? [])] as unknown as QueueSplit[];
    const deployments = (byName.get('deployments')?.list() ?? []) as V1Deployment[];
    const statefulSets = (byName.get('statefulsets')?.list() ?? []) as V1StatefulSet[];
    const workloads = [
      ...deployments
        .filter((d) => isAnnotated(d as WorkloadLike))
        .map((d) => summarizeWorkload('Deployment', d as WorkloadLike)),
      ...statefulSets
        .filter((s) => isAnnotated(s as WorkloadLike))
        .map((s) => summarizeWorkload('StatefulSet', s as WorkloadLike)),
    ];
    const loading = !this.informers.every((i) => i.synced);
    this.state = { ...this.state, workloads, splits, loading };
    this.emit();
  }

  private emit(): void {
    for (const listener of this.listeners) listener(this.state);
  }

  async stop(): Promise<void> {
    this.stopped = true;
    if (this.timer !== undefined) clearTimeout(this.timer);
    for (const timer of this.restartTimers) clearTimeout(timer);
    this.restartTimers.clear();
    this.listeners.clear();
    await Promise.all(this.informers.map((i) => i.informer.stop().catch(() => undefined)));
  }
}
