// The `telepresence.io/queue-config` annotation (docs/design.md §3) as a zod schema: the single source of
// its TypeScript types, its JSON Schema (deploy/schema/) and the schema stage of validation.
// Objects are strict: a typo such as `brokerEnv` must fail, not silently drop a setting.
import { z } from 'zod';
import { assertNever, type Provider } from '../providers';

export const QUEUE_CONFIG_ANNOTATION = 'telepresence.io/queue-config';

export const KAFKA_SASL_MECHANISMS = ['PLAIN', 'SCRAM-SHA-256', 'SCRAM-SHA-512'] as const;
export const OFFSET_RESETS = ['earliest', 'latest'] as const;
export const ISOLATION_LEVELS = ['read_committed', 'read_uncommitted'] as const;
export const MAX_QUEUES = 32;

/** Patterns with the words an error uses for them; zod reports only the pattern that failed. */
export const PATTERNS = {
  /** Kubernetes' rule for env var names (C_IDENTIFIER plus '-' and '.'). */
  envName: {
    regex: /^[-._a-zA-Z][-._a-zA-Z0-9]*$/,
    what: 'an environment variable name',
    fix: 'Use the name of an env var of the container: letters, digits, "_", "-", "."; not starting with a digit.',
  },
  /** Logical queue names appear in labels and resource names, so they are DNS labels. */
  queueName: {
    regex: /^[a-z0-9]([-a-z0-9]*[a-z0-9])?$/,
    what: 'a logical queue name',
    fields: ['name'],
    fix: 'Use lowercase letters, digits and "-", starting and ending with a letter or digit, e.g. orders.',
  },
  containerName: {
    regex: /^[a-z0-9]([-a-z0-9]*[a-z0-9])?$/,
    what: 'a container name',
    fields: ['container'],
    fix: 'Use the name of a container in the pod template (lowercase letters, digits, "-").',
  },
  secretName: {
    regex: /^[a-z0-9]([-a-z0-9]*[a-z0-9])?(\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*$/,
    what: 'a Secret name',
    fix: 'Use the name of a Secret in the workload namespace (lowercase letters, digits, "-", ".").',
  },
  secretKey: {
    regex: /^[-._a-zA-Z0-9]+$/,
    what: 'a Secret key',
    fix: 'Use a key of the Secret, e.g. ca.crt.',
  },
} as const;

type PatternName = keyof typeof PATTERNS;

function patterned(name: PatternName, max: number, description: string) {
  return z.string().min(1).max(max).regex(PATTERNS[name].regex).describe(description);
}

const envName = (description: string) => patterned('envName', 253, description);

export const tlsSchema = z
  .strictObject({
    caSecret: patterned(
      'secretName',
      253,
      'Secret in the workload namespace with the CA bundle. It must already be used by the container (env or mounted volume). Omit to trust the system CAs.',
    ).optional(),
    caKey: patterned('secretKey', 253, 'Key of caSecret holding the PEM CA bundle, e.g. ca.crt.').optional(),
  })
  .describe('Connect with TLS. `{}` trusts the system CAs; caSecret and caKey go together.');

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
    sourceEnv: envName('Env var whose literal value is the topic the container consumes.'),
    groupEnv: envName('Env var whose literal value is the consumer group id.'),
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

export const rabbitBlockSchema = z
  .strictObject({
    urlEnv: envName('Env var with the amqp:// or amqps:// URL (may carry the credentials).'),
    managementUrlEnv: envName('Env var with the management API URL (http(s)://host:15672).'),
    sourceEnv: envName('Env var whose literal value is the queue the container consumes.'),
    usernameEnv: envName(
      'Env var with the username, when the URL carries none. Goes with passwordEnv.',
    ).optional(),
    passwordEnv: envName(
      'Env var with the password, when the URL carries none. Goes with usernameEnv.',
    ).optional(),
    tls: tlsSchema.optional(),
    allowPlainHttpManagement: z
      .literal(true)
      .describe(
        'Accept a plain http:// management URL although AMQP uses TLS: the management credentials then cross the network unencrypted. Only for a network you trust.',
      )
      .optional(),
  })
  .describe('The queue is a RabbitMQ queue (durable classic or quorum).');

const queueName = patterned(
  'queueName',
  63,
  'Logical name, unique in the workload; the only name users type.',
);
const containerName = patterned(
  'containerName',
  63,
  'Container that consumes the queue; required unless the pod has exactly one container.',
).optional();

export const kafkaQueueSchema = z.strictObject({
  name: queueName,
  container: containerName,
  kafka: kafkaBlockSchema,
});
export const rabbitQueueSchema = z.strictObject({
  name: queueName,
  container: containerName,
  rabbitmq: rabbitBlockSchema,
});

export const queueConfigSchema = z
  .strictObject({
    queues: z
      .array(z.union([kafkaQueueSchema, rabbitQueueSchema]))
      .min(1)
      .max(MAX_QUEUES)
      .describe('The queues the workload consumes, each with exactly one provider block.'),
  })
  .describe(`Value of the ${QUEUE_CONFIG_ANNOTATION} annotation on a Deployment or StatefulSet.`);

export type KafkaBlock = z.infer<typeof kafkaBlockSchema>;
export type RabbitBlock = z.infer<typeof rabbitBlockSchema>;
export type TlsBlock = z.infer<typeof tlsSchema>;
export type KafkaQueueDeclaration = z.infer<typeof kafkaQueueSchema>;
export type RabbitQueueDeclaration = z.infer<typeof rabbitQueueSchema>;
export type QueueDeclaration = KafkaQueueDeclaration | RabbitQueueDeclaration;
export interface QueueConfig {
  queues: QueueDeclaration[];
}

/** A declared queue's one provider block, with the provider it names. */
export type DeclaredBlock =
  { provider: 'kafka'; block: KafkaBlock } | { provider: 'rabbitmq'; block: RabbitBlock };

export function declaredBlock(queue: QueueDeclaration): DeclaredBlock {
  // The schema allows exactly one provider block; its key is the provider.
  if ('kafka' in queue) return { provider: 'kafka', block: queue.kafka };
  if ('rabbitmq' in queue) return { provider: 'rabbitmq', block: queue.rabbitmq };
  return assertNever(queue, 'queue declaration');
}

export function providerOf(queue: QueueDeclaration): Provider {
  return declaredBlock(queue).provider;
}
