// Schema-stage rules a per-field schema cannot express: unique queue names, one env var per
// setting within a queue, and settings that only make sense in pairs.
import { joinPath } from '../fieldPath';
import { fieldError, type FieldError } from '../result';
import { assertNever } from '../providers';
import {
  declaredBlock,
  type KafkaBlock,
  type QueueDeclaration,
  type RabbitBlock,
  type TlsBlock,
} from './schema';

/** Env var settings of a queue as [path below the queue, env var name]. */
export function envSettings(queue: QueueDeclaration): [string, string][] {
  const declared = declaredBlock(queue);
  switch (declared.provider) {
    case 'kafka':
      return kafkaEnvSettings(declared.block);
    case 'rabbitmq':
      return rabbitEnvSettings(declared.block);
    default:
      return assertNever(declared, 'provider block');
  }
}

function kafkaEnvSettings(k: KafkaBlock): [string, string][] {
  return [
    ['kafka.brokersEnv', k.brokersEnv],
    ['kafka.sourceEnv', k.sourceEnv],
    ['kafka.groupEnv', k.groupEnv],
    ...(k.sasl
      ? ([
          ['kafka.sasl.usernameEnv', k.sasl.usernameEnv],
          ['kafka.sasl.passwordEnv', k.sasl.passwordEnv],
        ] as [string, string][])
      : []),
  ];
}

function rabbitEnvSettings(r: RabbitBlock): [string, string][] {
  const settings: [string, string][] = [
    ['rabbitmq.urlEnv', r.urlEnv],
    ['rabbitmq.managementUrlEnv', r.managementUrlEnv],
    ['rabbitmq.sourceEnv', r.sourceEnv],
  ];
  if (r.usernameEnv) settings.push(['rabbitmq.usernameEnv', r.usernameEnv]);
  if (r.passwordEnv) settings.push(['rabbitmq.passwordEnv', r.passwordEnv]);
  return settings;
}

export function crossQueueErrors(queues: readonly QueueDeclaration[]): FieldError[] {
  const errors: FieldError[] = [];
  const names = new Map<string, number>();
  queues.forEach((queue, index) => {
    const path = joinPath('queues', index);
    const first = names.get(queue.name);
    if (first !== undefined) {
      errors.push(
        fieldError(
          joinPath(path, 'name'),
          `"${queue.name}" is already the name of queues[${first}].`,
          'Give every queue its own name; it is the name users pick in VS Code.',
        ),
      );
    } else {
      names.set(queue.name, index);
    }
    errors.push(...sharedEnvErrors(queue, path), ...pairingErrors(queue, path));
  });
  return errors;
}

function sharedEnvErrors(queue: QueueDeclaration, path: string): FieldError[] {
  const errors: FieldError[] = [];
  const seen = new Map<string, string>();
  for (const [setting, env] of envSettings(queue)) {
    const earlier = seen.get(env);
    if (earlier !== undefined) {
      errors.push(
        fieldError(
          `${path}.${setting}`,
          `uses ${env}, which is already this queue's ${earlier.split('.').pop() ?? earlier}.`,
          'Each setting needs its own env var.',
        ),
      );
    } else {
      seen.set(env, setting);
    }
  }
  return errors;
}

function pairingErrors(queue: QueueDeclaration, path: string): FieldError[] {
  const errors: FieldError[] = [];
  const declared = declaredBlock(queue);
  const block = declared.provider;
  const tls: TlsBlock | undefined = declared.block.tls;
  if (tls && (tls.caSecret === undefined) !== (tls.caKey === undefined)) {
    const missing = tls.caSecret === undefined ? 'caSecret' : 'caKey';
    errors.push(
      fieldError(
        `${path}.${block}.tls.${missing}`,
        'is required when the other of caSecret/caKey is set.',
        'Give both caSecret and caKey, or neither to trust the system CAs.',
      ),
    );
  }
  if (
    declared.provider === 'rabbitmq' &&
    (declared.block.usernameEnv === undefined) !== (declared.block.passwordEnv === undefined)
  ) {
    const missing = declared.block.usernameEnv === undefined ? 'usernameEnv' : 'passwordEnv';
    errors.push(
      fieldError(
        `${path}.rabbitmq.${missing}`,
        'is required when the other of usernameEnv/passwordEnv is set.',
        'Give both, or neither when the URL carries the credentials.',
      ),
    );
  }
  return errors;
}
