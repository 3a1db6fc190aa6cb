// Amazon SQS's block of the `telepresence.io/queue-config` annotation (docs/design.md §3,
// docs/providers/sqs.md "Identity"): the env var with the queue URL the application uses, region
// and endpoint env (an endpoint override is how teams point at LocalStack or ElasticMQ), the
// workload's credentials, and how the filter reads SNS envelopes. Its schema and the rules
// across its fields.
import { z } from 'zod';
import { envName, fileSettingSchema, oneSettingErrors } from '../../queueConfig/blocks';
import { fieldError, type FieldError } from '../../result';

/** How the workload authenticates to SQS: `static` keys from env vars (each a literal or a
 * secretKeyRef in the pod template), or the SDK's `default` credential chain. */
export const SQS_CREDENTIALS = ['default', 'static'] as const;
export type SqsCredentialsKind = (typeof SQS_CREDENTIALS)[number];

export const SNS_ENVELOPES = ['auto', 'off'] as const;

export const sqsBlockSchema = z
  .strictObject({
    queueUrlEnv: envName(
      'Env var whose literal value is the URL of the queue the container consumes (https://sqs.<region>.amazonaws.com/<account>/<name>). Or queueUrlFile, when it reads the URL from a mounted file.',
    ).optional(),
    queueUrlFile: fileSettingSchema
      .describe(
        'The key of a mounted config file whose literal value is the URL of the queue the container consumes (instead of queueUrlEnv).',
      )
      .optional(),
    regionEnv: envName(
      'Env var with the AWS region. Required when the queue URL does not name one (an endpoint override).',
    ).optional(),
    endpointEnv: envName(
      'Env var with an SQS endpoint override (LocalStack, ElasticMQ, a VPC endpoint). Required when the queue URL is not an AWS one.',
    ).optional(),
    credentials: z
      .enum(SQS_CREDENTIALS)
      .describe(
        "How the workload authenticates: static — keys from accessKeyIdEnv/secretAccessKeyEnv (usually secretKeyRefs); default — the SDK's default chain in the queue-agent pod (the default).",
      )
      .optional(),
    accessKeyIdEnv: envName('Env var with the access key id (credentials: static).').optional(),
    secretAccessKeyEnv: envName(
      'Env var with the secret access key, usually a secretKeyRef (credentials: static).',
    ).optional(),
    sessionTokenEnv: envName('Env var with a session token (credentials: static, optional).').optional(),
    snsEnvelope: z
      .enum(SNS_ENVELOPES)
      .describe(
        'auto (the default): a body that is an SNS notification (raw delivery off) has its MessageAttributes read by the filter too; off: only the message attributes are read.',
      )
      .optional(),
  })
  .describe('The queue is an Amazon SQS queue (standard or FIFO).');

export type SqsBlock = z.infer<typeof sqsBlockSchema>;

/** The credentials the block declares; absent means the default chain. */
export const credentialsOf = (s: SqsBlock): SqsCredentialsKind => s.credentials ?? 'default';

/** The block's env var settings as [path below the block, env var name]. */
export function sqsEnvSettings(s: SqsBlock): [string, string][] {
  const settings: [string, string][] = [];
  const optional = [
    'queueUrlEnv',
    'regionEnv',
    'endpointEnv',
    'accessKeyIdEnv',
    'secretAccessKeyEnv',
    'sessionTokenEnv',
  ] as const;
  for (const key of optional) {
    const name = s[key];
    if (name !== undefined) settings.push([key, name]);
  }
  return settings;
}

const KEY_FIELDS = ['accessKeyIdEnv', 'secretAccessKeyEnv', 'sessionTokenEnv'] as const;

export function sqsBlockErrors(s: SqsBlock, path: string): FieldError[] {
  const errors: FieldError[] = oneSettingErrors(
    s.queueUrlEnv,
    s.queueUrlFile,
    path,
    { env: 'queueUrlEnv', file: 'queueUrlFile' },
    'queue URL',
  );
  if (credentialsOf(s) === 'static') {
    for (const key of ['accessKeyIdEnv', 'secretAccessKeyEnv'] as const) {
      if (s[key] === undefined)
        errors.push(
          fieldError(
            `${path}.${key}`,
            'is required with credentials: static.',
            `Name the env var of the container that holds the ${key === 'accessKeyIdEnv' ? 'access key id' : 'secret access key'}, or use credentials: default.`,
          ),
        );
    }
  } else {
    for (const key of KEY_FIELDS) {
      if (s[key] !== undefined)
        errors.push(
          fieldError(
            `${path}.${key}`,
            `is set, but credentials is "${credentialsOf(s)}": the key would be ignored.`,
            'Set credentials: static to use the keys, or remove the key fields.',
          ),
        );
    }
  }
  return errors;
}
