// An SQS queue's connection in the queue-agent, from its plan and the pod's env (copied from the
// workload's container by the controller, agent/providers/podEnv.ts): the region (the env's, else
// the one the queue URL's AWS host names), an endpoint override, and static keys when the
// declaration names them — else the SDK's default chain in the pod. Credentials are never logged.
import type { SqsQueuePlan } from '../../core/providers/sqs/plan';
import { parseQueueUrl } from '../../core/providers/sqs/queueUrl';
import { formatFieldError } from '../../core/result';
import { EngineConfigError, envValue } from '../providers/podEnv';
import type { SqsCredentials } from './config';

export interface SqsConnection {
  readonly region: string;
  readonly endpoint?: string;
  readonly credentials?: SqsCredentials;
}

export function sqsConnection(plan: SqsQueuePlan): SqsConnection {
  const url = parseQueueUrl(plan.source, 'source');
  if (!url.ok) {
    const first = url.errors[0];
    throw new EngineConfigError(
      `queue ${plan.name}: the plan's source ${first ? formatFieldError(first) : 'is not a queue URL'}`,
    );
  }
  const region = plan.env.region ? envValue(plan.env.region, 'AWS region', plan.name) : url.value.region;
  if (region === undefined)
    throw new EngineConfigError(
      `queue ${plan.name}: the queue URL names no region and the plan names no region env var`,
    );
  const endpoint = plan.env.endpoint ? envValue(plan.env.endpoint, 'SQS endpoint', plan.name) : undefined;
  const credentials: SqsCredentials | undefined =
    plan.env.accessKeyId || plan.env.secretAccessKey
      ? {
          accessKeyId: envValue(plan.env.accessKeyId, 'access key id', plan.name),
          secretAccessKey: envValue(plan.env.secretAccessKey, 'secret access key', plan.name),
          ...(plan.env.sessionToken
            ? { sessionToken: envValue(plan.env.sessionToken, 'session token', plan.name) }
            : {}),
        }
      : undefined;
  return { region, ...(endpoint ? { endpoint } : {}), ...(credentials ? { credentials } : {}) };
}

/** The SDK client options of a connection. */
export function clientOptions(c: SqsConnection) {
  return {
    region: c.region,
    ...(c.endpoint ? { endpoint: c.endpoint } : {}),
    ...(c.credentials ? { credentials: c.credentials } : {}),
  };
}
