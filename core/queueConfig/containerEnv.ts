// How a container's env vars resolve, seen from the queue-agent that must reproduce them: which
// entry defines a name (the last one, as in Kubernetes), where its value comes from, and which
// other variables a literal `$(NAME)` expansion pulls in.
import type { Container, EnvVar } from './podTemplate';

export type EnvSource =
  | { kind: 'value'; value: string }
  | { kind: 'secretKeyRef'; secret: string; key: string; optional: boolean }
  | { kind: 'configMapKeyRef'; configMap: string; key: string; optional: boolean };

export type EnvLookup =
  | { found: true; entry: EnvVar; index: number }
  /** `viaEnvFrom`: the container has envFrom, which might (invisibly to us) define the name. */
  | { found: false; viaEnvFrom: boolean };

export class ContainerEnv {
  private readonly entries = new Map<string, { entry: EnvVar; index: number }>();
  readonly hasEnvFrom: boolean;

  constructor(readonly container: Container) {
    const env = Array.isArray(container.env) ? container.env : [];
    env.forEach((entry, index) => {
      if (entry && typeof entry.name === 'string') this.entries.set(entry.name, { entry, index });
    });
    this.hasEnvFrom = Array.isArray(container.envFrom) && container.envFrom.length > 0;
  }

  lookup(name: string): EnvLookup {
    const hit = this.entries.get(name);
    return hit ? { found: true, ...hit } : { found: false, viaEnvFrom: this.hasEnvFrom };
  }

  /** Whether any env entry or envFrom of the container reads the Secret. */
  usesSecret(secret: string): boolean {
    for (const { entry } of this.entries.values()) {
      if (entry.valueFrom?.secretKeyRef?.name === secret) return true;
    }
    return (this.container.envFrom ?? []).some((source) => source?.secretRef?.name === secret);
  }
}

export type SourceCheck = { ok: true; source: EnvSource } | { ok: false; problem: string; fix: string };

/** Where a variable's value comes from, if the queue-agent can reproduce it. */
export function classifySource(entry: EnvVar, container: string): SourceCheck {
  const from = entry.valueFrom;
  if (from === undefined || from === null)
    return { ok: true, source: { kind: 'value', value: entry.value ?? '' } };
  const reproducible = 'Use a literal value, a secretKeyRef or a configMapKeyRef.';
  if (from.fieldRef !== undefined || from.resourceFieldRef !== undefined) {
    const kind = from.fieldRef !== undefined ? 'fieldRef' : 'resourceFieldRef';
    return {
      ok: false,
      problem: `${entry.name} in container "${container}" comes from a ${kind}, which would resolve against the queue-agent's own pod, not the workload's.`,
      fix: reproducible,
    };
  }
  const secret = from.secretKeyRef;
  if (secret && typeof secret.key === 'string' && typeof secret.name === 'string' && secret.name !== '') {
    return {
      ok: true,
      source: {
        kind: 'secretKeyRef',
        secret: secret.name,
        key: secret.key,
        optional: secret.optional === true,
      },
    };
  }
  const configMap = from.configMapKeyRef;
  if (
    configMap &&
    typeof configMap.key === 'string' &&
    typeof configMap.name === 'string' &&
    configMap.name !== ''
  ) {
    return {
      ok: true,
      source: {
        kind: 'configMapKeyRef',
        configMap: configMap.name,
        key: configMap.key,
        optional: configMap.optional === true,
      },
    };
  }
  return {
    ok: false,
    problem: `${entry.name} in container "${container}" has a valueFrom the queue-agent cannot reproduce.`,
    fix: reproducible,
  };
}

/** Names a literal refers to with Kubernetes `$(NAME)` expansion (`$$(NAME)` is an escape). */
export function expansionRefs(value: string): string[] {
  const refs: string[] = [];
  for (const match of value.matchAll(/\$\$|\$\(([-._a-zA-Z][-._a-zA-Z0-9]*)\)/g)) {
    if (match[1] !== undefined) refs.push(match[1]);
  }
  return refs;
}

/** True when Kubernetes would rewrite the literal ($(NAME) expansion or a $$ escape). */
export function usesExpansion(value: string): boolean {
  return value.includes('$(') || value.includes('$$');
}
