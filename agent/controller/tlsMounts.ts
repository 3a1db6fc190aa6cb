// The TLS material a queue-agent pod gets: for each CA Secret the validated declaration names,
// one read-only Secret volume projecting only the named keys (the kubelet resolves it; the
// controller never reads the value), mounted where core/tlsMount.ts says. RabbitMQ connections
// (AMQP and the management API) trust the CA through NODE_EXTRA_CA_CERTS, which holds one file;
// the Kafka engine reads its CA file itself.
import type { V1EnvVar, V1Volume, V1VolumeMount } from '@kubernetes/client-node';
import { caFilePath, tlsMountDir } from '../../core/tlsMount';
import type { ResolvedQueue } from '../../core/queueConfig/resolveQueues';

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
  const rabbitCas = [
    ...new Set(resolved.filter((q) => q.provider === 'rabbitmq').flatMap((q) => caFilePath(q.tls) ?? [])),
  ];
  if (rabbitCas.length > 1) {
    throw new Error(
      `RabbitMQ queues name ${rabbitCas.length} different CA bundles; the queue-agent can trust one. Put the CAs in one Secret key.`,
    );
  }
  const env: V1EnvVar[] = rabbitCas.map((file) => ({ name: 'NODE_EXTRA_CA_CERTS', value: file }));
  return { volumes, volumeMounts, env };
}
