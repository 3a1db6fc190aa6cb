// Kubernetes API failures in the words a developer acts on, from the extension's side (its
// fixes name settings and commands, not sidecar flags). No `vscode` import: anything with a
// `suggestedAction` is shown by notifications.explain().
import { ADMINS_GROUP, isOwnerPolicyDenial } from '../../core/identity';

export class KubeProblem extends Error {
  constructor(
    message: string,
    readonly suggestedAction: string,
    readonly kind:
      | 'config'
      | 'unreachable'
      | 'unauthorized'
      | 'forbidden'
      | 'crd-missing'
      | 'not-found'
      | 'conflict'
      | 'other',
  ) {
    super(message);
    this.name = 'KubeProblem';
  }
}

export function httpStatus(err: unknown): number | undefined {
  const code = (err as { code?: unknown; statusCode?: unknown } | undefined)?.code;
  if (typeof code === 'number') return code;
  const statusCode = (err as { statusCode?: unknown } | undefined)?.statusCode;
  return typeof statusCode === 'number' ? statusCode : undefined;
}

function statusMessage(err: unknown): string | undefined {
  const body = (err as { body?: unknown } | undefined)?.body;
  try {
    const parsed: unknown = typeof body === 'string' ? JSON.parse(body) : body;
    const message = (parsed as { message?: unknown } | undefined)?.message;
    return typeof message === 'string' ? message : undefined;
  } catch {
    return undefined;
  }
}

function systemCode(err: unknown): string | undefined {
  for (let e: unknown = err, i = 0; e !== undefined && e !== null && i < 5; i++) {
    const code = (e as { code?: unknown }).code;
    if (typeof code === 'string' && /^E[A-Z_]+$/.test(code)) return code;
    e = (e as { cause?: unknown }).cause;
  }
  return undefined;
}

export interface Operation {
  verb: string;
  /** RBAC resource, e.g. `queuesplits.queuesplit.dev`, `deployments.apps`. */
  resource: string;
  namespace?: string;
  name?: string;
  context: string;
}

export function isCrdMissing(err: unknown): boolean {
  return (
    httpStatus(err) === 404 &&
    /could not find the requested resource|the server could not find/i.test(statusMessage(err) ?? '')
  );
}

export function kubeProblem(err: unknown, op: Operation): KubeProblem {
  if (err instanceof KubeProblem) return err;
  const object = `${op.resource}${op.name !== undefined ? `/${op.name}` : ''}${op.namespace !== undefined ? ` in namespace ${op.namespace}` : ''}`;
  const status = httpStatus(err);
  if (status === undefined) {
    const code = systemCode(err) ?? (err instanceof Error ? err.message.split('\n')[0] : String(err));
    return new KubeProblem(
      `Cannot reach the Kubernetes API of context "${op.context}" (${code}).`,
      `Check your connection/VPN and that \`kubectl --context ${op.context} get ns\` works, then run "Queue Split: Refresh"; or pick another context with "Queue Split: Select Context/Namespace…".`,
      'unreachable',
    );
  }
  if (status === 401)
    return new KubeProblem(
      `The Kubernetes API rejected the credentials of context "${op.context}" (401 Unauthorized).`,
      'Log in to the cluster again (refresh your kubeconfig credentials), then run "Queue Split: Refresh".',
      'unauthorized',
    );
  if (status === 403 && isOwnerPolicyDenial(statusMessage(err)))
    return new KubeProblem(
      `Kubernetes refused to ${op.verb} ${object}: ${statusMessage(err) ?? ''}`,
      `Only a split's owner (or a member of ${ADMINS_GROUP}) may change or stop it: ask its owner to stop it. If it is yours, leave the queueSplit.owner setting empty so your Kubernetes user name is used.`,
      'forbidden',
    );
  if (status === 403)
    return new KubeProblem(
      `Your credentials (context "${op.context}") may not ${op.verb} ${object}.`,
      `Ask your cluster admin to bind the queuesplit-developer ClusterRole to you${op.namespace !== undefined ? ` in namespace ${op.namespace}` : ''} (it allows ${op.verb} on what Queue Split needs).`,
      'forbidden',
    );
  if (status === 404 && op.resource.startsWith('queuesplits.') && isCrdMissing(err))
    return new KubeProblem(
      `Queue Split is not installed in the cluster of context "${op.context}".`,
      'Run "Queue Split: Install Controller into Cluster…" (needs cluster-admin), or ask your cluster admin to install it.',
      'crd-missing',
    );
  if (status === 404)
    return new KubeProblem(
      `There is no ${object} (context "${op.context}").`,
      'Check the name, the namespace and the context.',
      'not-found',
    );
  if (status === 409)
    return new KubeProblem(
      `Kubernetes refused to ${op.verb} ${object}: ${statusMessage(err) ?? 'conflict'}.`,
      'Refresh and try again.',
      'conflict',
    );
  return new KubeProblem(
    `Kubernetes refused to ${op.verb} ${object} (HTTP ${status}): ${statusMessage(err) ?? (err instanceof Error ? err.message.split('\n')[0] : 'unknown error')}`,
    'Check the object with kubectl; if it looks right, report this with the Queue Split log.',
    'other',
  );
}
