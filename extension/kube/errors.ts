// Kubernetes API failures in the words a developer acts on, from the extension's side: its fixes
// name settings and commands, never sidecar flags, and each comes with the buttons that apply
// (model/fixes.ts). The failure itself is classified in core/kubeFailure.ts, shared with the
// sidecar. No `vscode` import: anything with a `suggestedAction` is shown by
// notifications.explain(). docs/extension-errors.md lists every class with its words and buttons.
import { ADMINS_GROUP, isOwnerPolicyDenial } from '../../core/identity';
import {
  classifyKubeFailure,
  credentialPlugin,
  developerRoleBindingCommand,
  failureStatus,
  failureStatusMessage,
  forbiddenSubject,
  type ExecCredentialConfig,
} from '../../core/kubeFailure';
import { fix, uniqueFixes, type Fix } from '../model/fixes';

export type KubeProblemKind =
  | 'config'
  | 'unreachable'
  | 'tls'
  | 'unauthorized'
  | 'forbidden'
  | 'credential-plugin-missing'
  | 'credential-plugin-failed'
  | 'crd-missing'
  | 'not-found'
  | 'conflict'
  | 'other';

export class KubeProblem extends Error {
  constructor(
    message: string,
    readonly suggestedAction: string,
    readonly kind: KubeProblemKind,
    /** The buttons of its notification (Show Logs is always added). */
    readonly fixes: readonly Fix[] = [],
  ) {
    super(message);
    this.name = 'KubeProblem';
  }
}

export function httpStatus(err: unknown): number | undefined {
  return failureStatus(err);
}

export interface Operation {
  verb: string;
  /** RBAC resource, e.g. `queuesplits.queuesplit.dev`, `deployments.apps`. */
  resource: string;
  namespace?: string;
  name?: string;
  context: string;
  /** The kubeconfig's current user's credential plugin (users[].user.exec), if it has one. */
  exec?: ExecCredentialConfig;
  /** The kubeconfig file the context comes from (Open Kubeconfig). */
  kubeconfigFile?: string;
}

export function isCrdMissing(err: unknown): boolean {
  return (
    httpStatus(err) === 404 &&
    /could not find the requested resource|the server could not find/i.test(failureStatusMessage(err) ?? '')
  );
}

// At most two buttons each (and Show Logs): a toast cuts longer rows short. The welcome view of
// the same class (package.json viewsWelcome) has room for the rest.
const RETRY = 'then Retry';

