// Configuration of one Kafka engine. Every resource name (shadow topics, groups, the
// transactional id) comes from the controller, which computed and recorded it (core/names.ts);
// the engine never derives one from the user's topic (docs/design.md §7).
import type { ISocketFactory, SASLOptions } from 'kafkajs';
import type { FieldError } from '../../core/result';
import type { EngineHooks } from '../engine/contract';
import type { Logger } from '../log';

export interface KafkaTiming {
  /** How long one step may wait for a proof before it answers `pending`. */
  readonly stepTimeoutMs: number;
  /** A proof (group empty, no backlog) is read again after this long before it counts. */
  readonly quiesceMs: number;
  readonly pollIntervalMs: number;
  /** Longest wait of one source fetch when nothing arrives. */
  readonly fetchMaxWaitMs: number;
  /** An idle pump makes a broker round trip this often: a fenced producer only learns of its
   * fence from a round trip (a transaction begin succeeds locally). */
  readonly fenceProbeMs: number;
  /** Backoff of a failed transaction and of the check for a missing destination. */
  readonly retryInitialMs: number;
  readonly retryMaxMs: number;
  /** How often the source's partition count is compared with the shadows'. */
  readonly partitionCheckMs: number;
  readonly requestTimeoutMs: number;
  readonly connectionTimeoutMs: number;
}

export const defaultTiming: KafkaTiming = {
  stepTimeoutMs: 30_000,
  quiesceMs: 2_000,
  pollIntervalMs: 500,
  fetchMaxWaitMs: 500,
  fenceProbeMs: 5_000,
  retryInitialMs: 200,
  retryMaxMs: 5_000,
  partitionCheckMs: 30_000,
  requestTimeoutMs: 30_000,
  connectionTimeoutMs: 3_000,
};

/** Records per transaction (also bounded by bytes per destination partition and by what one
 * fetch returns), and so the bound on duplicates per crash (README "When the queue-agent
 * restarts"): 1000 measured 0.72-0.80x the throughput of 2000 and ~1.1x that of 500 with
 * 1 KiB records (test/bench/kafka-chunk.bench.ts). */
export const DEFAULT_PREFETCH = 1000;
export const MAX_PREFETCH = 10_000;
/** Records held back for a missing destination before the pump stops fetching. */
export const MAX_PARKED = 20_000;

/** How a read treats transactions (the consumer's `isolation.level`): read_committed drops
 * aborted records and stops at the last stable offset; read_uncommitted reads everything up to
 * the high watermark, as an application configured so does. */
export type IsolationLevel = 'read_committed' | 'read_uncommitted';
export const ISOLATION_LEVELS: readonly IsolationLevel[] = ['read_committed', 'read_uncommitted'];

export interface KafkaConnection {
  readonly brokers: readonly string[];
  /** `true` for the system CAs, or the CA bundle (PEM) of a private CA. */
  readonly ssl?: boolean | { readonly ca: string };
  /** Secret: never logged. */
  readonly sasl?: SASLOptions;
}

export interface KafkaEngineConfig {
  readonly activationId: string;
  readonly epoch: number;
  readonly connection: KafkaConnection;
  /** The user's topic: read, never written, never deleted. */
  readonly sourceTopic: string;
  /** The application's own group on the source: seeded from at start, handed back to at the end. */
  readonly appGroup: string;
  /** Where a partition without a committed offset in `appGroup` starts. */
  readonly offsetReset: 'earliest' | 'latest';
  /** The application's `isolation.level` on the source, which the pump reads it at (default
   * read_committed: aborted records are never copied). */
  readonly isolationLevel?: IsolationLevel;
  readonly appShadow: string;
  /** The group the redirected application consumes the app shadow with. */
  readonly appShadowGroup: string;
  /** Offset store of the pump (no member ever joins it). */
  readonly splitterGroup: string;
  /** One per activation and queue: a replacement engine's producer fences this one's. */
  readonly transactionalId: string;
  /** Records per transaction (the crash scenario uses 1: one record in flight). */
  readonly prefetch?: number;
  /** Default true: the pump reads the next records while its transactions commit. False only
   * to measure that (test/bench/kafka-engine.bench.ts; DECISIONS.md, "Performance"). */
  readonly readAhead?: boolean;
  /** Header whose value the test hooks receive as the message id (never logged). */
  readonly messageIdHeader?: string;
  readonly timing?: Partial<KafkaTiming>;
  /** Appended to the client id, to tell engine instances apart in group descriptions. */
  readonly clientLabel?: string;
}

