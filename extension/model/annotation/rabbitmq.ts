// How a RabbitMQ block is proposed from a container's env: the AMQP URL, the management API URL,
// one queue per queue env, username and password when both are separate, tls for amqps://.
import * as l10n from '@vscode/l10n';
import type { RabbitBlock } from '../../../core/providers/rabbitmq/declaration';
import { plainLiteral, wordsOf, type EnvFact, type ProposalRules } from './types';

/** Queues a consumer does not consume: where it publishes, dead letters, replies. */
const NOT_CONSUMED =
  /^(OUT|OUTPUT|OUTBOUND|PUBLISH|PRODUCE|PRODUCER|DLQ|DLX|DEAD|RETRY|REPLY|RESPONSE|EXCHANGE|ROUTING|KEY|PREFIX|TARGET|DEST|DESTINATION|COUNT|SIZE|LENGTH|TTL)$/;

const schemeOf = (value: string | undefined): string | undefined =>
  /^([a-z][a-z0-9+.-]*):\/\//i.exec(value ?? '')?.[1]?.toLowerCase();

function urlScore(env: EnvFact): number {
  const value = plainLiteral(env);
  const scheme = schemeOf(value);
  if (value !== undefined && scheme !== 'amqp' && scheme !== 'amqps') return 0;
  if (scheme !== undefined) return 5;
  const words = wordsOf(env.name);
  const has = (w: string) => words.includes(w);
  if (['MANAGEMENT', 'MGMT', 'ADMIN', 'API', 'HTTP'].some(has)) return 0;
  const isUrl = ['URL', 'URI', 'ADDRESS', 'ADDR'].some(has);
  if (has('AMQP') && isUrl) return 4;
  if ((has('RABBITMQ') || has('RABBIT')) && isUrl) return 3;
  return 0;
}

function managementScore(env: EnvFact): number {
  const value = plainLiteral(env);
  const scheme = schemeOf(value);
  if (value !== undefined && scheme !== 'http' && scheme !== 'https') return 0;
  const words = wordsOf(env.name);
  const has = (w: string) => words.includes(w);
  const isUrl = ['URL', 'URI', 'ADDRESS', 'ADDR'].some(has);
  let score = 0;
  if ((has('MANAGEMENT') || has('MGMT')) && isUrl) score = has('RABBITMQ') || has('RABBIT') ? 5 : 4;
  else if ((has('RABBITMQ') || has('RABBIT')) && ['API', 'ADMIN', 'HTTP'].some(has) && isUrl) score = 3;
  if (value !== undefined && /:15671|:15672/.test(value)) score += score > 0 ? 1 : 3;
  return score;
}

function queueScore(env: EnvFact): number {
  const value = plainLiteral(env);
  if (
    value === undefined ||
    value.includes('://') ||
    Buffer.byteLength(value) > 255 ||
    value.startsWith('amq.')
  )
    return 0;
  const words = wordsOf(env.name);
  if (!words.some((w) => w === 'QUEUE' || w === 'QUEUES') || words.includes('URL')) return 0;
  if (words.includes('SQS') || words.includes('AWS')) return 0;
  return words.some((w) => NOT_CONSUMED.test(w)) ? 1 : 4;
}

function credentialScore(part: 'USER' | 'PASS') {
  return (env: EnvFact): number => {
    const words = wordsOf(env.name);
    if (!words.some((w) => w.startsWith(part))) return 0;
    return words.includes('RABBITMQ') || words.includes('RABBIT') || words.includes('AMQP') ? 4 : 0;
  };
}

export const rabbitRules: ProposalRules<'rabbitmq'> = {
  provider: 'rabbitmq',
  source: {
    field: 'sourceEnv',
    what: 'queue',
    required: true,
    literal: true,
    example: 'ORDERS_QUEUE=orders',
    score: queueScore,
  },
  perQueue: [],
  connection: [
    {
      field: 'urlEnv',
      what: 'AMQP URL (amqp:// or amqps://)',
      required: true,
      example: 'AMQP_URL (a secretKeyRef)',
      score: urlScore,
    },
    {
      field: 'managementUrlEnv',
      what: 'management API URL (http(s)://host:15672)',
      required: true,
      example: 'RABBITMQ_MANAGEMENT_URL=http://rabbitmq:15672',
      score: managementScore,
    },
    { field: 'usernameEnv', what: 'username', example: 'RABBITMQ_USERNAME', score: credentialScore('USER') },
    { field: 'passwordEnv', what: 'password', example: 'RABBITMQ_PASSWORD', score: credentialScore('PASS') },
  ],
  questions: [],
  block({ fields, env }) {
    const notes: string[] = [];
    const block: RabbitBlock = {
      urlEnv: fields.urlEnv ?? '',
      managementUrlEnv: fields.managementUrlEnv ?? '',
      ...(fields.sourceEnv !== undefined ? { sourceEnv: fields.sourceEnv } : {}),
    };
    const username = fields.usernameEnv;
    const password = fields.passwordEnv;
    if (username !== undefined && password !== undefined) {
      block.usernameEnv = username;
      block.passwordEnv = password;
    }
    const url = env.find((e) => e.name === fields.urlEnv);
    if (schemeOf(plainLiteral(url ?? { name: '' })) === 'amqps') {
      block.tls = {};
      notes.push(
        l10n.t(
          '{0} is amqps://: rabbitmq.tls is {} (the system CAs); name the CA Secret (caSecret, caKey) if the broker uses a private CA.',
          url?.name ?? l10n.t('The URL'),
        ),
      );
    }
    if (url?.from?.kind === 'secret')
      notes.push(
        l10n.t(
          '{0} comes from Secret {1} (key {2}), which is not read: if it holds an amqps:// URL, add rabbitmq.tls: {}.',
          url.name,
          url.from.name,
          url.from.key,
        ),
      );
    return { block, notes };
  },
  nameFromValue: (queue) => queue,
};
