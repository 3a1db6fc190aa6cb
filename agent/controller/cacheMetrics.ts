// The controller's caches on /metrics: whether each has listed (a 0 means the controller is
// acting on nothing it reads from that cache, docs/design.md §6 "Caches") and how often their
// list or watch failed.
import { Counter, Gauge, type Registry } from 'prom-client';
import type { CacheObserver } from '../kube/informers';

export function cacheMetrics(registry: Registry): CacheObserver {
  const synced = new Gauge({
    name: 'queuesplit_controller_cache_synced',
    help: '1 once every collection of the cache has listed, else 0 (nothing is acted on until the QueueSplit and state caches are 1)',
    labelNames: ['cache'],
    registers: [registry],
  });
  const failures = new Counter({
    name: 'queuesplit_controller_cache_failures_total',
    help: "List or watch failures of the controller's caches (403: RBAC, 429/5xx: the API server)",
    labelNames: ['cache'],
    registers: [registry],
  });
  return {
    synced: (cache, ok) => synced.set({ cache }, ok ? 1 : 0),
    failed: (cache) => failures.inc({ cache }),
  };
}