export function kubeProblem(err: unknown, op: Operation): KubeProblem {
  if (err instanceof KubeProblem) return err;
  const object = `${op.resource}${op.name !== undefined ? `/${op.name}` : ''}${op.namespace !== undefined ? ` in namespace ${op.namespace}` : ''}`;
  const ctx = `context "${op.context}"`;
  const openKubeconfig = op.kubeconfigFile !== undefined ? fix.openKubeconfig(op.kubeconfigFile) : undefined;
  const failure = classifyKubeFailure(err, op.exec);
  switch (failure.kind) {
    case 'unreachable':
      return new KubeProblem(
        `The Kubernetes API of ${ctx} does not answer (${failure.code}).`,
        `Check that the cluster runs and that this machine reaches it (VPN, proxy, \`kubectl --context ${op.context} get ns\`), ${RETRY}; or pick another context.`,
        'unreachable',
        [fix.retry(), fix.selectContext()],
      );
    case 'tls':
      return new KubeProblem(
        `The Kubernetes API of ${ctx} is not trusted: ${failure.reason} (${failure.code}).`,
        `Fix the cluster's certificate-authority or server address in your kubeconfig (a fresh kubeconfig from your cluster provider has both), ${RETRY}; or pick another context.`,
        'tls',
        uniqueFixes([openKubeconfig, fix.retry()]),
      );
    case 'exec-missing': {
      const { plugin } = failure;
      const what = failure.notExecutable
        ? `cannot be run (${failure.command} is not executable)`
        : `is not installed: VS Code finds no ${plugin.binary} on its PATH`;
      return new KubeProblem(
        `Your kubeconfig logs in to ${ctx} with the credential plugin ${plugin.binary}, which ${what}.`,
        `Install ${plugin.installedBy ?? plugin.binary}. If it is installed already, put it on the PATH VS Code starts with and restart VS Code. Then Retry.`,
        'credential-plugin-missing',
        uniqueFixes([fix.retry(), openKubeconfig]),
      );
    }
    case 'exec-failed': {
      const { plugin } = failure;
      return new KubeProblem(
        `The credential plugin ${plugin.binary} of ${ctx} failed: ${failure.firstLine}`,
        plugin.login !== undefined
          ? `Log in again in a terminal (\`${plugin.login}\`), ${RETRY}.`
          : `Run it in a terminal to see why (your kubeconfig's users[].user.exec), fix that, ${RETRY}.`,
        'credential-plugin-failed',
        uniqueFixes([plugin.login !== undefined ? fix.copyLogin(plugin.login) : openKubeconfig, fix.retry()]),
      );
    }
    case 'other':
      return new KubeProblem(
        `Talking to the Kubernetes API of ${ctx} failed: ${failure.text}`,
        `Check the context with \`kubectl --context ${op.context} get ns\`, ${RETRY}; if it works there, report this with the Queue Split log.`,
        'other',
        [fix.retry(), fix.selectContext()],
      );
    case 'status':
      break;
  }
  const { status, message } = failure;
  if (status === 401) {
    // A credential plugin that hands out a refused token: its own login is stale.
    const login =
      op.exec?.command !== undefined ? credentialPlugin(op.exec.command, op.exec).login : undefined;
    return new KubeProblem(
      `Your login to the cluster of ${ctx} has expired or was refused (401 Unauthorized).`,
      login !== undefined
        ? `Log in again in a terminal (\`${login}\`), ${RETRY}.`
        : `Log in again to renew the credentials in your kubeconfig (or get a fresh kubeconfig from your cluster provider), ${RETRY}.`,
      'unauthorized',
      uniqueFixes([login !== undefined ? fix.copyLogin(login) : openKubeconfig, fix.retry()]),
    );
  }
  if (status === 403 && isOwnerPolicyDenial(message))
    return new KubeProblem(
      `Kubernetes refused to ${op.verb} ${object}: ${message ?? ''}`,
      `Only a split's owner (or a member of ${ADMINS_GROUP}) may change or stop it: ask its owner to stop it. If it is yours, leave the queueSplit.owner setting empty so your Kubernetes user name is used.`,
      'forbidden',
      [fix.setting('queueSplit.owner')],
    );
  if (status === 403) {
    const subject = forbiddenSubject(message);
    const who =
      subject !== undefined
        ? `Your Kubernetes user ${subject.kind === 'User' ? subject.name : `(service account ${subject.namespace}/${subject.name})`}`
        : 'Your credentials';
    const command =
      subject !== undefined && op.namespace !== undefined
        ? developerRoleBindingCommand(op.namespace, subject)
        : undefined;
    return new KubeProblem(
      `${who} (${ctx}) may not ${op.verb} ${object}.`,
      `Ask your cluster admin to bind the queuesplit-developer ClusterRole to you${op.namespace !== undefined ? ` in namespace ${op.namespace}` : ''}${command !== undefined ? ` ("Copy RoleBinding Command" copies the command they run: ${command})` : ''}, or pick a namespace where you have it.`,
      'forbidden',
      uniqueFixes([command !== undefined ? fix.copyRoleBinding(command) : fix.selectContext(), fix.retry()]),
    );
  }
  if (status === 404 && op.resource.startsWith('queuesplits.') && isCrdMissing(err))
    return new KubeProblem(
      `Queue Split is not installed in the cluster of ${ctx}.`,
      'Run "Queue Split: Install Controller into Cluster…" (needs cluster-admin), or ask your cluster admin to install it.',
      'crd-missing',
      [fix.installController(), fix.selectContext()],
    );
  if (status === 404)
    return new KubeProblem(
      `There is no ${object} (${ctx}).`,
      'Check the name, the namespace and the context.',
      'not-found',
      [fix.selectContext()],
    );
  if (status === 409)
    return new KubeProblem(
      `Kubernetes refused to ${op.verb} ${object}: ${message ?? 'conflict'}.`,
      'Refresh and try again.',
      'conflict',
      [fix.retry()],
    );
  return new KubeProblem(
    `Kubernetes refused to ${op.verb} ${object} (HTTP ${status}): ${message ?? (err instanceof Error ? err.message.split('\n')[0] : 'unknown error')}`,
    'Check the object with kubectl; if it looks right, report this with the Queue Split log.',
    'other',
  );
}
