// Size bounds that keep a workload's documents inside one ConfigMap (1 MiB, MAX_STATE_BYTES):
// the state and the desired document share the state ConfigMap and grow with every route (its
// filter, its queues, and the session resources recorded in the inventory). With filters
// bounded by MAX_FILTER_BYTES (core/filter/model.ts) and at most MAX_QUEUES queues per workload, this
// many routes at their largest still fit; test/unit/core/documentLimits.test.ts builds exactly
// that worst case. A split beyond the cap is refused, never allowed to wedge the workload.

/**
 * Routes (developers' splits) one workload carries at once. This also caps the routes on any
 * one of its queues, since every route names at least one queue.
 */
export const MAX_ROUTES_PER_WORKLOAD = 12;