export interface KafkaEngineDeps {
  readonly logger?: Logger;
  readonly hooks?: EngineHooks;
  /** Test seam: the sockets of every client, so a test can sever them like a network would. */
  readonly socketFactory?: ISocketFactory;
}

export const DEFAULT_MESSAGE_ID_HEADER = 'x-message-id';

/** Kafka topic and group names: ≤ 249 characters of [a-zA-Z0-9._-], not `.` or `..`. */
const LEGAL = /^[a-zA-Z0-9._-]{1,249}$/;

export function validateConfig(config: KafkaEngineConfig): FieldError[] {
  const errors: FieldError[] = [];
  const topics = { sourceTopic: config.sourceTopic, appShadow: config.appShadow };
  const groups = {
    appGroup: config.appGroup,
    appShadowGroup: config.appShadowGroup,
    splitterGroup: config.splitterGroup,
  };
  for (const [key, name] of Object.entries({
    ...topics,
    ...groups,
    transactionalId: config.transactionalId,
  })) {
    if (!LEGAL.test(name) || name === '.' || name === '..') {
      errors.push({
        path: key,
        problem: `${JSON.stringify(name)} is not a usable Kafka name`,
        fix: 'use 1-249 characters of a-z, A-Z, 0-9, ".", "_" and "-"',
      });
    }
  }
  if (config.sourceTopic === config.appShadow) {
    errors.push({
      path: 'appShadow',
      problem: 'the app shadow is the source',
      fix: 'record a fresh shadow name',
    });
  }
  if (new Set(Object.values(groups)).size !== 3) {
    errors.push({
      path: 'splitterGroup',
      problem: 'the application group, app-shadow group and splitter group must differ',
      fix: 'record three distinct group names',
    });
  }
  if (config.connection.brokers.length === 0) {
    errors.push({
      path: 'connection.brokers',
      problem: 'no broker address',
      fix: 'give at least one host:port',
    });
  }
  if (config.offsetReset !== 'earliest' && config.offsetReset !== 'latest') {
    errors.push({
      path: 'offsetReset',
      problem: `${String(config.offsetReset)} is unknown`,
      fix: 'use earliest or latest',
    });
  }
  if (config.isolationLevel !== undefined && !ISOLATION_LEVELS.includes(config.isolationLevel)) {
    errors.push({
      path: 'isolationLevel',
      problem: `${String(config.isolationLevel)} is unknown`,
      fix: 'use read_committed or read_uncommitted',
    });
  }
  const prefetch = config.prefetch ?? DEFAULT_PREFETCH;
  if (!Number.isInteger(prefetch) || prefetch < 1 || prefetch > MAX_PREFETCH) {
    errors.push({ path: 'prefetch', problem: `${prefetch} is out of range`, fix: `use 1-${MAX_PREFETCH}` });
  }
  return errors;
}

/** A route's names, checked before the route table takes it. */
export function validateRouteNames(
  route: {
    readonly routeId: string;
    readonly shadow: string;
    readonly sessionGroup?: string;
    readonly drainGroup?: string;
  },
  index: number,
  config: KafkaEngineConfig,
): FieldError[] {
  const errors: FieldError[] = [];
  const at = `routes[${index}]`;
  const names = { shadow: route.shadow, sessionGroup: route.sessionGroup, drainGroup: route.drainGroup };
  for (const [key, name] of Object.entries(names)) {
    if (name === undefined || !LEGAL.test(name)) {
      errors.push({
        path: `${at}.${key}`,
        problem:
          name === undefined
            ? `a Kafka route needs a ${key}`
            : `${JSON.stringify(name)} is not a usable Kafka name`,
        fix: 'record the name the controller computed for this route',
      });
    }
  }
  const taken = [config.appGroup, config.appShadowGroup, config.splitterGroup];
  if (
    route.sessionGroup !== undefined &&
    (taken.includes(route.sessionGroup) || route.sessionGroup === route.drainGroup)
  ) {
    errors.push({
      path: `${at}.sessionGroup`,
      problem: `group ${route.sessionGroup} is already used by the split`,
      fix: 'give every route its own session and drain groups',
    });
  }
  if (route.drainGroup !== undefined && taken.includes(route.drainGroup)) {
    errors.push({
      path: `${at}.drainGroup`,
      problem: `group ${route.drainGroup} is already used by the split`,
      fix: 'give every route its own session and drain groups',
    });
  }
  return errors;
}
