// Kubernetes access shared by the controller and the queue-agent: one KubeConfig (the pod's own
// credentials in a cluster, KUBECONFIG elsewhere), merge patches, and the API error helpers.
import { KubeConfig, PatchStrategy, setHeaderOptions } from '@kubernetes/client-node';
import { keepConnections } from '../../core/kubeKeepAlive';

export function loadKubeConfig(): KubeConfig {
  const kc = new KubeConfig();
  kc.loadFromDefault();
  return keepConnections(kc);
}

export const mergePatch = setHeaderOptions('Content-Type', PatchStrategy.MergePatch);

export const statusCode = (err: unknown): number | undefined => (err as { code?: number }).code;
export const isNotFound = (err: unknown) => statusCode(err) === 404;
export const isConflict = (err: unknown) => statusCode(err) === 409;

/** Lease times are MicroTime; client-node would serialise Dates with milliseconds, which the API refuses. */
export function microTime(date: Date): string {
  return date.toISOString().replace(/\.(\d{3})Z$/, '.$1000Z');
}
