// Configuration of one RabbitMQ engine. Every resource name comes from the controller, which
// computed and recorded it (docs/design.md §7); the engine never derives one from the source's name.
import type { ManagementClient } from './management';
import type { FieldError } from '../../core/result';
import type { EngineHooks } from '../engine/contract';
import type { Logger } from '../log';
import { DESTINATION_EXCHANGE_SUFFIX_BYTES } from '../../core/providers/rabbitmq/names';

export interface RabbitTiming {
  /** How long one step may wait for a proof before it answers `pending`. */
  readonly stepTimeoutMs: number;
  /** Quiesce-and-recheck window for phase proofs; at least the statistics lag (management
   * figures trailed AMQP by ~5 s even with a 1 s statistics interval). */
  readonly quiesceMs: number;
  /** How long management statistics may take to show a change (seconds with the default 5 s
   * statistics interval and quorum tick); bounds the fresh-statistics proof before a removal. */
  readonly statisticsLagMs: number;
  readonly pollIntervalMs: number;
  /** Management-API consumer watch on quorum sources. */
  readonly ownershipPollMs: number;
  readonly reconnectInitialMs: number;
  readonly reconnectMaxMs: number;
  /** Backoff of a publish that was returned, nacked or lost. */
  readonly retryInitialMs: number;
  readonly retryMaxMs: number;
  readonly heartbeatSeconds: number;
  readonly managementTimeoutMs: number;
}

export const defaultTiming: RabbitTiming = {
  stepTimeoutMs: 30_000,
  quiesceMs: 10_000,
  statisticsLagMs: 15_000,
  pollIntervalMs: 500,
  ownershipPollMs: 5_000,
  reconnectInitialMs: 200,
  reconnectMaxMs: 10_000,
  retryInitialMs: 200,
  retryMaxMs: 5_000,
  heartbeatSeconds: 10,
  managementTimeoutMs: 5_000,
};

/**
 * The statistics-bound timings for a broker that collects statistics every `intervalSeconds`
 * (its `collect_statistics_interval`). The quiesce window is two intervals; the lag bound three,
 * but never under 6 s: a quorum queue's consumer count trailed AMQP by 5.0–6.8 s on a broker
 * collecting every second (docs/design.md §5). At the default 5 s these are `defaultTiming`'s.
 */
export function statisticsTiming(
  intervalSeconds: number,
): Pick<RabbitTiming, 'quiesceMs' | 'statisticsLagMs'> {
  return {
    quiesceMs: 2 * intervalSeconds * 1000,
    statisticsLagMs: Math.max(6_000, 3 * intervalSeconds * 1000),
  };
}

export const DEFAULT_PREFETCH = 200;
/** Beyond this the "capped prefetch" is no cap: the backlog moves into unacked. */
export const MAX_PREFETCH = 2_000;

export interface RabbitEngineConfig {
  readonly activationId: string;
  readonly epoch: number;
  /** Secret (credentials): never logged. */
  readonly amqpUrl: string;
  /** Secret when it carries credentials; without them the AMQP URL's are used. */
  readonly managementUrl: string;
  readonly sourceQueue: string;
  readonly appShadow: string;
  readonly lockQueue: string;
  readonly prefetch?: number;
  readonly timing?: Partial<RabbitTiming>;
  /** Appended to the AMQP connection name, to tell engine instances apart. */
  readonly connectionLabel?: string;
}

export interface RabbitEngineDeps {
  readonly logger?: Logger;
  readonly hooks?: EngineHooks;
  /** The management statistics source; tests give one whose counts lag (shadows.ts). */
  readonly management?: ManagementClient;
}

/** AMQP queue names are short strings. */
const MAX_NAME_BYTES = 255;

export function validateConfig(config: RabbitEngineConfig): FieldError[] {
  const errors: FieldError[] = [];
  const names = { sourceQueue: config.sourceQueue, appShadow: config.appShadow, lockQueue: config.lockQueue };
  for (const [key, name] of Object.entries(names)) {
    if (name === '' || Buffer.byteLength(name) > MAX_NAME_BYTES || name.startsWith('amq.')) {
      errors.push({
        path: key,
        problem: `${JSON.stringify(name)} is not a usable queue name`,
        fix: `use 1-${MAX_NAME_BYTES} bytes, not starting with "amq."`,
      });
    }
  }
  // The destinations' exchanges are named after it (routing.ts), within the same limit.
  const exchangeRoom = MAX_NAME_BYTES - DESTINATION_EXCHANGE_SUFFIX_BYTES;
  const appShadowBytes = Buffer.byteLength(config.appShadow);
  if (appShadowBytes > exchangeRoom && appShadowBytes <= MAX_NAME_BYTES) {
    errors.push({
      path: 'appShadow',
      problem: `${JSON.stringify(config.appShadow)} leaves no room for the routing exchanges named after it`,
      fix: `use at most ${exchangeRoom} bytes`,
    });
  }
  if (new Set(Object.values(names)).size !== 3) {
    errors.push({
      path: 'appShadow',
      problem: 'source, app shadow and lock queue must differ',
      fix: 'record three distinct names',
    });
  }
  const prefetch = config.prefetch ?? DEFAULT_PREFETCH;
  if (!Number.isInteger(prefetch) || prefetch < 1 || prefetch > MAX_PREFETCH) {
    errors.push({ path: 'prefetch', problem: `${prefetch} is out of range`, fix: `use 1-${MAX_PREFETCH}` });
  }
  return errors;
}
