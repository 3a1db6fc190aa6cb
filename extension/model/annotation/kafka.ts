// How a Kafka block is proposed from a container's env: bootstrap brokers, one topic per queue
// with its consumer group, offsetReset, and SASL when its mechanism is written out.
import * as l10n from '@vscode/l10n';
import {
  KAFKA_SASL_MECHANISMS,
  OFFSET_RESETS,
  type KafkaBlock,
} from '../../../core/providers/kafka/declaration';
import { plainLiteral, wordsOf, type EnvFact, type ProposalRules } from './types';

const KAFKA_TOPIC = /^[a-zA-Z0-9._-]{1,249}$/;
/** host:port[,host:port…], a scheme such as PLAINTEXT:// allowed. */
const HOST_LIST = /^([a-z]+:\/\/)?[a-z0-9.-]+:\d{1,5}(\s*,\s*([a-z]+:\/\/)?[a-z0-9.-]+:\d{1,5})*$/i;
const KAFKA_PORTS = /:(9092|9093|9094|9095|19092|29092)\b/;
/** Topics a consumer does not consume: where it writes, retries, dead letters, name patterns. */
const NOT_CONSUMED =
  /^(PREFIX|PATTERN|REGEX|PARTITIONS?|REPLICAS?|REPLICATION|OUT|OUTPUT|OUTBOUND|PRODUCE|PRODUCER|PUBLISH|DLQ|DLT|DEAD|RETRY|REPLY|RESPONSE|SINK|TARGET|DEST|DESTINATION|COUNT)$/;

function brokersScore(env: EnvFact): number {
  const words = wordsOf(env.name);
  const has = (w: string) => words.includes(w);
  if (['SCHEMA', 'REGISTRY', 'ZOOKEEPER', 'CONNECT', 'REST'].some(has)) return 0;
  const value = plainLiteral(env);
  if (value !== undefined && !HOST_LIST.test(value.trim())) return 0;
  let score = 0;
  if (has('BOOTSTRAP')) score += 4;
  if (has('KAFKA') && ['BROKER', 'BROKERS', 'SERVER', 'SERVERS', 'HOST', 'HOSTS', 'ADDRESS', 'URL'].some(has))
    score += 3;
  else if (has('BROKERS') || has('BROKER')) score += 2;
  if (score > 0 && value !== undefined && KAFKA_PORTS.test(value)) score += 1;
  else if (score === 0 && value !== undefined && KAFKA_PORTS.test(value)) score += 2;
  return score;
}

function topicScore(env: EnvFact): number {
  const value = plainLiteral(env);
  if (value === undefined || !KAFKA_TOPIC.test(value) || value === '.' || value === '..') return 0;
  const words = wordsOf(env.name);
  if (!words.some((w) => w === 'TOPIC' || w === 'TOPICS')) return 0;
  return words.some((w) => NOT_CONSUMED.test(w)) ? 1 : 4;
}

function groupScore(env: EnvFact): number {
  const value = plainLiteral(env);
  if (value === undefined) return 0;
  const words = wordsOf(env.name);
  if (!words.includes('GROUP') || words.includes('INSTANCE')) return 0;
  return words.includes('KAFKA') || words.includes('CONSUMER') || words.includes('ID') ? 4 : 3;
}

/** A SASL setting: the words say SASL (or Kafka) and the part. */
function saslScore(part: 'USER' | 'PASS') {
  return (env: EnvFact): number => {
    const words = wordsOf(env.name);
    const matches = words.some((w) => w.startsWith(part));
    if (!matches) return 0;
    if (words.includes('SASL')) return 4;
    return words.includes('KAFKA') ? 3 : 0;
  };
}

function mechanismOf(env: readonly EnvFact[]): (typeof KAFKA_SASL_MECHANISMS)[number] | undefined {
  for (const e of env) {
    const words = wordsOf(e.name);
    if (!words.includes('SASL') || !words.includes('MECHANISM')) continue;
    const value = plainLiteral(e)?.trim().toUpperCase();
    const known = KAFKA_SASL_MECHANISMS.find((m) => m === value);
    if (known !== undefined) return known;
  }
  return undefined;
}

