// Workload stage (docs/design.md §3): checks a declaration against the pod template and resolves, per
// queue, what the controller and the queue-agent need — the literal source and group, and the
// exact env sources the agent pod copies. The rules keep the agent from ever needing more than
// the workload already has: it copies env entries verbatim (secretKeyRef stays a reference, no
// Secret value is read) and may only use TLS Secrets the container already uses.
import { coreProvider } from '../providers/registry';
import { fail, fieldError, ok, type FieldError, type Result } from '../result';
import { ContainerEnv } from './containerEnv';
import type { ConfigMapLookup } from './fileResolution';
import type { Container, PodTemplateSpec } from './podTemplate';
import type { ResolveContext } from './resolveContext';
import type { ResolvedQueue } from './resolvedTypes';
import { declaredBlock, type DeclaredBlock, type QueueConfig, type QueueDeclaration } from './schema';
import { duplicateSources, overrideCollisions } from './workloadChecks';

export type { CopiedEnv, EnvRole, ResolvedQueue, ResolvedQueueOf } from './resolvedTypes';

/** Resolves every queue; any error anywhere fails the whole declaration (no partial split). */
export function resolveQueues(
  config: QueueConfig,
  template: PodTemplateSpec | undefined,
  configMaps?: ConfigMapLookup,
): Result<ResolvedQueue[]> {
  const containers = Array.isArray(template?.spec?.containers) ? template.spec.containers : [];
  const errors: FieldError[] = [];
  const resolved: ResolvedQueue[] = [];
  config.queues.forEach((queue, index) => {
    const path = `queues[${index}]`;
    const container = pickContainer(queue, containers, path, errors);
    if (!container) return;
    const env = new ContainerEnv(container);
    const context: ResolveContext = { env, template, path, errors, configMaps };
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

/** The queue resolved by its provider (core/providers/<provider>/resolve.ts). */
function resolveDeclared(
  name: string,
  { provider, block }: DeclaredBlock,
  ctx: ResolveContext,
): ResolvedQueue | undefined {
  return coreProvider(provider).resolve(name, block, ctx);
}
