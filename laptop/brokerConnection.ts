// Broker connections for the laptop, resolved from what the workload declares: for each queue
// the env vars the container itself uses (literal, configMapKeyRef, secretKeyRef — read with the
// developer's own credentials, so RBAC decides), local overrides (--env / settings file) first,
// Kubernetes $(VAR) expansion, and the address map for in-cluster hostnames.
//
// The result is used twice: to connect the sidecar's own consumers (http/relay modes) and, in
// env mode, as the connection env of the debugged process.
import * as fs from 'node:fs';
import { CoreV1Api } from '@kubernetes/client-node';
import { assertNever } from '../core/providers';
import type { EnvRoleInfo } from '../core/providers/contract';
import { coreProvider } from '../core/providers/registry';
import type { EnvSource } from '../core/queueConfig/containerEnv';
import type { EnvRole, ResolvedQueue } from '../core/queueConfig/resolveQueues';
import type { AddressMap } from './addressMap';
import { SidecarError, errorText } from './errors';
import { kubeError, kubeStatus, type KubeTarget } from './kube';
import type { QueueEnv } from './providers/contract';
import { laptopProvider, type BrokerConnection } from './providers/registry';
import type { Redactor } from './redact';

export interface EnvValue {
  name: string;
  /** As the local process should see it: expanded, address map applied. */
  value: string;
  /** From a Secret, a password, or carrying one (a URL with credentials): never printed. */
  secret: boolean;
  role: EnvRole;
}

export type { BrokerConnection } from './providers/registry';

export interface QueueConnection {
  queue: ResolvedQueue;
  broker: BrokerConnection;
  env: EnvValue[];
}

export interface ConnectionInputs {
  kube: KubeTarget;
  /** Local values of container env vars; they win over the workload's (and skip kube reads). */
  overrides: ReadonlyMap<string, string>;
  addressMap: AddressMap;
  /** CA bundle file used instead of the declared caSecret. */
  caFile?: string;
  redactor: Redactor;
}

/** Reads ConfigMap and Secret keys once each, with the developer's credentials. */
export class KubeValueReader {
  private readonly cache = new Map<string, Promise<Record<string, string> | undefined>>();

  constructor(private readonly kube: KubeTarget) {}

  /** The key's value; undefined when the object or key does not exist. */
  async read(
    kind: 'Secret' | 'ConfigMap',
    name: string,
    key: string,
    purpose: string,
    localAlternative: string,
  ): Promise<string | undefined> {
    const cacheKey = `${kind}/${name}`;
    let pending = this.cache.get(cacheKey);
    if (pending === undefined) {
      pending = this.fetch(kind, name, purpose, localAlternative);
      this.cache.set(cacheKey, pending);
    }
    return (await pending)?.[key];
  }

  private async fetch(
    kind: 'Secret' | 'ConfigMap',
    name: string,
    purpose: string,
    localAlternative: string,
  ): Promise<Record<string, string> | undefined> {
    const core = this.kube.kc.makeApiClient(CoreV1Api);
    const namespace = this.kube.namespace;
    try {
      if (kind === 'Secret') {
        const secret = await core.readNamespacedSecret({ name, namespace });
        const data = secret.data ?? {};
        return Object.fromEntries(
          Object.entries(data).map(([k, v]) => [k, Buffer.from(v, 'base64').toString('utf8')]),
        );
      }
      const configMap = await core.readNamespacedConfigMap({ name, namespace });
      const binary = Object.entries(configMap.binaryData ?? {}).map(([k, v]) => [
        k,
        Buffer.from(v, 'base64').toString('utf8'),
      ]);
      return { ...Object.fromEntries(binary), ...(configMap.data ?? {}) };
    } catch (err) {
      if (kubeStatus(err) === 404) return undefined;
      throw kubeError(
        err,
        {
          verb: 'get',
          resource: kind === 'Secret' ? 'secrets' : 'configmaps',
          namespace,
          name,
          purpose,
          forbiddenAction: `Supply the value locally instead: ${localAlternative} — or ask your cluster admin for get on ${kind === 'Secret' ? 'secrets' : 'configmaps'}/${name} in namespace ${namespace}.`,
        },
        this.kube.context,
      );
    }
  }
}

/** Kubernetes $(VAR) expansion: known names are replaced, `$$` escapes, anything else stays. */
export function expandEnv(value: string, known: ReadonlyMap<string, string>): string {
  return value.replace(/\$\$|\$\(([-._a-zA-Z][-._a-zA-Z0-9]*)\)/g, (match, name: string | undefined) =>
    name === undefined ? '$' : (known.get(name) ?? match),
  );
}

function urlHasPassword(value: string): boolean {
  try {
    return new URL(value).password !== '';
  } catch {
    return false;
  }
}

function describeSource(source: EnvSource): string {
  switch (source.kind) {
    case 'value':
      return 'a literal value';
    case 'secretKeyRef':
      return `key "${source.key}" of Secret ${source.secret}`;
    case 'configMapKeyRef':
      return `key "${source.key}" of ConfigMap ${source.configMap}`;
  }
}

