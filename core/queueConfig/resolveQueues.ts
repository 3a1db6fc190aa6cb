// Workload stage (docs/design.md §3): checks a declaration against the pod template and resolves, per
// queue, what the controller and the queue-agent need — the literal source and group, and the
// exact env sources the agent pod copies. The rules keep the agent from ever needing more than
// the workload already has: it copies env entries verbatim (secretKeyRef stays a reference, no
// Secret value is read) and may only use TLS Secrets the container already uses.
import { fail, fieldError, ok, type FieldError, type Result } from '../result';
import { ContainerEnv } from './containerEnv';
import { copied, dedupe, literal, literalOf } from './envResolution';
import { plainHttpManagement, plainHttpManagementError } from './managementTransport';
import type { Container, PodTemplateSpec } from './podTemplate';
import type { ResolveContext } from './resolveContext';
import type { ResolvedKafkaQueue, ResolvedQueue, ResolvedRabbitQueue } from './resolvedTypes';
import { assertNever } from '../providers';
import {
  declaredBlock,
  type DeclaredBlock,
  type KafkaBlock,
  type QueueConfig,
  type QueueDeclaration,
  type RabbitBlock,
} from './schema';
import {
  checkLiteralBrokers,
  checkLiteralUrl,
  checkTlsSecret,
  duplicateSources,
  overrideCollisions,
} from './workloadChecks';

export type {
  CopiedEnv,
  EnvRole,
  ResolvedKafkaQueue,
  ResolvedQueue,
  ResolvedRabbitQueue,
} from './resolvedTypes';

const KAFKA_TOPIC = /^[a-zA-Z0-9._-]{1,249}$/;

/** Resolves every queue; any error anywhere fails the whole declaration (no partial split). */
export function resolveQueues(
  config: QueueConfig,
  template: PodTemplateSpec | undefined,
): Result<ResolvedQueue[]> {
  const containers = Array.isArray(template?.spec?.containers) ? template.spec.containers : [];
  const errors: FieldError[] = [];
  const resolved: ResolvedQueue[] = [];
  config.queues.forEach((queue, index) => {
    const path = `queues[${index}]`;
    const container = pickContainer(queue, containers, path, errors);
    if (!container) return;
    const env = new ContainerEnv(container);
    const context: ResolveContext = { env, template, path, errors };
    const before = errors.length;
    const declared = declaredBlock(queue);
    const queueResolved = resolveDeclared(queue.name, declared, context);
    if (queueResolved && errors.length === before) resolved.push(queueResolved);
  });
  errors.push(...overrideCollisions(config.queues, resolved), ...duplicateSources(config.queues, resolved));
  return errors.length > 0 ? fail(errors) : ok(resolved);
}

function pickContainer(
  queue: QueueDeclaration,
  containers: readonly Container[],
  path: string,
  errors: FieldError[],
): Container | undefined {
  const names = containers.map((c) => c.name);
  const listed = names.length > 0 ? names.join(', ') : 'none';
  if (queue.container !== undefined) {
    const found = containers.find((c) => c.name === queue.container);
    if (!found) {
      errors.push(
        fieldError(
          `${path}.container`,
          `names "${queue.container}", but the pod template has no such container (containers: ${listed}).`,
          `Use one of: ${listed}.`,
        ),
      );
    }
    return found;
  }
  if (containers.length === 1) return containers[0];
  errors.push(
    fieldError(
      `${path}.container`,
      containers.length === 0
        ? 'cannot be resolved: the pod template has no containers.'
        : `is required: the pod template has ${containers.length} containers (${listed}).`,
      containers.length === 0
        ? 'Check that the annotation is on the right workload.'
        : `Add container: <one of ${listed}>.`,
    ),
  );
  return undefined;
}

function resolveDeclared(
  name: string,
  declared: DeclaredBlock,
  ctx: ResolveContext,
): ResolvedQueue | undefined {
  switch (declared.provider) {
    case 'kafka':
      return resolveKafka(name, declared.block, ctx);
    case 'rabbitmq':
      return resolveRabbit(name, declared.block, ctx);
    default:
      return assertNever(declared, 'provider block');
  }
}

