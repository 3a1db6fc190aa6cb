// The resolved plan of the workload stage: per queue, what the controller overrides and what
// the queue-agent pod copies. Re-exported by resolveQueues.ts, where callers import it from.
import type { EnvSource } from './containerEnv';
import type { KafkaBlock, TlsBlock } from './schema';

/** Why the agent pod copies a variable. `dependency`: named by another's `$(NAME)` expansion. */
export type EnvRole = 'brokers' | 'url' | 'managementUrl' | 'username' | 'password' | 'dependency';

export interface CopiedEnv {
  name: string;
  role: EnvRole;
  source: EnvSource;
}

interface ResolvedQueueCommon {
  name: string;
  container: string;
  /** The env var the controller overrides with the application shadow's name. */
  sourceEnv: string;
  /** The literal topic or queue the container consumes. */
  source: string;
  /** Env entries the queue-agent pod copies, in an order where expansions resolve. */
  env: CopiedEnv[];
  tls?: TlsBlock;
}

export interface ResolvedKafkaQueue extends ResolvedQueueCommon {
  provider: 'kafka';
  /** The env var the controller overrides with the application shadow group. */
  groupEnv: string;
  group: string;
  offsetReset: KafkaBlock['offsetReset'];
  /** Declared only; absent means read_committed. */
  isolationLevel?: NonNullable<KafkaBlock['isolationLevel']>;
  saslMechanism?: NonNullable<KafkaBlock['sasl']>['mechanism'];
}

export interface ResolvedRabbitQueue extends ResolvedQueueCommon {
  provider: 'rabbitmq';
  /** The declaration accepts plain http management next to TLS AMQP (core/queueConfig/managementTransport.ts). */
  allowPlainHttpManagement?: true;
}

export type ResolvedQueue = ResolvedKafkaQueue | ResolvedRabbitQueue;