export async function resolveConnections(
  queues: readonly ResolvedQueue[],
  inputs: ConnectionInputs,
): Promise<QueueConnection[]> {
  const reader = new KubeValueReader(inputs.kube);
  const out: QueueConnection[] = [];
  for (const queue of queues) out.push(await resolveConnection(queue, inputs, reader));
  return out;
}

async function resolveConnection(
  queue: ResolvedQueue,
  inputs: ConnectionInputs,
  reader: KubeValueReader,
): Promise<QueueConnection> {
  const values = new Map<string, string>();
  const secretNames = new Set<string>();
  const env: EnvValue[] = [];
  const roles = roleInfo(queue);
  for (const copied of queue.env) {
    const override = inputs.overrides.get(copied.name);
    let raw: string | undefined;
    let secret = roles(copied.role).secret === true;
    if (override !== undefined) {
      raw = override;
    } else if (copied.source.kind === 'value') {
      raw = expandEnv(copied.source.value, values);
      secret ||= [...copied.source.value.matchAll(/\$\(([^)]+)\)/g)].some(
        (m) => m[1] !== undefined && secretNames.has(m[1]),
      );
    } else {
      const kind = copied.source.kind === 'secretKeyRef' ? 'Secret' : 'ConfigMap';
      const objectName =
        copied.source.kind === 'secretKeyRef' ? copied.source.secret : copied.source.configMap;
      secret ||= kind === 'Secret';
      raw = await reader.read(
        kind,
        objectName,
        copied.source.key,
        `to read ${copied.name} (${copied.role}) of queue "${queue.name}"`,
        `--env ${copied.name}=<value> (or env.${copied.name} in the --settings file)`,
      );
      if (raw === undefined && !copied.source.optional) {
        throw new SidecarError(
          'config-missing',
          `${copied.name} of queue "${queue.name}" comes from ${describeSource(copied.source)} in namespace ${inputs.kube.namespace}, which does not exist.`,
          `Check the workload's env, or supply it locally with --env ${copied.name}=<value>.`,
        );
      }
    }
    if (raw === undefined) continue; // optional and absent: unset, as in the pod
    secret ||= urlHasPassword(raw);
    if (secret) {
      secretNames.add(copied.name);
      inputs.redactor.add(raw);
    }
    inputs.redactor.addUrl(raw);
    values.set(copied.name, raw);
    env.push({
      name: copied.name,
      value: localValue(raw, roles(copied.role), inputs.addressMap),
      secret,
      role: copied.role,
    });
  }
  const queueEnv: QueueEnv = {
    value: (role) => env.find((e) => e.role === role)?.value,
    raw: (role) => {
      const entry = env.find((e) => e.role === role);
      return entry === undefined ? undefined : values.get(entry.name);
    },
    envName: (role) => queue.env.find((e) => e.role === role)?.name ?? role,
    ca: await caBundle(queue, inputs, reader),
    addressMap: inputs.addressMap,
    redactor: inputs.redactor,
  };
  return { queue, env, broker: laptopProvider(queue.provider).connection(queue, queueEnv) };
}

/** What the queue's provider says an env role is (a dependency is nothing in particular). */
function roleInfo(queue: ResolvedQueue): (role: EnvRole) => EnvRoleInfo {
  const roles: Readonly<Record<string, EnvRoleInfo>> = coreProvider(queue.provider).envRoles;
  return (role) => roles[role] ?? {};
}

/** The value as this machine dials it: broker addresses through the address map. */
function localValue(raw: string, role: EnvRoleInfo, map: AddressMap): string {
  switch (role.address) {
    case 'hostList':
      return raw
        .split(',')
        .map((b) => (b.trim() === '' ? b : map.mapBroker(b.trim())))
        .join(',');
    case 'url':
      return map.mapUrl(raw).url;
    case undefined:
      return raw;
    default:
      return assertNever(role.address, 'address kind');
  }
}

async function caBundle(
  queue: ResolvedQueue,
  inputs: ConnectionInputs,
  reader: KubeValueReader,
): Promise<string | undefined> {
  if (queue.tls === undefined) return undefined;
  if (inputs.caFile !== undefined) {
    try {
      return fs.readFileSync(inputs.caFile, 'utf8');
    } catch (err) {
      throw new SidecarError(
        'usage',
        `--tls-ca-file: cannot read ${inputs.caFile}: ${errorText(err)}`,
        'Pass a readable PEM file.',
        '--tls-ca-file',
      );
    }
  }
  const { caSecret, caKey } = queue.tls;
  if (caSecret === undefined) return undefined; // system CAs
  const key = caKey ?? 'ca.crt';
  const pem = await reader.read(
    'Secret',
    caSecret,
    key,
    `to read the CA bundle of queue "${queue.name}"`,
    '--tls-ca-file <pem>',
  );
  if (pem === undefined) {
    throw new SidecarError(
      'config-missing',
      `Queue "${queue.name}" trusts the CA in key "${key}" of Secret ${caSecret}, which does not exist.`,
      'Fix the declaration, or pass the CA bundle with --tls-ca-file <pem>.',
    );
  }
  return pem;
}
