// How an Amazon SQS block is proposed from a container's env: one queue per queue URL, the
// region and endpoint env when the container has them, static keys when both are there.
import * as l10n from '@vscode/l10n';
import type { SqsBlock } from '../../../core/providers/sqs/declaration';
import { parseQueueUrl } from '../../../core/providers/sqs/queueUrl';
import { plainLiteral, wordsOf, type EnvFact, type ProposalRules } from './types';

const NOT_CONSUMED =
  /^(OUT|OUTPUT|OUTBOUND|PUBLISH|PRODUCE|PRODUCER|DLQ|DEAD|RETRY|REPLY|RESPONSE|TARGET|DEST|DESTINATION)$/;

function queueUrlScore(env: EnvFact): number {
  const value = plainLiteral(env);
  if (value === undefined) return 0;
  const url = parseQueueUrl(value.trim(), '');
  if (!url.ok) return 0;
  const words = wordsOf(env.name);
  const named = words.includes('QUEUE') || words.includes('SQS');
  // Any http(s) URL ending in /<x>/<y> parses: without a name that says queue, only an AWS host
  // or an account-like first segment makes it one.
  if (!named && url.value.region === undefined && !/^\d{12}$/.test(url.value.account)) return 0;
  if (words.some((w) => NOT_CONSUMED.test(w))) return 1;
  return named ? 5 : 3;
}

function regionScore(env: EnvFact): number {
  const words = wordsOf(env.name);
  if (!words.includes('REGION')) return 0;
  const value = plainLiteral(env);
  if (value !== undefined && !/^[a-z]{2}(-[a-z]+)+-\d+$/.test(value.trim())) return 0;
  if (words.includes('SQS')) return 5;
  if (words.includes('AWS')) return words.includes('DEFAULT') ? 3 : 4;
  return 1;
}

function endpointScore(env: EnvFact): number {
  const words = wordsOf(env.name);
  if (!words.includes('ENDPOINT')) return 0;
  const value = plainLiteral(env);
  if (value !== undefined && !/^https?:\/\//i.test(value.trim())) return 0;
  if (words.includes('SQS')) return 5;
  return words.includes('AWS') ? 3 : 1;
}

const keyScore =
  (...parts: string[]) =>
  (env: EnvFact): number => {
    const name = wordsOf(env.name).join('_');
    return name.includes(parts.join('_')) ? (name.startsWith('AWS_') ? 5 : 3) : 0;
  };

export const sqsRules: ProposalRules<'sqs'> = {
  provider: 'sqs',
  source: {
    field: 'queueUrlEnv',
    what: 'queue URL',
    required: true,
    literal: true,
    example: 'ORDERS_QUEUE_URL=https://sqs.eu-west-1.amazonaws.com/123456789012/orders',
    score: queueUrlScore,
  },
  perQueue: [],
  connection: [
    { field: 'regionEnv', what: l10n.t('AWS region'), example: 'AWS_REGION=eu-west-1', score: regionScore },
    {
      field: 'endpointEnv',
      what: l10n.t('SQS endpoint override'),
      example: 'AWS_ENDPOINT_URL_SQS=http://elasticmq:9324',
      score: endpointScore,
    },
    {
      field: 'accessKeyIdEnv',
      what: l10n.t('access key id'),
      example: 'AWS_ACCESS_KEY_ID',
      score: keyScore('ACCESS', 'KEY', 'ID'),
    },
    {
      field: 'secretAccessKeyEnv',
      what: l10n.t('secret access key'),
      example: 'AWS_SECRET_ACCESS_KEY',
      score: keyScore('SECRET', 'ACCESS', 'KEY'),
    },
    {
      field: 'sessionTokenEnv',
      what: l10n.t('session token'),
      example: 'AWS_SESSION_TOKEN',
      score: keyScore('SESSION', 'TOKEN'),
    },
  ],
  questions: [],
  block({ fields }) {
    const notes: string[] = [];
    const keys = fields.accessKeyIdEnv !== undefined && fields.secretAccessKeyEnv !== undefined;
    const block: SqsBlock = {
      ...(fields.queueUrlEnv !== undefined ? { queueUrlEnv: fields.queueUrlEnv } : {}),
      ...(fields.regionEnv !== undefined ? { regionEnv: fields.regionEnv } : {}),
      ...(fields.endpointEnv !== undefined ? { endpointEnv: fields.endpointEnv } : {}),
      ...(keys
        ? {
            credentials: 'static' as const,
            accessKeyIdEnv: fields.accessKeyIdEnv,
            secretAccessKeyEnv: fields.secretAccessKeyEnv,
            ...(fields.sessionTokenEnv !== undefined ? { sessionTokenEnv: fields.sessionTokenEnv } : {}),
          }
        : {}),
    };
    if (!keys)
      notes.push(
        l10n.t(
          "No access key env: credentials are the SDK's default chain in the queue-agent pod (a service account role).",
        ),
      );
    return { block, notes };
  },
  nameFromValue: (url) => {
    const last =
      url
        .replace(/[?#].*$/, '')
        .replace(/\/+$/, '')
        .split('/')
        .pop() ?? '';
    return last.replace(/\.fifo$/, '');
  },
};
