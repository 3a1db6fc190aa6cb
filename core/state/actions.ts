// What the phase machine asks the controller to do, as data. The controller runs them in order;
// every one is idempotent, so re-running them after a restart is safe. `persistState` comes first
// whenever the state changed: the state is durable before any step it describes starts.
import type { FieldError } from '../result';

export type SplitAction =
  | { type: 'persistState' }
  /** The controller's per-workload Lease: one controller acts on a workload at a time. */
  | { type: 'acquireLease' }
  /** The finalizer on the workload that guards its deletion while split. */
  | { type: 'ensureFinalizer' }
  | { type: 'ensureQueueAgent'; generation: number }
  // activation
  | { type: 'prepareQueues'; queues: string[] }
  | { type: 'observeWorkload' }
  | { type: 'scaleWorkload'; replicas: number; resourceVersion?: string; from?: number }
  | { type: 'awaitQuiesce'; queues: string[] }
  | { type: 'startPump'; queues: string[]; generation: number }
  | { type: 'applyOverrides'; queues: string[]; generation: number }
  | { type: 'awaitRollout'; generation: number; overriddenQueues: string[] }
  // abort
  | { type: 'stopPump'; queues: string[] }
  | { type: 'rollbackQueues'; queues: string[] }
  | { type: 'removeOverrides'; queues: string[]; generation: number }
  // handback
  | { type: 'stopSourceAtFrontier'; queues: string[] }
  | { type: 'awaitAppDrain'; queues: string[] }
  | { type: 'verifyHandbackQuiesce'; queues: string[] }
  | { type: 'commitHandoff'; queues: string[] }
  | { type: 'cleanupQueues'; queues: string[]; resources: string[] }
  | { type: 'releaseLease' }
  | { type: 'reapQueueAgent' }
  // routes
  | { type: 'prepareRoute'; routeId: string; queues: string[] }
  | { type: 'publishRoutes'; generation: number }
  | { type: 'drainRoute'; routeId: string; queues: string[]; generation: number }
  /** `reason` is the CamelCase reason the split's status shows (e.g. FilterOverlaps). */
  | { type: 'rejectRoute'; routeId: string; errors: FieldError[]; reason: string }
  | { type: 'failRoute'; routeId: string; reason: string }
  // reporting
  | { type: 'reportDegraded'; reason: string; nextAction: string };

export type SplitActionType = SplitAction['type'];