function resolveKafka(name: string, block: KafkaBlock, ctx: ResolveContext): ResolvedKafkaQueue | undefined {
  const base = `${ctx.path}.kafka`;
  const source = literal(block.sourceEnv, `${base}.sourceEnv`, 'topic', ctx);
  if (source !== undefined && !(KAFKA_TOPIC.test(source) && source !== '.' && source !== '..')) {
    ctx.errors.push(
      fieldError(
        `${base}.sourceEnv`,
        `${block.sourceEnv} is "${source}", which is not a valid Kafka topic name.`,
        'Use the topic name: up to 249 of a-z A-Z 0-9 . _ -.',
      ),
    );
  }
  const group = literal(block.groupEnv, `${base}.groupEnv`, 'consumer group', ctx);
  const env = [
    ...copied(block.brokersEnv, 'brokers', `${base}.brokersEnv`, ctx),
    ...(block.sasl ? copied(block.sasl.usernameEnv, 'username', `${base}.sasl.usernameEnv`, ctx) : []),
    ...(block.sasl ? copied(block.sasl.passwordEnv, 'password', `${base}.sasl.passwordEnv`, ctx) : []),
  ];
  checkLiteralBrokers(env, block.brokersEnv, `${base}.brokersEnv`, ctx);
  checkTlsSecret(block.tls, `${base}.tls.caSecret`, ctx);
  if (source === undefined || group === undefined) return undefined;
  return {
    provider: 'kafka',
    name,
    container: ctx.env.container.name,
    sourceEnv: block.sourceEnv,
    source,
    groupEnv: block.groupEnv,
    group,
    offsetReset: block.offsetReset,
    ...(block.isolationLevel ? { isolationLevel: block.isolationLevel } : {}),
    env: dedupe(env),
    ...(block.tls ? { tls: block.tls } : {}),
    ...(block.sasl ? { saslMechanism: block.sasl.mechanism } : {}),
  };
}

function resolveRabbit(
  name: string,
  block: RabbitBlock,
  ctx: ResolveContext,
): ResolvedRabbitQueue | undefined {
  const base = `${ctx.path}.rabbitmq`;
  const source = literal(block.sourceEnv, `${base}.sourceEnv`, 'queue', ctx);
  if (source !== undefined && (Buffer.byteLength(source) > 255 || source.startsWith('amq.'))) {
    ctx.errors.push(
      fieldError(
        `${base}.sourceEnv`,
        `${block.sourceEnv} is "${source}", which is not a usable RabbitMQ queue name.`,
        'Use a queue name of at most 255 bytes that does not start with "amq.".',
      ),
    );
  }
  const env = [
    ...copied(block.urlEnv, 'url', `${base}.urlEnv`, ctx),
    ...copied(block.managementUrlEnv, 'managementUrl', `${base}.managementUrlEnv`, ctx),
    ...(block.usernameEnv ? copied(block.usernameEnv, 'username', `${base}.usernameEnv`, ctx) : []),
    ...(block.passwordEnv ? copied(block.passwordEnv, 'password', `${base}.passwordEnv`, ctx) : []),
  ];
  checkLiteralUrl(env, block.urlEnv, ['amqp:', 'amqps:'], `${base}.urlEnv`, ctx, block.tls !== undefined);
  checkLiteralUrl(env, block.managementUrlEnv, ['http:', 'https:'], `${base}.managementUrlEnv`, ctx, false);
  checkTlsSecret(block.tls, `${base}.tls.caSecret`, ctx);
  if (
    !block.allowPlainHttpManagement &&
    plainHttpManagement({
      amqpUrl: literalOf(env, block.urlEnv),
      managementUrl: literalOf(env, block.managementUrlEnv),
      tls: block.tls !== undefined,
    })
  ) {
    ctx.errors.push(plainHttpManagementError(base, block.urlEnv, block.managementUrlEnv));
  }
  if (source === undefined) return undefined;
  return {
    provider: 'rabbitmq',
    name,
    container: ctx.env.container.name,
    sourceEnv: block.sourceEnv,
    source,
    env: dedupe(env),
    ...(block.tls ? { tls: block.tls } : {}),
    ...(block.allowPlainHttpManagement ? { allowPlainHttpManagement: true as const } : {}),
  };
}
