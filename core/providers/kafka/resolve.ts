// A Kafka queue resolved against the pod template (docs/design.md §3, workload stage): the literal
// topic and group the controller overrides, and the connection env the queue-agent copies.
import { copied, dedupe, literalOf } from '../../queueConfig/envResolution';
import type { ResolveContext } from '../../queueConfig/resolveContext';
import type { CopiedEnv, ResolvedQueueBase } from '../../queueConfig/resolvedTypes';
import { literalSetting } from '../../queueConfig/settingResolution';
import { describeSetting, settingField, type SettingRef } from '../../queueConfig/settingRef';
import { checkTlsSecret } from '../../queueConfig/tlsSecret';
import { fieldError } from '../../result';
import type { KafkaBlock } from './declaration';
import { normaliseKafkaBrokers } from './ownership';

/** The roles of a Kafka connection's env vars. */
export const KAFKA_ENV_ROLES = {
  brokers: { address: 'hostList' },
  username: {},
  password: { secret: true },
} as const;
export type KafkaRole = keyof typeof KAFKA_ENV_ROLES;

export interface ResolvedKafkaQueue extends ResolvedQueueBase<KafkaRole> {
  provider: 'kafka';
  /** Where the container reads its group: what the controller overrides with the application
   * shadow group. */
  groupAt: SettingRef;
  group: string;
  offsetReset: KafkaBlock['offsetReset'];
  /** Declared only; absent means read_committed. */
  isolationLevel?: NonNullable<KafkaBlock['isolationLevel']>;
  saslMechanism?: NonNullable<KafkaBlock['sasl']>['mechanism'];
}

const KAFKA_TOPIC = /^[a-zA-Z0-9._-]{1,249}$/;

export function resolveKafka(
  name: string,
  block: KafkaBlock,
  ctx: ResolveContext,
): ResolvedKafkaQueue | undefined {
  const base = `${ctx.path}.kafka`;
  const sourceFields = { env: 'sourceEnv', file: 'sourceFile' };
  const resolvedSource = literalSetting(block.sourceEnv, block.sourceFile, sourceFields, base, 'topic', ctx);
  const source = resolvedSource?.value;
  if (resolvedSource && !(KAFKA_TOPIC.test(resolvedSource.value) && source !== '.' && source !== '..')) {
    ctx.errors.push(
      fieldError(
        `${base}.${settingField(resolvedSource.at, sourceFields)}`,
        `${describeSetting(resolvedSource.at)} is "${resolvedSource.value}", which is not a valid Kafka topic name.`,
        'Use the topic name: up to 249 of a-z A-Z 0-9 . _ -.',
      ),
    );
  }
  const group = literalSetting(
    block.groupEnv,
    block.groupFile,
    { env: 'groupEnv', file: 'groupFile' },
    base,
    'consumer group',
    ctx,
  );
  const env = [
    ...copied(block.brokersEnv, 'brokers', `${base}.brokersEnv`, ctx),
    ...(block.sasl ? copied(block.sasl.usernameEnv, 'username', `${base}.sasl.usernameEnv`, ctx) : []),
    ...(block.sasl ? copied(block.sasl.passwordEnv, 'password', `${base}.sasl.passwordEnv`, ctx) : []),
  ];
  checkLiteralBrokers(env, block.brokersEnv, `${base}.brokersEnv`, ctx);
  checkTlsSecret(block.tls, `${base}.tls.caSecret`, ctx);
  if (resolvedSource === undefined || group === undefined) return undefined;
  return {
    provider: 'kafka',
    name,
    container: ctx.env.container.name,
    sourceAt: resolvedSource.at,
    source: resolvedSource.value,
    groupAt: group.at,
    group: group.value,
    offsetReset: block.offsetReset,
    ...(block.isolationLevel ? { isolationLevel: block.isolationLevel } : {}),
    env: dedupe(env),
    ...(block.tls ? { tls: block.tls } : {}),
    ...(block.sasl ? { saslMechanism: block.sasl.mechanism } : {}),
  };
}

/** A literal broker list must be one: the controller cannot check a Secret's value. */
function checkLiteralBrokers(
  env: readonly CopiedEnv<string>[],
  name: string,
  path: string,
  ctx: ResolveContext,
): void {
  const value = literalOf(env, name);
  if (value === undefined) return;
  const brokers = normaliseKafkaBrokers(value, path);
  if (!brokers.ok) {
    ctx.errors.push(
      fieldError(
        path,
        `${name} is "${value}", which is not a broker list.`,
        'Set it to host:port[,host:port].',
      ),
    );
  }
}
