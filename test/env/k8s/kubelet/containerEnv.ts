// Resolves a container's environment the way the kubelet does: envFrom first, then env
// entries in order (later wins), `$(VAR)` expansion against what is already defined, and
// valueFrom for ConfigMaps, Secrets and the downward API fields a process can use here.
import type { V1Container, V1Pod } from '@kubernetes/client-node';

export interface EnvLookups {
  configMap(namespace: string, name: string): Promise<Record<string, string> | undefined>;
  secret(namespace: string, name: string): Promise<Record<string, string> | undefined>;
}

/** Thrown when the pod cannot start yet (the kubelet reports CreateContainerConfigError and retries). */
export class ContainerConfigError extends Error {}

function expand(value: string, env: Record<string, string>): string {
  // $$ escapes a dollar; an undefined $(VAR) is left as written, as the kubelet does.
  return value.replace(/\$\$|\$\(([A-Za-z_][A-Za-z0-9_.-]*)\)/g, (match, name: string | undefined) =>
    name === undefined ? '$' : (env[name] ?? match),
  );
}

function fieldValue(pod: V1Pod, fieldPath: string): string {
  const labelOrAnnotation = /^metadata\.(labels|annotations)\['(.+)'\]$/.exec(fieldPath);
  if (labelOrAnnotation) {
    const map = labelOrAnnotation[1] === 'labels' ? pod.metadata?.labels : pod.metadata?.annotations;
    return map?.[labelOrAnnotation[2] ?? ''] ?? '';
  }
  const fields: Record<string, string | undefined> = {
    'metadata.name': pod.metadata?.name,
    'metadata.namespace': pod.metadata?.namespace,
    'metadata.uid': pod.metadata?.uid,
    'spec.nodeName': pod.spec?.nodeName,
    'spec.serviceAccountName': pod.spec?.serviceAccountName,
    'status.podIP': '127.0.0.1',
    'status.hostIP': '127.0.0.1',
  };
  if (!(fieldPath in fields)) throw new ContainerConfigError(`fieldRef ${fieldPath} is not supported`);
  return fields[fieldPath] ?? '';
}

export async function resolveEnv(
  pod: V1Pod,
  container: V1Container,
  lookups: EnvLookups,
): Promise<Record<string, string>> {
  const namespace = pod.metadata?.namespace ?? 'default';
  const env: Record<string, string> = {};
  for (const source of container.envFrom ?? []) {
    const ref = source.configMapRef ?? source.secretRef;
    if (!ref?.name) continue;
    const data = source.configMapRef
      ? await lookups.configMap(namespace, ref.name)
      : await lookups.secret(namespace, ref.name);
    if (!data) {
      if (ref.optional) continue;
      throw new ContainerConfigError(
        `${source.configMapRef ? 'configmap' : 'secret'} "${ref.name}" not found`,
      );
    }
    for (const [k, v] of Object.entries(data)) env[`${source.prefix ?? ''}${k}`] = v;
  }
  for (const entry of container.env ?? []) {
    const from = entry.valueFrom;
    if (!from) {
      env[entry.name] = expand(entry.value ?? '', env);
    } else if (from.fieldRef) {
      env[entry.name] = fieldValue(pod, from.fieldRef.fieldPath);
    } else if (from.configMapKeyRef || from.secretKeyRef) {
      const ref = (from.configMapKeyRef ?? from.secretKeyRef)!;
      const kind = from.configMapKeyRef ? 'configmap' : 'secret';
      const data = from.configMapKeyRef
        ? await lookups.configMap(namespace, ref.name ?? '')
        : await lookups.secret(namespace, ref.name ?? '');
      const value = data?.[ref.key];
      if (value === undefined) {
        if (ref.optional) continue;
        throw new ContainerConfigError(
          data
            ? `couldn't find key ${ref.key} in ${kind} ${namespace}/${ref.name}`
            : `${kind} "${ref.name}" not found`,
        );
      }
      env[entry.name] = value;
    } else if (from.resourceFieldRef) {
      throw new ContainerConfigError(
        `env ${entry.name}: resourceFieldRef is not supported by the test kubelet`,
      );
    }
  }
  return env;
}
