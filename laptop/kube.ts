// The developer's Kubernetes access: their kubeconfig and context (never a service account of
// ours), and one translation of API failures into errors that say what was refused and what to
// do. Every read and write the sidecar makes goes through these credentials, so RBAC applies.
import * as os from 'node:os';
import type { KubeConfig } from '@kubernetes/client-node';
import { resolveKubeconfigFiles } from '../core/kubeconfig';
import {
  ADMINS_GROUP,
  IdentityUnknown,
  SELF_REVIEW_PERMISSION,
  isOwnerPolicyDenial,
  reviewSelf,
} from '../core/identity';
import { accessText, deniedAccess, sessionAccessChecks } from '../core/accessPreflight';
import type { WorkloadRef } from '../core/crd/queueSplitSchema';
import {
  classifyKubeFailure,
  developerRoleBindingCommand,
  forbiddenSubject,
  subjectOfUser,
  type ExecCredentialConfig,
} from '../core/kubeFailure';
import { SidecarError, errorText } from './errors';
import { loadKubeconfigFiles } from './kubeconfigFiles';
import { keepConnections } from '../core/kubeKeepAlive';

export interface KubeTarget {
  kc: KubeConfig;
  context: string;
  namespace: string;
}

/**
 * The credential plugin of the context loadKube() chose (the sidecar talks to one), so that a
 * plugin's failure, a bare Error of its stderr, is told from other errors (core/kubeFailure.ts).
 */
let credentialPlugin: ExecCredentialConfig | undefined;

function execOf(kc: KubeConfig): ExecCredentialConfig | undefined {
  const user = kc.getCurrentUser();
  const exec = (user?.exec ??
    (user?.authProvider as { config?: { exec?: unknown } } | undefined)?.config?.exec) as
    ExecCredentialConfig | undefined;
  return exec !== undefined && exec !== null && typeof exec.command === 'string' ? exec : undefined;
}

