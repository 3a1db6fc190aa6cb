// The TLS material a queue-agent pod gets: for each CA Secret the validated declaration names,
// one read-only Secret volume projecting only the named keys (the kubelet resolves it; the
// controller never reads the value), mounted where core/tlsMount.ts says. A provider whose
// clients trust a CA only process-wide (RabbitMQ: AMQP and the management API) gets it through
// NODE_EXTRA_CA_CERTS, which holds one file; the others read their CA file themselves
// (AgentProvider.caTrust).
import type { V1EnvVar, V1Volume, V1VolumeMount } from '@kubernetes/client-node';
import { PROVIDERS } from '../../core/providers';
import { caFilePath, tlsMountDir } from '../../core/tlsMount';
import type { ResolvedQueue } from '../../core/queueConfig/resolveQueues';
import { caTrust } from '../providers/registry';

export interface TlsMounts {
  volumes: V1Volume[];
  volumeMounts: V1VolumeMount[];
  env: V1EnvVar[];
}

export function tlsMounts(resolved: readonly ResolvedQueue[]): TlsMounts {
  const keysBySecret = new Map<string, Set<string>>();
  for (const q of resolved) {
    const { caSecret, caKey } = q.tls ?? {};
    if (!caSecret || !caKey) continue;
    keysBySecret.set(caSecret, (keysBySecret.get(caSecret) ?? new Set()).add(caKey));
  }
  const secrets = [...keysBySecret.keys()].sort();
  const volumes: V1Volume[] = secrets.map((secret, i) => ({
    name: `qs-tls-${i}`,
    secret: {
      secretName: secret,
      items: [...keysBySecret.get(secret)!].sort().map((key) => ({ key, path: key })),
      defaultMode: 0o444,
    },
  }));
  const volumeMounts: V1VolumeMount[] = secrets.map((secret, i) => ({
    name: `qs-tls-${i}`,
    mountPath: tlsMountDir(secret),
    readOnly: true,
  }));
  const processWide = resolved.filter((q) => caTrust(q.provider) === 'process');
  const processCas = [...new Set(processWide.flatMap((q) => caFilePath(q.tls) ?? []))];
  if (processCas.length > 1) {
    const labels = [...new Set(processWide.map((q) => PROVIDERS[q.provider].label))].join(' and ');
    throw new Error(
      `${labels} queues name ${processCas.length} different CA bundles; the queue-agent can trust one. Put the CAs in one Secret key.`,
    );
  }
  const env: V1EnvVar[] = processCas.map((file) => ({ name: 'NODE_EXTRA_CA_CERTS', value: file }));
  return { volumes, volumeMounts, env };
}
