// Checks of the workload stage beyond "where does the value come from": literal values that can
// be verified without a broker, TLS Secrets the container already uses, and env vars two queues
// would both need to override.
import { assertNever } from '../providers';
import { normaliseKafkaBrokers, sourceOwnershipKey } from '../sourceOwnership';
import { fieldError, type FieldError } from '../result';
import { literalOf } from './envResolution';
import type { Container, PodTemplateSpec } from './podTemplate';
import type { ResolveContext } from './resolveContext';
import type { CopiedEnv, ResolvedQueue } from './resolvedTypes';
import type { QueueDeclaration, TlsBlock } from './schema';

export function checkLiteralBrokers(
  env: readonly CopiedEnv[],
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

export function checkLiteralUrl(
  env: readonly CopiedEnv[],
  name: string,
  schemes: readonly string[],
  path: string,
  ctx: ResolveContext,
  tlsRequired: boolean,
): void {
  const value = literalOf(env, name);
  if (value === undefined) return;
  let protocol: string;
  try {
    protocol = new URL(value).protocol;
  } catch {
    ctx.errors.push(fieldError(path, `${name} is not a URL.`, `Set it to a ${schemes.join(' or ')}// URL.`));
    return;
  }
  if (!schemes.includes(protocol)) {
    ctx.errors.push(
      fieldError(path, `${name} has scheme "${protocol}".`, `Use a ${schemes.join(' or ')}// URL.`),
    );
  } else if (tlsRequired && protocol !== 'amqps:') {
    ctx.errors.push(
      fieldError(
        path,
        `${name} is a plain amqp: URL, but the queue declares tls.`,
        'Use an amqps:// URL, or remove the tls block.',
      ),
    );
  }
}

export function checkTlsSecret(tls: TlsBlock | undefined, path: string, ctx: ResolveContext): void {
  const secret = tls?.caSecret;
  if (secret === undefined) return;
  if (ctx.env.usesSecret(secret) || mountsSecret(ctx.env.container, ctx.template, secret)) return;
  ctx.errors.push(
    fieldError(
      path,
      `Secret "${secret}" is not used by container "${ctx.env.container.name}" (neither its env nor a mounted volume); the queue-agent may only use Secrets the workload already uses.`,
      `Reference it from the container (e.g. mount it as a volume), or name a Secret it already uses.`,
    ),
  );
}

function mountsSecret(container: Container, template: PodTemplateSpec | undefined, secret: string): boolean {
  const mounted = new Set((container.volumeMounts ?? []).map((m) => m.name));
  return (template?.spec?.volumes ?? []).some(
    (volume) =>
      mounted.has(volume.name) &&
      (volume.secret?.secretName === secret ||
        (volume.projected?.sources ?? []).some((s) => s.secret?.name === secret)),
  );
}

/**
 * The controller overrides sourceEnv and groupEnv per queue; two queues sharing one of those
 * variables in a container would need two values in one variable.
 */
export function overrideCollisions(
  queues: readonly QueueDeclaration[],
  resolved: readonly ResolvedQueue[],
): FieldError[] {
  const errors: FieldError[] = [];
  const owners = new Map<string, string>();
  for (const queue of resolved) {
    const index = queues.findIndex((q) => q.name === queue.name);
    const overrides: [string, string][] = [[`queues[${index}].${queue.provider}.sourceEnv`, queue.sourceEnv]];
    if (queue.provider === 'kafka') overrides.push([`queues[${index}].kafka.groupEnv`, queue.groupEnv]);
    for (const [path, name] of overrides) {
      const key = `${queue.container}\u0000${name}`;
      const owner = owners.get(key);
      if (owner !== undefined) {
        errors.push(
          fieldError(
            path,
            `${name} in container "${queue.container}" is also ${owner}; the split overrides it per queue, so one variable cannot serve two queues.`,
            'Give each queue its own source and group env vars in the container.',
          ),
        );
      } else {
        owners.set(key, path);
      }
    }
  }
  return errors;
}

/**
 * Two entries that consume one source the same way (one topic and group on one cluster, one
 * queue on one broker: the same ownership key) would each get an engine copying the whole
 * source, so every message would be split twice. The key compares endpoints as literals or as
 * the Secret/ConfigMap reference they come from, as the controller's ownership Leases do.
 */
export function duplicateSources(
  queues: readonly QueueDeclaration[],
  resolved: readonly ResolvedQueue[],
): FieldError[] {
  const errors: FieldError[] = [];
  const first = new Map<string, { index: number; queue: ResolvedQueue }>();
  for (const queue of resolved) {
    const index = queues.findIndex((q) => q.name === queue.name);
    // One workload, one namespace: any constant serves the comparison.
    const key = sourceOwnershipKey('', queue);
    const earlier = first.get(key);
    if (!earlier) {
      first.set(key, { index, queue });
      continue;
    }
    const what = sameSource(queue);
    errors.push(
      fieldError(
        `queues[${index}].${queue.provider}.sourceEnv`,
        `${queue.sourceEnv} makes "${queue.name}" the same source as queues[${earlier.index}] ("${earlier.queue.name}"): the ${what} on the same broker. Each entry would copy every message of it.`,
        `Declare the source once: remove one of "${earlier.queue.name}" and "${queue.name}", or point it at its own topic/queue.`,
      ),
    );
  }
  return errors;
}

/** How an error names the source a queue consumes. */
function sameSource(queue: ResolvedQueue): string {
  switch (queue.provider) {
    case 'kafka':
      return `topic "${queue.source}" read by group "${queue.group}"`;
    case 'rabbitmq':
      return `queue "${queue.source}"`;
    default:
      return assertNever(queue, 'queue');
  }
}
