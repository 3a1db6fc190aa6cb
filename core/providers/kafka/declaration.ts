// Kafka's block of the `telepresence.io/queue-config` annotation (docs/design.md §3): its schema
// and the rules across its fields.
import { z } from 'zod';
import {
  envName,
  fileSettingSchema,
  oneSettingErrors,
  tlsPairingErrors,
  tlsSchema,
} from '../../queueConfig/blocks';
import type { FieldError } from '../../result';

export const KAFKA_SASL_MECHANISMS = ['PLAIN', 'SCRAM-SHA-256', 'SCRAM-SHA-512'] as const;
export const OFFSET_RESETS = ['earliest', 'latest'] as const;
export const ISOLATION_LEVELS = ['read_committed', 'read_uncommitted'] as const;

const saslSchema = z
  .strictObject({
    mechanism: z.enum(KAFKA_SASL_MECHANISMS).describe('SASL mechanism.'),
    usernameEnv: envName('Env var with the SASL username.'),
    passwordEnv: envName('Env var with the SASL password (usually a secretKeyRef).'),
  })
  .describe('SASL authentication. Without tls this is SASL_PLAINTEXT, with tls SASL_SSL.');

export const kafkaBlockSchema = z
  .strictObject({
    brokersEnv: envName('Env var with the bootstrap brokers, host:port[,host:port].'),
    sourceEnv: envName(
      'Env var whose literal value is the topic the container consumes. Or sourceFile, when it reads the topic from a mounted file.',
    ).optional(),
    sourceFile: fileSettingSchema
      .describe(
        'The key of a mounted config file whose literal value is the topic the container consumes (instead of sourceEnv).',
      )
      .optional(),
    groupEnv: envName(
      'Env var whose literal value is the consumer group id. Or groupFile, when it reads the group from a mounted file.',
    ).optional(),
    groupFile: fileSettingSchema
      .describe(
        'The key of a mounted config file whose literal value is the consumer group id (instead of groupEnv).',
      )
      .optional(),
    offsetReset: z
      .enum(OFFSET_RESETS)
      .describe('Where a partition without a committed offset starts (the consumer auto.offset.reset).'),
    isolationLevel: z
      .enum(ISOLATION_LEVELS)
      .describe(
        "The consumer's isolation.level, which the split reads the topic at: read_committed (the default) never copies records of aborted transactions; read_uncommitted copies every record, as such a consumer reads it.",
      )
      .optional(),
    tls: tlsSchema.optional(),
    sasl: saslSchema.optional(),
  })
  .describe('The queue is a Kafka topic consumed by a consumer group.');

export type KafkaBlock = z.infer<typeof kafkaBlockSchema>;

/** The block's env var settings as [path below the block, env var name]. */
export function kafkaEnvSettings(k: KafkaBlock): [string, string][] {
  return [
    ['brokersEnv', k.brokersEnv],
    ...(k.sourceEnv !== undefined ? ([['sourceEnv', k.sourceEnv]] as [string, string][]) : []),
    ...(k.groupEnv !== undefined ? ([['groupEnv', k.groupEnv]] as [string, string][]) : []),
    ...(k.sasl
      ? ([
          ['sasl.usernameEnv', k.sasl.usernameEnv],
          ['sasl.passwordEnv', k.sasl.passwordEnv],
        ] as [string, string][])
      : []),
  ];
}

export function kafkaBlockErrors(k: KafkaBlock, path: string): FieldError[] {
  return [
    ...oneSettingErrors(k.sourceEnv, k.sourceFile, path, { env: 'sourceEnv', file: 'sourceFile' }, 'topic'),
    ...oneSettingErrors(
      k.groupEnv,
      k.groupFile,
      path,
      { env: 'groupEnv', file: 'groupFile' },
      'consumer group',
    ),
    ...tlsPairingErrors(k.tls, `${path}.tls`),
  ];
}
