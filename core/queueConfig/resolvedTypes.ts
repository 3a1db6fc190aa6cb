// The resolved plan of the workload stage: per queue, what the controller overrides and what
// the queue-agent pod copies. Each provider resolves its own queues (core/providers/<provider>/
// resolve.ts) into a ResolvedQueueBase with its fields; the union is every registered one's.
// Re-exported by resolveQueues.ts, where callers import it from.
import type { Provider } from '../providers';
import type { ProviderTypesOf } from '../providers/registry';
import type { TlsBlock } from './blocks';
import type { EnvSource } from './containerEnv';
import type { SettingRef } from './settingRef';

/** Why the agent pod copies a variable: one of its provider's connection roles (the provider's
 * `envRoles`), or `dependency`: named by another's `$(NAME)` expansion. */
export type EnvRole = ProviderTypesOf<Provider>['role'] | 'dependency';

export interface CopiedEnv<R extends string = EnvRole> {
  name: string;
  role: R;
  source: EnvSource;
}

/** What every provider's resolved queue has; `R` is its connection roles. */
export interface ResolvedQueueBase<R extends string> {
  name: string;
  container: string;
  /** Where the container reads its source: what the controller overrides with the application
   * shadow's name. */
  sourceAt: SettingRef;
  /** The literal topic or queue the container consumes. */
  source: string;
  /** Env entries the queue-agent pod copies, in an order where expansions resolve. */
  env: CopiedEnv<R | 'dependency'>[];
  tls?: TlsBlock;
}

/** A resolved queue of provider `P`. */
export type ResolvedQueueOf<P extends Provider> = ProviderTypesOf<P>['resolved'];

export type ResolvedQueue = ResolvedQueueOf<Provider>;
