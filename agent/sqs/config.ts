// Configuration of one SQS engine (docs/providers/sqs.md). Every queue name comes from the
// controller, which computed and recorded it (docs/design.md §7): the source by its URL (the
// form applications use), the shadows and the lock queue by name, in the source's account and
// region. The engine never derives a name.
import type { SQSClient } from '@aws-sdk/client-sqs';
import type { FieldError } from '../../core/result';
import type { EngineHooks } from '../engine/contract';
import type { Logger } from '../log';
import type { SnsEnvelope } from '../../core/providers/sqs/headers';
import { SQS_COUNTS_LAG, SQS_LOCK_TIMEOUT } from '../../core/providers/sqs/settings';

export interface SqsTiming {
  /** How long one step may wait for a proof before it answers `pending`. */
  readonly stepTimeoutMs: number;
  /** How long SQS's approximate counts may trail a change (AWS documents about a minute;
   * ElasticMQ's are exact). Every emptiness or quiet proof spans the queue's visibility
   * timeout plus this. */
  readonly countsLagMs: number;
  readonly pollIntervalMs: number;
  /** The visibility timeout of the pump's receives, extended while a copy is slow. Unless set,
   * the lock's timeout (`engineTiming`): what a killed queue-agent's pump held is back when its
   * successor takes the fence, not a longer hold later. */
  readonly pumpVisibilitySeconds: number;
  /** Long-poll wait of the pump's receives (a stop interrupts it). */
  readonly receiveWaitSeconds: number;
  /** The lock message's visibility: how long a takeover waits after its holder died. */
  readonly lockVisibilitySeconds: number;
  /** Backoff of a copy whose send failed (the message stays in flight meanwhile). */
  readonly retryInitialMs: number;
  readonly retryMaxMs: number;
}

export const defaultTiming: SqsTiming = {
  stepTimeoutMs: 150_000,
  countsLagMs: SQS_COUNTS_LAG.default * 1000,
  pollIntervalMs: 1_000,
  pumpVisibilitySeconds: SQS_LOCK_TIMEOUT.default,
  receiveWaitSeconds: 10,
  lockVisibilitySeconds: SQS_LOCK_TIMEOUT.default,
  retryInitialMs: 200,
  retryMaxMs: 5_000,
};

/**
 * An engine's timing: the defaults, what it was given, and the pump's hold equal to the lock's
 * timeout unless given. A successor of a crashed queue-agent proves the source quiet before it
 * pumps (docs/providers/sqs.md `resume`) and cannot tell what the dead pump held from another
 * consumer's messages: with a longer hold it waited that out after taking the fence (a minute,
 * then every split of the workload stalled behind it).
 */
export function engineTiming(given: Partial<SqsTiming> = {}): SqsTiming {
  const lockVisibilitySeconds = given.lockVisibilitySeconds ?? defaultTiming.lockVisibilitySeconds;
  return { ...defaultTiming, pumpVisibilitySeconds: lockVisibilitySeconds, ...given };
}

/** Static keys as the workload has them (env or a secretKeyRef); without them the SDK's
 * default chain (which includes a web-identity token under IRSA). Secret: never logged. */
export interface SqsCredentials {
  readonly accessKeyId: string;
  readonly secretAccessKey: string;
  readonly sessionToken?: string;
}

export interface SqsEngineConfig {
  readonly activationId: string;
  readonly epoch: number;
  readonly region: string;
  /** An endpoint override (LocalStack, ElasticMQ, a VPC endpoint). */
  readonly endpoint?: string;
  readonly credentials?: SqsCredentials;
  readonly sourceQueueUrl: string;
  readonly appShadow: string;
  readonly lockQueue: string;
  /** Source messages the pump holds in flight at most (received, not yet deleted). */
  readonly prefetch?: number;
  readonly snsEnvelope?: SnsEnvelope;
  readonly timing?: Partial<SqsTiming>;
  /** The shadow names are the controller's scheme names, which carry no source kind
   * (core/providers/sqs/names.ts): a FIFO source's engine adds `.fifo` to the application
   * shadow's and every route shadow's name. */
  readonly fifoSuffix?: true;
}

