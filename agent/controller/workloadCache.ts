// The split workloads (Deployments, StatefulSets) as a list-and-watch cache, so a pass starts
// from memory instead of a GET per workload per pass, and a change to a workload wakes its
// coordinator (docs/design.md §6, "Caches"). A cached copy is used only when it is at least as new
// as anything the controller itself last wrote or read of that workload; otherwise (or while the
// cache is not listed and watching) the pass reads it from the API as before.
import { AppsV1Api, type KubeConfig, type KubernetesObject } from '@kubernetes/client-node';
import type { Logger } from '../log';
import { InformerCache, type CacheObserver, type WatchedPath } from '../kube/informers';
import type { Workload, WorkloadKind } from './workloads';

/**
 * Whether a cached copy may stand in for a GET: its resourceVersion is not older than the newest
 * one the controller has seen of the object (its own writes' answers, its own reads). Kubernetes
 * tells clients not to order resourceVersions; an etcd-backed API server's are etcd revisions
 * (integers, increasing), and anything that does not look like one is never trusted here, so a
 * server with other versions gets a GET every pass, as before.
 */
export function cachedIsFresh(cached: string | undefined, newestSeen: string | undefined): boolean {
  if (cached === undefined || !/^\d{1,30}$/.test(cached)) return false;
  if (newestSeen === undefined) return true;
  if (!/^\d{1,30}$/.test(newestSeen)) return false;
  return BigInt(cached) >= BigInt(newestSeen);
}

const key = (kind: string, namespace: string, name: string) => `${namespace}/${kind}/${name}`;

export class WorkloadCache {
  private readonly caches: Record<WorkloadKind, InformerCache<KubernetesObject>>;
  /** The newest resourceVersion the controller wrote or read of each workload. */
  private readonly newest = new Map<string, string>();

  constructor(
    kc: KubeConfig,
    namespaces: readonly string[] | undefined,
    log: Logger,
    /** Every add, update and delete of a workload (after the cache has it). */
    onChange: (kind: WorkloadKind, namespace: string, name: string) => void,
    observer?: CacheObserver,
  ) {
    const apps = kc.makeApiClient(AppsV1Api);
    const paths = (plural: 'deployments' | 'statefulsets'): WatchedPath<KubernetesObject>[] =>
      (namespaces ?? [undefined]).map((namespace) => ({
        path: `/apis/apps/v1${namespace ? `/namespaces/${namespace}` : ''}/${plural}`,
        list: () =>
          plural === 'deployments'
            ? namespace
              ? apps.listNamespacedDeployment({ namespace })
              : apps.listDeploymentForAllNamespaces()
            : namespace
              ? apps.listNamespacedStatefulSet({ namespace })
              : apps.listStatefulSetForAllNamespaces(),
      }));
    const cache = (kind: WorkloadKind, plural: 'deployments' | 'statefulsets') =>
      new InformerCache<KubernetesObject>(
        kc,
        plural,
        paths(plural),
        log,
        (obj) => onChange(kind, obj.metadata?.namespace ?? '', obj.metadata?.name ?? ''),
        undefined,
        observer,
      );
    this.caches = {
      Deployment: cache('Deployment', 'deployments'),
      StatefulSet: cache('StatefulSet', 'statefulsets'),
    };
  }

  async start(): Promise<void> {
    await Promise.all(Object.values(this.caches).map((c) => c.start()));
  }

  async stop(): Promise<void> {
    await Promise.all(Object.values(this.caches).map((c) => c.stop()));
  }

  /** The controller wrote or read this version of the workload (a newer one replaces it). */
  saw(
    kind: WorkloadKind,
    workload: { metadata?: { namespace?: string; name?: string; resourceVersion?: string } } | undefined,
  ): void {
    const m = workload?.metadata;
    if (!m?.namespace || !m.name || !m.resourceVersion) return;
    const k = key(kind, m.namespace, m.name);
    const before = this.newest.get(k);
    if (before === undefined || !cachedIsFresh(before, m.resourceVersion))
      this.newest.set(k, m.resourceVersion);
  }

  /**
   * The cached workload, or undefined when the cache cannot answer: not listed and watching,
   * older than what the controller has seen, or without the workload (absent may only mean its
   * creation has not arrived yet, and "not found" rejects a split: that takes a GET).
   */
  get(kind: WorkloadKind, namespace: string, name: string): Workload | undefined {
    const cache = this.caches[kind];
    if (!cache.ready) return undefined;
    const cached = cache.get(namespace, name) as Workload | undefined;
    if (
      !cached ||
      !cachedIsFresh(cached.metadata?.resourceVersion, this.newest.get(key(kind, namespace, name)))
    )
      return undefined;
    // A copy: a pass edits what it reads (addFinalizer); the cache's object must stay as served.
    // A listed item carries no apiVersion and kind (a GET's answer does): a replace sends them.
    return { ...structuredClone(cached), apiVersion: 'apps/v1', kind };
  }

  /** The workload is gone for good (its coordinator is forgotten). */
  forget(kind: WorkloadKind, namespace: string, name: string): void {
    this.newest.delete(key(kind, namespace, name));
  }
}
