// The contract between the controller and a workload's queue-agent (docs/design.md §2): the controller
// writes a desired document into the state ConfigMap; the agent writes what it observed into
// its own status ConfigMap. Level-triggered: each side re-reads the whole document and every
// step is idempotent, so a lost update or a restart on either side is harmless.
import type { HeaderFilter } from './filter';
import type { Provider } from './providers';
import type { ProviderTypesOf } from './providers/registry';
import type { TlsBlock } from './queueConfig/blocks';
import type { EnvRole } from './queueConfig/resolvedTypes';
import type { WorkloadPhase } from './state/phases';

export const DESIRED_KEY = 'desired.json';
export const OBSERVED_KEY = 'observed.json';
export const STATE_KEY = 'state.json';
/** Versions of the two documents (schemas and checks: core/agentDocuments.ts). */
export const DESIRED_API_VERSION = 'queuesplit.dev/desired/v1';
export const OBSERVED_API_VERSION = 'queuesplit.dev/observed/v1';
/** Key of the cleanup ConfigMap a handback leaves when it had to keep broker resources. */
export const CLEANUP_KEY = 'pending.json';

/** Where a queue's connection settings live in the agent pod's env (names only, never values),
 * by its provider's env roles. */
export type PlanEnv<R extends string> = { [K in R]?: string };

/** The env of a plan of any provider. */
export type AgentQueueEnv = PlanEnv<Exclude<EnvRole, 'dependency'>>;

/** The resource names every plan carries. Optional beyond the application shadow: the agent
 * refuses a plan whose names differ from the provider's (core/agentDocuments.ts), and the engine
 * one that lacks what it needs. */
export interface PlanNamesBase {
  appShadow: string;
  /** The group the redirected application consumes its shadow with, where consumers have one. */
  appShadowGroup?: string;
}

/** What every provider's plan has; each adds its own fields (core/providers/<provider>/plan.ts). */
export interface QueuePlanBase<R extends string> {
  name: string;
  /** The literal topic or queue the workload consumes. */
  source: string;
  tls?: TlsBlock;
  env: PlanEnv<R>;
  epoch: number;
  /** Resource names recorded in the controller's state for this activation epoch. */
  names: PlanNamesBase;
  /** The workload phase whose step this queue must run now (absent: nothing to do). */
  step?: WorkloadPhase;
  /** Opaque handoff data from the queue's STOPPING_SOURCE step, for COMMITTING_HANDOFF. */
  handoff?: unknown;
  /** The engine checkpoint last recorded, for `recover` after an agent restart. */
  checkpoint?: unknown;
}

/** The plan of a queue on provider `P`. */
export type QueuePlanOf<P extends Provider> = ProviderTypesOf<P>['plan'];

/** What a queue-agent does for one logical queue: one shape per provider. */
export type AgentQueuePlan = QueuePlanOf<Provider>;

/** A route's session shadow on one queue, with the session and drain groups where consumers
 * have groups. */
export interface RouteShadow {
  shadow: string;
  sessionGroup?: string;
  drainGroup?: string;
}

export interface AgentRoute {
  routeId: string;
  filter: HeaderFilter;
  queues: string[];
  /** ATTACHING and ACTIVE routes are in the table; DRAINING ones are out and get drained. */
  phase: 'ATTACHING' | 'ACTIVE' | 'DRAINING';
  generation: number;
  /** Per queue: the session shadow (and groups). */
  shadows: Record<string, RouteShadow>;
  /** The QueueSplit's session public key (core/sessionSecret.ts): the agent streams this route's
   * messages only to the sidecar that signs its challenge with the key. Absent: no stream (env
   * mode, or a split made before public keys). */
  publicKey?: string;
}

export interface DesiredState {
  apiVersion: typeof DESIRED_API_VERSION;
  /** `<installId>/<workload uid>`: with each queue's epoch, it determines every broker name. */
  activationId: string;
  generation: number;
  phase: WorkloadPhase;
  queues: AgentQueuePlan[];
  routes: AgentRoute[];
}

export type StepOutcome =
  | {
      kind: 'done';
      checkpoint?: unknown;
      handoff?: unknown;
      kept?: { name: string; reason: string }[];
      evidence: string;
    }
  | { kind: 'pending'; reason: string }
  | { kind: 'degraded'; reason: string; safeAction: string }
  /** `nothingChanged`: the engine refused its input before it touched the broker, and no agent
   * ever reported the queue prepared in this activation (docs/design.md §6 "Refused activations"). */
  | { kind: 'rejected'; reason: string; nothingChanged?: true };

export interface ObservedQueue {
  /** The step the outcome belongs to, and the desired generation it was run under. */
  step: WorkloadPhase;
  generation: number;
  outcome: StepOutcome;
  health: 'ok' | 'degraded';
  published: Record<string, number>;
  /** Consumers on the application shadow, read from the broker on each pass of REDIRECTING_APP
   * only (absent in every other phase, and where the broker cannot say): with the redirected
   * pods ready and none restarted, the controller's proof that the app consumes its shadow. */
  appShadowConsumers?: number;
  /** Consumers on the source, read the same way on each pass of RESTORING_APP only (the pump has
   * stopped: every consumer there is the application's). */
  sourceConsumers?: number;
  /** The engine's latest checkpoint (every done outcome carries one): a restarted agent recovers from it. */
  checkpoint?: unknown;
  /** What waits, read from the broker every few seconds (absent until the first reading). */
  lag?: ObservedLag;
}

/** The lag a split shows its developer (docs/design.md "The lag a split adds"). */
export interface ObservedLag {
  /** Per route id: the unconsumed messages in its session shadow; a route the broker did not
   * answer for is absent. */
  routes: Record<string, number>;
  /** While the engine copies: messages in the source it has not copied yet, what the split adds
   * to the application's lag (it reads only its shadow then). */
  source?: number;
  /** Set while that backlog keeps growing (agent/queueAgent/backlogTrend.ts): since when. */
  behindSince?: string;
}

export interface ObservedRoute {
  /** Highest route-table generation installed past the publish barrier on every queue. */
  ackedGeneration: number;
  drained?: { proven: boolean; evidence: string; kept: { name: string; reason: string }[] };
  failed?: string;
}

export interface ObservedState {
  apiVersion: typeof OBSERVED_API_VERSION;
  activationId: string;
  observedGeneration: number;
  updatedAt: string;
  queues: Record<string, ObservedQueue>;
  routes: Record<string, ObservedRoute>;
  /** Set when the agent refused the desired document (e.g. names that differ from core/names):
   * it acted on none of it; the controller reports it. */
  refused?: string;
  /** Set once a queue-agent of this activation started after another one had written this
   * document (a crash or reschedule): how often, and when last. Shown to developers. */
  restarts?: { count: number; lastAt: string };
}
