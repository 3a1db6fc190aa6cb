// Resolving the env vars a queue names: the literal values the controller must read (source,
// group) and the entries the queue-agent copies verbatim, following $(NAME) expansions.
import { fieldError } from '../result';
import { classifySource, expansionRefs, usesExpansion } from './containerEnv';
import type { ResolveContext } from './resolveContext';
import type { CopiedEnv } from './resolvedTypes';

function notExplicit(
  name: string,
  container: string,
  viaEnvFrom: boolean,
  example: string,
): [string, string] {
  return viaEnvFrom
    ? [
        `${name} is not an explicit env entry of container "${container}"; names supplied only by envFrom are not accepted, because the split cannot see or reproduce them.`,
        `Add it to the container's env list (${example}).`,
      ]
    : [`${name} is not set in container "${container}".`, `Add it to the container's env list (${example}).`];
}

/** The literal value of a variable the controller reads and overrides (source, group). */
export function literal(name: string, path: string, what: string, ctx: ResolveContext): string | undefined {
  const container = ctx.env.container.name;
  const found = ctx.env.lookup(name);
  if (!found.found) {
    const [problem, fix] = notExplicit(
      name,
      container,
      found.viaEnvFrom,
      `- name: ${name}, value: <${what}>`,
    );
    ctx.errors.push(fieldError(path, problem, fix));
    return undefined;
  }
  const { entry } = found;
  if (entry.valueFrom !== undefined && entry.valueFrom !== null) {
    ctx.errors.push(
      fieldError(
        path,
        `${name} in container "${container}" is not a literal value; the controller must read the ${what} name from the pod template to redirect it.`,
        `Set it with value: <${what}> in the container's env.`,
      ),
    );
    return undefined;
  }
  const value = entry.value ?? '';
  if (value === '') {
    ctx.errors.push(
      fieldError(path, `${name} in container "${container}" is empty.`, `Set it to the ${what} name.`),
    );
    return undefined;
  }
  if (usesExpansion(value)) {
    ctx.errors.push(
      fieldError(
        path,
        `${name} in container "${container}" uses $(...) expansion; the ${what} name must be written out.`,
        `Set it to the literal ${what} name.`,
      ),
    );
    return undefined;
  }
  return value;
}

/** The entries the agent copies for one setting, including what its expansions refer to. */
export function copied<R extends string>(
  name: string,
  role: R,
  path: string,
  ctx: ResolveContext,
): CopiedEnv<R | 'dependency'>[] {
  const out: CopiedEnv<R | 'dependency'>[] = [];
  const visiting = new Set<string>();
  const container = ctx.env.container.name;
  const visit = (current: string, currentRole: R | 'dependency', limitIndex: number): void => {
    if (visiting.has(current)) return;
    visiting.add(current);
    const found = ctx.env.lookup(current);
    if (!found.found || found.index >= limitIndex) {
      // Kubernetes expands only names defined earlier; a later or unknown name stays literal,
      // unless envFrom might define it — then the agent would see something else.
      if (current === name || (!found.found && found.viaEnvFrom)) {
        const [problem, fix] = notExplicit(
          current,
          container,
          !found.found && found.viaEnvFrom,
          `- name: ${current}, value or valueFrom`,
        );
        ctx.errors.push(fieldError(path, problem, fix));
      }
      return;
    }
    const check = classifySource(found.entry, container);
    if (!check.ok) {
      ctx.errors.push(fieldError(path, check.problem, check.fix));
      return;
    }
    out.push({ name: current, role: currentRole, source: check.source });
    if (check.source.kind === 'value') {
      for (const ref of expansionRefs(check.source.value)) visit(ref, 'dependency', found.index);
    }
  };
  visit(name, role, Number.POSITIVE_INFINITY);
  // Dependencies first, so the agent's env list expands the same way the workload's does.
  return out.reverse();
}

export function dedupe<R extends string>(env: readonly CopiedEnv<R>[]): CopiedEnv<R>[] {
  const seen = new Set<string>();
  return env.filter((item) => (seen.has(item.name) ? false : (seen.add(item.name), true)));
}

export function literalOf(env: readonly CopiedEnv<string>[], name: string): string | undefined {
  const item = env.find((e) => e.name === name);
  return item?.source.kind === 'value' && !usesExpansion(item.source.value) ? item.source.value : undefined;
}