/** The consumer's security.protocol when the env writes it out (KAFKA_SECURITY_PROTOCOL=SSL). */
function securityProtocolOf(env: readonly EnvFact[]): { value: string; from: string } | undefined {
  for (const e of env) {
    const words = wordsOf(e.name);
    if (!(words.includes('SECURITY') && words.includes('PROTOCOL'))) continue;
    const value = plainLiteral(e)?.trim().toUpperCase();
    if (value !== undefined) return { value, from: e.name };
  }
  return undefined;
}

export const kafkaRules: ProposalRules<'kafka'> = {
  provider: 'kafka',
  source: {
    field: 'sourceEnv',
    what: 'topic',
    required: true,
    literal: true,
    example: 'ORDERS_TOPIC=orders',
    score: topicScore,
  },
  perQueue: [
    {
      field: 'groupEnv',
      what: l10n.t('consumer group'),
      required: true,
      literal: true,
      example: 'KAFKA_GROUP_ID=orders-app',
      score: groupScore,
    },
  ],
  connection: [
    {
      field: 'brokersEnv',
      what: l10n.t('bootstrap brokers (host:port,…)'),
      required: true,
      example: 'KAFKA_BOOTSTRAP_SERVERS=kafka:9092',
      score: brokersScore,
    },
    {
      field: 'sasl.usernameEnv',
      what: l10n.t('SASL username'),
      example: 'KAFKA_SASL_USERNAME',
      score: saslScore('USER'),
    },
    {
      field: 'sasl.passwordEnv',
      what: l10n.t('SASL password'),
      example: 'KAFKA_SASL_PASSWORD',
      score: saslScore('PASS'),
    },
  ],
  questions: [
    {
      key: 'offsetReset',
      title: l10n.t('where a partition without a committed offset starts (the consumer’s auto.offset.reset)'),
      answers: [
        { value: 'latest', description: l10n.t('new records only: Kafka’s default') },
        { value: 'earliest', description: l10n.t('from the oldest record kept') },
      ],
      infer: (env) => {
        for (const e of env) {
          const words = wordsOf(e.name);
          if (!(words.includes('OFFSET') && words.includes('RESET'))) continue;
          const value = plainLiteral(e)?.trim().toLowerCase();
          const known = OFFSET_RESETS.find((o) => o === value);
          if (known !== undefined) return { value: known, from: e.name };
        }
        return undefined;
      },
    },
  ],
  block({ fields, answers, env }) {
    const notes: string[] = [];
    const offsetReset = OFFSET_RESETS.find((o) => o === answers.offsetReset) ?? 'latest';
    const block: KafkaBlock = {
      brokersEnv: fields.brokersEnv ?? '',
      ...(fields.sourceEnv !== undefined ? { sourceEnv: fields.sourceEnv } : {}),
      ...(fields.groupEnv !== undefined ? { groupEnv: fields.groupEnv } : {}),
      offsetReset,
    };
    const username = fields['sasl.usernameEnv'];
    const password = fields['sasl.passwordEnv'];
    if (username !== undefined && password !== undefined) {
      const mechanism = mechanismOf(env);
      if (mechanism !== undefined) block.sasl = { mechanism, usernameEnv: username, passwordEnv: password };
      else
        notes.push(
          l10n.t(
            'SASL credentials ({0}, {1}) but no literal SASL mechanism in the env: add kafka.sasl with its mechanism ({2}) by hand.',
            username,
            password,
            KAFKA_SASL_MECHANISMS.join(', '),
          ),
        );
    }
    const protocol = securityProtocolOf(env);
    if (protocol !== undefined && protocol.value.endsWith('SSL')) {
      block.tls = {};
      notes.push(
        l10n.t(
          '{0} is {1}: kafka.tls is {} (the system CAs); name the CA Secret (caSecret, caKey) if the brokers use a private CA.',
          protocol.from,
          protocol.value,
        ),
      );
    }
    return { block, notes };
  },
  nameFromValue: (topic) => topic,
};
