// What the controller feeds the phase machine: results of the steps it ran, route changes from
// QueueSplit objects and leases, agent reports, operator requests, and its own restart.
import type { HeaderFilter } from '../filter';
import type { WorkloadPhase } from './phases';

export interface RouteRequest {
  routeId: string;
  owner: string;
  queues: readonly string[];
  filter: HeaderFilter;
  leaseExpiresAt: string;
  /** The QueueSplit's session public key, passed on to the queue-agent (core/sessionStream.ts). */
  publicKey?: string;
  /** The QueueSplit's metadata.uid: the route belongs to that object only. */
  splitUid?: string;
}

/** A resource a step had to keep (no loss-proof delete, or not verifiably empty). */
export interface KeptResource {
  name: string;
  reason: string;
}

export type SplitEvent =
  // routes
  | { type: 'routeRequested'; route: RouteRequest }
  | { type: 'routeDeleted'; routeId: string }
  | { type: 'leaseExpired'; routeId: string }
  | { type: 'leaseRenewed'; routeId: string; expiresAt: string }
  | { type: 'routeShadowsReady'; routeId: string }
  | { type: 'routeAcked'; routeId: string; generation: number }
  | {
      type: 'routeDrained';
      routeId: string;
      proven: boolean;
      evidence: string;
      kept?: readonly KeptResource[];
    }
  | { type: 'routeStepFailed'; routeId: string; reason: string }
  | { type: 'routeTimedOut'; routeId: string }
  // workload steps
  | { type: 'workloadObserved'; replicas: number; resourceVersion: string }
  /** The quiesce's scale met a resourceVersion conflict written by the workload's autoscaler
   * (docs/design.md, "Autoscaled workloads"): nothing was scaled, so the count is read again. */
  | { type: 'scaleRaced' }
  | { type: 'stepSucceeded'; phase: WorkloadPhase; queue?: string; checkpoint?: unknown }
  | {
      type: 'proofReported';
      phase: WorkloadPhase;
      queue?: string;
      proven: boolean;
      evidence: string;
      kept?: readonly KeptResource[];
      checkpoint?: unknown;
    }
  /** `nothingChanged`: the queue-agent refused the queue before touching the broker (PREPARING's
   * preflight, core/agentProtocol.ts): the split is refused, nothing of the queue needs a rollback. */
  | { type: 'stepFailed'; phase: WorkloadPhase; queue?: string; reason: string; nothingChanged?: true }
  | { type: 'stepTimedOut'; phase: WorkloadPhase; queue?: string }
  // agent, operator, controller
  | { type: 'faultReported'; queue?: string; reason: string }
  | { type: 'abortRequested'; reason: string }
  | { type: 'retryRequested'; routeId?: string }
  | { type: 'restarted' };

export type SplitEventType = SplitEvent['type'];

/** Every event type, for exhaustive tests and for tools that list them. */
export const SPLIT_EVENT_TYPES = [
  'routeRequested',
  'routeDeleted',
  'leaseExpired',
  'leaseRenewed',
  'routeShadowsReady',
  'routeAcked',
  'routeDrained',
  'routeStepFailed',
  'routeTimedOut',
  'workloadObserved',
  'scaleRaced',
  'stepSucceeded',
  'proofReported',
  'stepFailed',
  'stepTimedOut',
  'faultReported',
  'abortRequested',
  'retryRequested',
  'restarted',
] as const satisfies readonly SplitEventType[];
