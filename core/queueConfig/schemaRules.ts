// Schema-stage rules a per-field schema cannot express: unique queue names, one env var per
// setting within a queue, and settings that only make sense in pairs.
import { joinPath } from '../fieldPath';
import { coreProvider } from '../providers/registry';
import { fieldError, type FieldError } from '../result';
import { declaredBlock, type QueueDeclaration } from './schema';

/** Env var settings of a queue as [path below the queue, env var name]. */
function envSettings(queue: QueueDeclaration): [string, string][] {
  const { provider, block } = declaredBlock(queue);
  return coreProvider(provider)
    .envSettings(block)
    .map(([setting, env]) => [`${provider}.${setting}`, env]);
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
  const { provider, block } = declaredBlock(queue);
  return coreProvider(provider).blockErrors(block, `${path}.${provider}`);
}