export interface SqsEngineDeps {
  readonly logger?: Logger;
  readonly hooks?: EngineHooks;
  /** The client to use instead of one built from the config (tests cut its network). */
  readonly client?: SQSClient;
}

export const DEFAULT_PREFETCH = 50;
export const MAX_PREFETCH = 1_000;

/** SQS queue names: 1-80 of alphanumerics, hyphens and underscores; FIFO ones end in `.fifo`. */
const QUEUE_NAME = /^(?:[A-Za-z0-9_-]{1,80}|[A-Za-z0-9_-]{1,75}\.fifo)$/;

export const isQueueName = (name: string): boolean => QUEUE_NAME.test(name);

/** SQS requires FIFO queue names to end in `.fifo` and refuses it on standard ones. */
export const isFifoName = (name: string): boolean => name.endsWith('.fifo');

/** The queue name of a queue URL (its last path segment). */
export function queueNameOf(url: string): string {
  const path = url.replace(/[?#].*$/, '').replace(/\/+$/, '');
  return path.slice(path.lastIndexOf('/') + 1);
}

/** The URL of a queue named `name` in the source's account and region. */
export function siblingUrl(sourceQueueUrl: string, name: string): string {
  const path = sourceQueueUrl.replace(/[?#].*$/, '').replace(/\/+$/, '');
  return `${path.slice(0, path.lastIndexOf('/') + 1)}${name}`;
}

export function validateConfig(config: SqsEngineConfig): FieldError[] {
  const errors: FieldError[] = [];
  let url: URL | undefined;
  try {
    url = new URL(config.sourceQueueUrl);
  } catch {
    errors.push({
      path: 'sourceQueueUrl',
      problem: `${JSON.stringify(config.sourceQueueUrl)} is not a URL`,
      fix: 'give the queue URL as applications use it (https://sqs.<region>.amazonaws.com/<account>/<name>)',
    });
  }
  const source = queueNameOf(config.sourceQueueUrl);
  if (url && (!QUEUE_NAME.test(source) || url.pathname.split('/').filter(Boolean).length < 2)) {
    errors.push({
      path: 'sourceQueueUrl',
      problem: `${JSON.stringify(config.sourceQueueUrl)} does not end in /<account>/<queue name>`,
      fix: 'give the queue URL as applications use it',
    });
  }
  const names = { appShadow: config.appShadow, lockQueue: config.lockQueue };
  for (const [key, name] of Object.entries(names)) {
    if (!QUEUE_NAME.test(name)) {
      errors.push({
        path: key,
        problem: `${JSON.stringify(name)} is not a usable SQS queue name`,
        fix: 'use 1-80 letters, digits, hyphens or underscores (a FIFO name ends in .fifo)',
      });
    }
  }
  const shadowError = shadowNameError(source, config.appShadow, 'appShadow');
  if (shadowError) errors.push(shadowError);
  if (isFifoName(config.lockQueue)) {
    errors.push({
      path: 'lockQueue',
      problem: `${JSON.stringify(config.lockQueue)} names a FIFO queue; the lock queue is a standard one`,
      fix: 'record a lock queue name without .fifo',
    });
  }
  if (new Set([source, config.appShadow, config.lockQueue]).size !== 3) {
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

/** A shadow is a queue of the source's kind: FIFO shadows of a FIFO source keep its order. */
export function shadowNameError(sourceName: string, shadow: string, path: string): FieldError | undefined {
  const fifo = isFifoName(sourceName);
  if (fifo === isFifoName(shadow)) return undefined;
  return {
    path,
    problem: fifo
      ? `the source is a FIFO queue, so its shadow ${shadow} must be one too`
      : `the source is a standard queue, so its shadow ${shadow} must be one too`,
    fix: fifo ? 'record a shadow name ending in .fifo' : 'record a shadow name without .fifo',
  };
}
