// An SQS queue resolved against the pod template (docs/design.md §3, workload stage): the literal
// queue URL the controller overrides with a shadow's URL, and the connection env the queue-agent
// copies (region, endpoint, static keys — secretKeyRefs stay references).
import { copied, dedupe, literalOf } from '../../queueConfig/envResolution';
import { literalSetting } from '../../queueConfig/settingResolution';
import { describeSetting, settingField } from '../../queueConfig/settingRef';
import type { ResolveContext } from '../../queueConfig/resolveContext';
import type { ResolvedQueueBase } from '../../queueConfig/resolvedTypes';
import { fieldError } from '../../result';
import { credentialsOf, type SqsBlock } from './declaration';
import { parseQueueUrl } from './queueUrl';

/** The roles of an SQS connection's env vars. The queue URL is copied too: the ownership key
 * reads its account, region and name, and the queue-agent its endpoint's account. */
export const SQS_ENV_ROLES = {
  queueUrl: { address: 'url' },
  region: {},
  endpoint: { address: 'url' },
  accessKeyId: { secret: true },
  secretAccessKey: { secret: true },
  sessionToken: { secret: true },
} as const;
export type SqsRole = keyof typeof SQS_ENV_ROLES;

/** The queue-agent's env var for a queue URL the workload reads from a mounted file. */
export const FILE_QUEUE_URL_ENV = 'QS_SQS_QUEUE_URL';

export interface ResolvedSqsQueue extends ResolvedQueueBase<SqsRole> {
  provider: 'sqs';
  /** Declared `off` only; absent means auto. */
  snsEnvelope?: 'off';
}

export function resolveSqs(name: string, block: SqsBlock, ctx: ResolveContext): ResolvedSqsQueue | undefined {
  const base = `${ctx.path}.sqs`;
  const fields = { env: 'queueUrlEnv', file: 'queueUrlFile' };
  const resolved = literalSetting(block.queueUrlEnv, block.queueUrlFile, fields, base, 'queue URL', ctx);
  const source = resolved?.value;
  const field = `${base}.${resolved ? settingField(resolved.at, fields) : 'queueUrlEnv'}`;
  const named = resolved ? describeSetting(resolved.at) : (block.queueUrlEnv ?? 'queueUrlFile');
  const url = source === undefined ? undefined : parseQueueUrl(source, field);
  if (url && !url.ok) {
    // The path's problem names the field; the setting and its value say which.
    for (const e of url.errors)
      ctx.errors.push(fieldError(e.path, `${named} ("${source}") ${e.problem}`, e.fix));
  }
  const env = [
    // The queue-agent and the ownership key read the URL by its role: from the container's env
    // var, or — named in a file — as a literal the queue-agent's pod carries itself.
    ...(block.queueUrlEnv !== undefined
      ? copied(block.queueUrlEnv, 'queueUrl', `${base}.queueUrlEnv`, ctx)
      : source !== undefined
        ? [
            {
              name: FILE_QUEUE_URL_ENV,
              role: 'queueUrl' as const,
              source: { kind: 'value' as const, value: source },
            },
          ]
        : []),
    ...(block.regionEnv ? copied(block.regionEnv, 'region', `${base}.regionEnv`, ctx) : []),
    ...(block.endpointEnv ? copied(block.endpointEnv, 'endpoint', `${base}.endpointEnv`, ctx) : []),
    ...(credentialsOf(block) === 'static' && block.accessKeyIdEnv
      ? copied(block.accessKeyIdEnv, 'accessKeyId', `${base}.accessKeyIdEnv`, ctx)
      : []),
    ...(credentialsOf(block) === 'static' && block.secretAccessKeyEnv
      ? copied(block.secretAccessKeyEnv, 'secretAccessKey', `${base}.secretAccessKeyEnv`, ctx)
      : []),
    ...(credentialsOf(block) === 'static' && block.sessionTokenEnv
      ? copied(block.sessionTokenEnv, 'sessionToken', `${base}.sessionTokenEnv`, ctx)
      : []),
  ];
  if (url?.ok) {
    // The SDK sends every request to the endpoint it is given, else to the region's AWS one: a
    // queue URL of another host needs the override, and one without a region needs regionEnv.
    if (url.value.region === undefined && block.endpointEnv === undefined) {
      ctx.errors.push(
        fieldError(
          `${base}.endpointEnv`,
          `is required: ${named} names host "${url.value.host}", which is not an AWS SQS endpoint.`,
          'Name the env var with the endpoint the application uses (e.g. AWS_ENDPOINT_URL_SQS for LocalStack or ElasticMQ).',
        ),
      );
    }
    if (url.value.region === undefined && block.regionEnv === undefined) {
      ctx.errors.push(
        fieldError(
          `${base}.regionEnv`,
          `is required: ${named} names no region (host "${url.value.host}").`,
          'Name the env var with the AWS region the application uses (e.g. AWS_REGION).',
        ),
      );
    }
  }
  if (block.endpointEnv)
    checkLiteralEndpoint(literalOf(env, block.endpointEnv), block.endpointEnv, `${base}.endpointEnv`, ctx);
  if (resolved === undefined || !url?.ok) return undefined;
  return {
    provider: 'sqs',
    name,
    container: ctx.env.container.name,
    sourceAt: resolved.at,
    source: resolved.value,
    env: dedupe(env),
    ...(block.snsEnvelope === 'off' ? { snsEnvelope: 'off' as const } : {}),
  };
}

/** A literal endpoint must be an http(s) URL. */
function checkLiteralEndpoint(
  value: string | undefined,
  name: string,
  path: string,
  ctx: ResolveContext,
): void {
  if (value === undefined) return;
  let protocol: string | undefined;
  try {
    protocol = new URL(value).protocol;
  } catch {
    protocol = undefined;
  }
  if (protocol !== 'http:' && protocol !== 'https:')
    ctx.errors.push(
      fieldError(
        path,
        `${name} is not an http:// or https:// URL.`,
        'Set it to the SQS endpoint, e.g. http://elasticmq:9324.',
      ),
    );
}
