// List-and-watch caches of the objects the controller reads every pass (client-node's
// informer), so a pass reads memory instead of the API server, and a change wakes the workload
// it concerns. One cache may span several namespaces (a namespaced install watches each).
// client-node's informer stops on an error: this restarts it with backoff, and says whether the
// API exists at all (a 404: the CRD is gone). A cache that has never listed is empty, not "there
// are none": `synced` (client-go's HasSynced) says whether it ever listed, and the controller
// acts on nothing until it has (docs/design.md §6, "Caches").
import {
  makeInformer,
  type KubeConfig,
  type KubernetesListObject,
  type KubernetesObject,
} from '@kubernetes/client-node';
import { describeError, type Logger } from '../log';
import { isNotFound } from './client';

type Informer<T extends KubernetesObject> = ReturnType<typeof makeInformer<T>>;

export interface WatchedPath<T extends KubernetesObject> {
  /** The API path of the collection, e.g. /api/v1/configmaps or /api/v1/namespaces/x/configmaps. */
  path: string;
  list: () => Promise<KubernetesListObject<T>>;
}

const RESTART_MIN_MS = 500;
const RESTART_MAX_MS = 10_000;
/** While a cache keeps failing, its warning is repeated at most this often. */
const FAILING_LOG_EVERY_MS = 60_000;

/** What a cache reports about itself (the controller's metrics). */
export interface CacheObserver {
  synced(cache: string, synced: boolean): void;
  failed(cache: string): void;
}

export class InformerCache<T extends KubernetesObject> {
  private readonly informers: Informer<T>[];
  private readonly synced: boolean[];
  private readonly missing: boolean[];
  private readonly failures: number[];
  /** Listed at least once (stays true through later watch errors: the contents are stale, not empty). */
  private readonly everSynced: boolean[];
  private readonly lastError: (string | undefined)[];
  private readonly lastWarnedAt: number[];
  private stopped = false;

  constructor(
    kc: KubeConfig,
    private readonly what: string,
    private readonly paths: readonly WatchedPath<T>[],
    private readonly log: Logger,
    /** Every add, update and delete (after the cache has it). */
    onChange: (obj: T) => void,
    labelSelector?: string,
    private readonly observer?: CacheObserver,
  ) {
    this.informers = paths.map((p) => makeInformer<T>(kc, p.path, p.list, labelSelector));
    this.synced = paths.map(() => false);
    this.missing = paths.map(() => false);
    this.failures = paths.map(() => 0);
    this.everSynced = paths.map(() => false);
    this.lastError = paths.map(() => undefined);
    this.lastWarnedAt = paths.map(() => 0);
    this.observer?.synced(what, false);
    this.informers.forEach((informer, i) => {
      for (const verb of ['add', 'update', 'delete'] as const) informer.on(verb, onChange);
      informer.on('error', (err: unknown) => {
        this.synced[i] = false;
        this.missing[i] = isNotFound(err);
        this.failures[i] = (this.failures[i] ?? 0) + 1;
        this.lastError[i] = describeError(err).split('\n')[0]!.slice(0, 300);
        this.observer?.failed(what);
        if (this.stopped) return;
        const backoff = Math.min(
          RESTART_MAX_MS,
          RESTART_MIN_MS * 2 ** Math.min((this.failures[i] ?? 1) - 1, 5),
        );
        const now = Date.now();
        if (!this.missing[i] && now - (this.lastWarnedAt[i] ?? 0) >= FAILING_LOG_EVERY_MS) {
          this.lastWarnedAt[i] = now;
          this.log.warn('cache.restart', {
            cache: this.what,
            path: this.pathOf(i),
            reason: this.lastError[i],
            failures: this.failures[i],
            everSynced: this.everSynced[i],
            inMs: backoff,
          });
        }
        setTimeout(() => void this.run(i), backoff).unref();
      });
    });
  }

  /**
   * Lists and starts watching (client-node's start resolves once both are done, or once a
   * failure went to 'error', which schedules the next try).
   */
  private async run(i: number): Promise<void> {
    if (this.stopped) return;
    const before = this.failures[i];
    await this.informers[i]!.start().catch(() => undefined);
    if (this.failures[i] === before && !this.stopped) {
      if ((this.failures[i] ?? 0) > 0)
        this.log.info('cache.recovered', {
          cache: this.what,
          path: this.pathOf(i),
          afterFailures: this.failures[i],
        });
      this.synced[i] = true;
      this.everSynced[i] = true;
      this.missing[i] = false;
      this.failures[i] = 0;
      this.lastError[i] = undefined;
      this.lastWarnedAt[i] = 0;
      if (this.synced.every(Boolean)) this.observer?.synced(this.what, true);
    }
  }

  private pathOf(i: number): string {
    return this.paths[i]?.path ?? '';
  }

  /** Starts every informer; resolves once each has listed once (or failed: it keeps retrying). */
  async start(): Promise<void> {
    await Promise.all(this.informers.map((_, i) => this.run(i)));
  }

  /** Every informer has listed and watches. */
  get ready(): boolean {
    return this.synced.every(Boolean);
  }

  /** Every informer has listed at least once: its contents mean something (maybe stale). */
  get hasSynced(): boolean {
    return this.everSynced.every(Boolean);
  }

  /** Why the collections that never listed could not (for the controller's report). */
  get unsyncedReasons(): string[] {
    return this.everSynced.flatMap((ok, i) => (ok ? [] : [this.lastError[i] ?? 'not listed yet']));
  }

  /** Some collection answered 404: its API (a CRD) is not installed. */
  get apiMissing(): boolean {
    return this.missing.some(Boolean);
  }

  list(): T[] {
    return this.informers.flatMap((informer) => [...informer.list()]);
  }

  get(namespace: string, name: string): T | undefined {
    for (const informer of this.informers) {
      const found = informer.get(name, namespace);
      if (found) return found;
    }
    return undefined;
  }

  async stop(): Promise<void> {
    this.stopped = true;
    await Promise.all(this.informers.map((i) => i.stop().catch(() => undefined)));
  }
}