export function loadKube(options: { kubeconfig?: string; context?: string; namespace?: string }): KubeTarget {
  // --kubeconfig: that one file; else $KUBECONFIG (a list, merged as kubectl merges it: the
  // extension hands a list this way) or ~/.kube/config.
  const source =
    options.kubeconfig !== undefined
      ? { files: [options.kubeconfig], explicit: true, origin: 'setting' as const }
      : resolveKubeconfigFiles({ setting: undefined, env: process.env.KUBECONFIG, home: os.homedir() });
  let kc: KubeConfig;
  let missing: string[];
  try {
    ({ kc, missing } = loadKubeconfigFiles(source));
  } catch (err) {
    throw new SidecarError(
      'kube-config',
      `Cannot load the kubeconfig${options.kubeconfig ? ` ${options.kubeconfig}` : ''}: ${errorText(err)}`,
      'Point --kubeconfig (or KUBECONFIG) at a valid kubeconfig file.',
      options.kubeconfig !== undefined ? '--kubeconfig' : undefined,
    );
  }
  if (missing.length === source.files.length) {
    throw new SidecarError(
      'kube-config',
      `No kubeconfig: ${missing.join(', ')} ${missing.length === 1 ? 'does' : 'do'} not exist.`,
      'Point --kubeconfig (or KUBECONFIG) at a valid kubeconfig file.',
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
  credentialPlugin = execOf(kc);
  // The sidecar polls and renews for as long as it runs: over kept-alive connections
  // (docs/design.md "Where the CPU goes").
  return { kc: keepConnections(kc), context, namespace };
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
  const failure = classifyKubeFailure(err, credentialPlugin);
  const status = failure.kind === 'status' ? failure.status : undefined;
  switch (failure.kind) {
    case 'unreachable':
      return new SidecarError(
        'kube-unreachable',
        `Cannot reach the Kubernetes API of context "${context}" (${failure.code}) while trying to ${op.verb} ${object}.`,
        'Check your connection/VPN and that `kubectl --context ' +
          context +
          ' get ns` works, then start the sidecar again.',
      );
    case 'tls':
      return new SidecarError(
        'kube-unreachable',
        `The Kubernetes API of context "${context}" is not trusted: ${failure.reason} (${failure.code}), while trying to ${op.verb} ${object}.`,
        "Fix the cluster's certificate-authority or server address in your kubeconfig (a fresh kubeconfig from your cluster provider has both), then start the sidecar again.",
      );
    case 'exec-missing':
      return new SidecarError(
        'kube-config',
        `The kubeconfig logs in to context "${context}" with the credential plugin ${failure.plugin.binary}, which ${failure.notExecutable ? `cannot be run (${failure.command} is not executable)` : 'is not installed (not found on the PATH)'}.`,
        `Install ${failure.plugin.installedBy ?? failure.plugin.binary} (or put it on the PATH), then start the sidecar again.`,
      );
    case 'exec-failed':
      return new SidecarError(
        'kube-unauthorized',
        `The credential plugin ${failure.plugin.binary} of context "${context}" failed: ${failure.firstLine}`,
        failure.plugin.login !== undefined
          ? `Log in again (\`${failure.plugin.login}\`), then start the sidecar again.`
          : "Run the plugin in a terminal to see why (the kubeconfig user's exec), fix that, then start the sidecar again.",
      );
    case 'other':
      return new SidecarError(
        'kube-unreachable',
        `Talking to the Kubernetes API of context "${context}" failed (${failure.text}) while trying to ${op.verb} ${object}.`,
        'Check your connection/VPN and that `kubectl --context ' +
          context +
          ' get ns` works, then start the sidecar again.',
      );
    case 'status':
      break;
  }
  if (status === 401) {
    return new SidecarError(
      'kube-unauthorized',
      `The Kubernetes API rejected the credentials of context "${context}" (401).`,
      'Log in again (refresh your cluster credentials), then start the sidecar again.',
    );
  }
  if (status === 403 && isOwnerPolicyDenial(statusMessage(err))) {
    // The queuesplit-owner admission policy, not RBAC: its message names the owner and the caller.
    return new SidecarError(
      'forbidden',
      `Kubernetes refused to ${op.verb} ${object}: ${statusMessage(err) ?? ''}`,
      `Only a split's owner (or a member of ${ADMINS_GROUP}) may change or stop it. Leave --owner out to create your own split.`,
    );
  }
  if (status === 403) {
    const subject = forbiddenSubject(statusMessage(err));
    return new SidecarError(
      'forbidden',
      `Your Kubernetes credentials (context "${context}") may not ${op.verb} ${object}${why}.`,
      op.forbiddenAction ??
        `Ask your cluster admin for RBAC permission to ${op.verb} ${op.resource} in namespace ${op.namespace}${subject !== undefined ? ` (the queuesplit-developer ClusterRole has it: ${developerRoleBindingCommand(op.namespace, subject)})` : ''}.`,
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

/**
 * The caller's Kubernetes user name (SelfSubjectReview): the owner of the splits this sidecar
 * creates, as the `queuesplit-owner` admission policy requires.
 */
export async function whoAmI(kube: KubeTarget): Promise<string> {
  try {
    return (await reviewSelf(kube.kc)).username;
  } catch (err) {
    if (!(err instanceof IdentityUnknown)) throw err;
    if (err.forbidden)
      throw new SidecarError(
        'forbidden',
        `Your Kubernetes credentials (context "${kube.context}") may not ${SELF_REVIEW_PERMISSION}: the sidecar uses it to learn your user name, the owner of your split.`,
        `Ask your cluster admin to bind the queuesplit-developer ClusterRole to you in namespace ${kube.namespace} (it grants ${SELF_REVIEW_PERMISSION}).`,
      );
    if (err.cause === undefined)
      throw new SidecarError(
        'kube-unauthorized',
        `The Kubernetes API of context "${kube.context}" did not say who you are: ${err.message}.`,
        'Check the credentials of your kubeconfig context.',
      );
    throw kubeError(
      err.cause,
      { verb: 'create', resource: 'selfsubjectreviews.authentication.k8s.io', namespace: kube.namespace },
      kube.context,
    );
  }
}

/**
 * The RBAC preflight (core/accessPreflight.ts): every verb the session needs, asked before the
 * QueueSplit exists, so a missing one creates nothing (no cutover nobody could stop).
 */
export async function checkSessionAccess(
  kube: KubeTarget,
  workload: WorkloadRef,
  session: { creates: boolean; streams: boolean },
  user: string,
): Promise<void> {
  let denied;
  try {
    denied = await deniedAccess(kube.kc, kube.namespace, sessionAccessChecks(workload, session));
  } catch (err) {
    throw kubeError(
      err,
      {
        verb: 'create',
        resource: 'selfsubjectaccessreviews.authorization.k8s.io',
        namespace: kube.namespace,
        purpose: 'to check your permissions before the split is created',
        forbiddenAction: `Ask your cluster admin to bind the queuesplit-developer ClusterRole to you in namespace ${kube.namespace} (it grants the self reviews).`,
      },
      kube.context,
    );
  }
  if (denied.length === 0) return;
  throw new SidecarError(
    'forbidden',
    `Your Kubernetes credentials (user ${user}, context "${kube.context}") may not, in namespace ${kube.namespace}: ${denied.map((c) => `${accessText(c)} (to ${c.why})`).join('; ')}. Nothing was created.`,
    `Ask your cluster admin to bind the queuesplit-developer ClusterRole to you in namespace ${kube.namespace}: ${developerRoleBindingCommand(kube.namespace, subjectOfUser(user))}`,
  );
}
