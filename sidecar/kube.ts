// The developer's Kubernetes access: their kubeconfig and context (never a service account of
// ours), and one translation of API failures into errors that say what was refused and what to
// do. Every read and write the sidecar makes goes through these credentials, so RBAC applies.
import { KubeConfig } from '@kubernetes/client-node';
import { SidecarError, errorText, systemCode } from './errors';

export interface KubeTarget {
  kc: KubeConfig;
  context: string;
  namespace: string;
}

export function loadKube(options: { kubeconfig?: string; context?: string; namespace?: string }): KubeTarget {
  const kc = new KubeConfig();
  try {
    if (options.kubeconfig !== undefined) kc.loadFromFile(options.kubeconfig);
    else kc.loadFromDefault();
  } catch (err) {
    throw new SidecarError(
      'kube-config',
      `Cannot load the kubeconfig${options.kubeconfig ? ` ${options.kubeconfig}` : ''}: ${errorText(err)}`,
      'Point --kubeconfig (or KUBECONFIG) at a valid kubeconfig file.',
      options.kubeconfig !== undefined ? '--kubeconfig' : undefined,
    );
  }
  if (options.context !== undefined) {
    if (!kc.getContexts().some((c) => c.name === options.context)) {
      const known = kc.getContexts().map((c) => c.name);
      throw new SidecarError(
        'usage',
        `--context: "${options.context}" is not a context of the kubeconfig (contexts: ${known.join(', ') || 'none'}).`,
        'Pass one of the listed contexts.',
        '--context',
      );
    }
    kc.setCurrentContext(options.context);
  }
  const context = kc.getCurrentContext();
  if (!context || kc.getCurrentCluster() === null) {
    throw new SidecarError(
      'kube-config',
      'The kubeconfig has no current context with a cluster.',
      'Pass --context, or select one with `kubectl config use-context`.',
    );
  }
  const namespace = options.namespace ?? kc.getContextObject(context)?.namespace ?? 'default';
  return { kc, context, namespace };
}

export interface KubeOperation {
  /** e.g. `get`, `create`, `patch`, `delete` (an RBAC verb). */
  verb: string;
  /** e.g. `secrets`, `deployments.apps`, `queuesplits.queuesplit.dev` (an RBAC resource). */
  resource: string;
  namespace: string;
  name?: string;
  /** Why the sidecar needs it, for the message: "to read AMQP_URL of queue invoices". */
  purpose?: string;
  /** Used for 403 when the value could also be supplied locally. */
  forbiddenAction?: string;
}

/** HTTP status of a kube API error, or undefined for transport errors. */
export function kubeStatus(err: unknown): number | undefined {
  const code = (err as { code?: unknown } | undefined)?.code;
  return typeof code === 'number' ? code : undefined;
}

/** The API server's own explanation (Status.message), if the error body has one. */
function statusMessage(err: unknown): string | undefined {
  const body = (err as { body?: unknown }).body;
  try {
    const parsed: unknown = typeof body === 'string' ? JSON.parse(body) : body;
    const message = (parsed as { message?: unknown } | undefined)?.message;
    return typeof message === 'string' ? message : undefined;
  } catch {
    return undefined;
  }
}

/** Any kube API failure → a SidecarError naming the operation. 404 is left to callers that expect it. */
export function kubeError(err: unknown, op: KubeOperation, context: string): SidecarError {
  const object = `${op.resource}${op.name ? `/${op.name}` : ''} in namespace ${op.namespace}`;
  const why = op.purpose ? ` ${op.purpose}` : '';
  const status = kubeStatus(err);
  if (status === undefined) {
    const code = systemCode(err);
    return new SidecarError(
      'kube-unreachable',
      `Cannot reach the Kubernetes API of context "${context}" (${code ?? errorText(err)}) while trying to ${op.verb} ${object}.`,
      'Check your connection/VPN and that `kubectl --context ' +
        context +
        ' get ns` works, then start the sidecar again.',
    );
  }
  if (status === 401) {
    return new SidecarError(
      'kube-unauthorized',
      `The Kubernetes API rejected the credentials of context "${context}" (401).`,
      'Log in again (refresh your cluster credentials), then start the sidecar again.',
    );
  }
  if (status === 403) {
    return new SidecarError(
      'forbidden',
      `Your Kubernetes credentials (context "${context}") may not ${op.verb} ${object}${why}.`,
      op.forbiddenAction ??
        `Ask your cluster admin for RBAC permission to ${op.verb} ${op.resource} in namespace ${op.namespace}.`,
    );
  }
  if (
    status === 404 &&
    op.resource.startsWith('queuesplits.') &&
    /could not find the requested resource/i.test(statusMessage(err) ?? '')
  ) {
    return new SidecarError(
      'crd-missing',
      `Queue Split is not installed in the cluster of context "${context}": the API server does not know queuesplits.queuesplit.dev.`,
      'Install Queue Split (kubectl apply -f deploy/crd/ and the controller manifests), or pick the right --context.',
    );
  }
  return new SidecarError(
    'internal',
    `Kubernetes refused to ${op.verb} ${object} (HTTP ${status}): ${statusMessage(err) ?? errorText(err).split('\n')[0]}`,
    'Check the object with kubectl; if it looks right, report this with the sidecar log.',
  );
}
