// Kubernetes API failures in the words a developer acts on, from the extension's side: its fixes
// name settings and commands, never sidecar flags, and each comes with the buttons that apply
// (model/fixes.ts). The failure itself is classified in core/kubeFailure.ts, shared with the
// sidecar. No `vscode` import: anything with a `suggestedAction` is shown by
// notifications.explain(). docs/extension-errors.md lists every class with its words and buttons.
// Localized with @vscode/l10n (VS Code's l10n in the extension: extension/l10nBridge.ts).
import * as l10n from '@vscode/l10n';
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

export function kubeProblem(err: unknown, op: Operation): KubeProblem {
  if (err instanceof KubeProblem) return err;
  const resource = `${op.resource}${op.name !== undefined ? `/${op.name}` : ''}`;
  const object =
    op.namespace !== undefined ? l10n.t('{0} in namespace {1}', resource, op.namespace) : resource;
  const ctx = l10n.t('context "{0}"', op.context);
  const openKubeconfig = op.kubeconfigFile !== undefined ? fix.openKubeconfig(op.kubeconfigFile) : undefined;
  const failure = classifyKubeFailure(err, op.exec);
  switch (failure.kind) {
    case 'unreachable':
      return new KubeProblem(
        l10n.t('The Kubernetes API of {0} does not answer ({1}).', ctx, failure.code),
        l10n.t(
          'Check that the cluster runs and that this machine reaches it (VPN, proxy, `kubectl --context {0} get ns`), then Retry; or pick another context.',
          op.context,
        ),
        'unreachable',
        [fix.retry(), fix.selectContext()],
      );
    case 'tls':
      return new KubeProblem(
        l10n.t('The Kubernetes API of {0} is not trusted: {1} ({2}).', ctx, failure.reason, failure.code),
        l10n.t(
          "Fix the cluster's certificate-authority or server address in your kubeconfig (a fresh kubeconfig from your cluster provider has both), then Retry; or pick another context.",
        ),
        'tls',
        uniqueFixes([openKubeconfig, fix.retry()]),
      );
    case 'exec-missing': {
      const { plugin } = failure;
      return new KubeProblem(
        failure.notExecutable
          ? l10n.t(
              'Your kubeconfig logs in to {0} with the credential plugin {1}, which cannot be run ({2} is not executable).',
              ctx,
              plugin.binary,
              failure.command,
            )
          : l10n.t(
              'Your kubeconfig logs in to {0} with the credential plugin {1}, which is not installed: VS Code finds no {1} on its PATH.',
              ctx,
              plugin.binary,
            ),
        l10n.t(
          'Install {0}. If it is installed already, put it on the PATH VS Code starts with and restart VS Code. Then Retry.',
          plugin.installedBy ?? plugin.binary,
        ),
        'credential-plugin-missing',
        uniqueFixes([fix.retry(), openKubeconfig]),
      );
    }
    case 'exec-failed': {
      const { plugin } = failure;
      return new KubeProblem(
        l10n.t('The credential plugin {0} of {1} failed: {2}', plugin.binary, ctx, failure.firstLine),
        plugin.login !== undefined
          ? l10n.t('Log in again in a terminal (`{0}`), then Retry.', plugin.login)
          : l10n.t(
              "Run it in a terminal to see why (your kubeconfig's users[].user.exec), fix that, then Retry.",
            ),
        'credential-plugin-failed',
        uniqueFixes([plugin.login !== undefined ? fix.copyLogin(plugin.login) : openKubeconfig, fix.retry()]),
      );
    }
    case 'other':
      return new KubeProblem(
        l10n.t('Talking to the Kubernetes API of {0} failed: {1}', ctx, failure.text),
        l10n.t(
          'Check the context with `kubectl --context {0} get ns`, then Retry; if it works there, report this with the Queue Split log.',
          op.context,
        ),
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
      l10n.t('Your login to the cluster of {0} has expired or was refused (401 Unauthorized).', ctx),
      login !== undefined
        ? l10n.t('Log in again in a terminal (`{0}`), then Retry.', login)
        : l10n.t(
            'Log in again to renew the credentials in your kubeconfig (or get a fresh kubeconfig from your cluster provider), then Retry.',
          ),
      'unauthorized',
      uniqueFixes([login !== undefined ? fix.copyLogin(login) : openKubeconfig, fix.retry()]),
    );
  }
  if (status === 403 && isOwnerPolicyDenial(message))
    return new KubeProblem(
      l10n.t('Kubernetes refused to {0} {1}: {2}', op.verb, object, message ?? ''),
      l10n.t(
        "Only a split's owner (or a member of {0}) may change or stop it: ask its owner to stop it. If it is yours, leave the queueSplit.owner setting empty so your Kubernetes user name is used.",
        ADMINS_GROUP,
      ),
      'forbidden',
      [fix.setting('queueSplit.owner')],
    );
  if (status === 403) {
    const subject = forbiddenSubject(message);
    const who =
      subject !== undefined
        ? subject.kind === 'User'
          ? l10n.t('Your Kubernetes user {0}', subject.name)
          : l10n.t('Your Kubernetes user (service account {0})', `${subject.namespace}/${subject.name}`)
        : l10n.t('Your credentials');
    const command =
      subject !== undefined && op.namespace !== undefined
        ? developerRoleBindingCommand(op.namespace, subject)
        : undefined;
    return new KubeProblem(
      l10n.t('{0} ({1}) may not {2} {3}.', who, ctx, op.verb, object),
      op.namespace !== undefined && command !== undefined
        ? l10n.t(
            'Ask your cluster admin to bind the queuesplit-developer ClusterRole to you in namespace {0} ("Copy RoleBinding Command" copies the command they run: {1}), or pick a namespace where you have it.',
            op.namespace,
            command,
          )
        : op.namespace !== undefined
          ? l10n.t(
              'Ask your cluster admin to bind the queuesplit-developer ClusterRole to you in namespace {0}, or pick a namespace where you have it.',
              op.namespace,
            )
          : l10n.t(
              'Ask your cluster admin to bind the queuesplit-developer ClusterRole to you, or pick a namespace where you have it.',
            ),
      'forbidden',
      uniqueFixes([command !== undefined ? fix.copyRoleBinding(command) : fix.selectContext(), fix.retry()]),
    );
  }
  if (status === 404 && op.resource.startsWith('queuesplits.') && isCrdMissing(err))
    return new KubeProblem(
      l10n.t('Queue Split is not installed in the cluster of {0}.', ctx),
      l10n.t(
        'Run "Queue Split: Install Controller into Cluster…" (needs cluster-admin), or ask your cluster admin to install it.',
      ),
      'crd-missing',
      [fix.installController(), fix.selectContext()],
    );
  if (status === 404)
    return new KubeProblem(
      l10n.t('There is no {0} ({1}).', object, ctx),
      l10n.t('Check the name, the namespace and the context.'),
      'not-found',
      [fix.selectContext()],
    );
  if (status === 409)
    return new KubeProblem(
      l10n.t('Kubernetes refused to {0} {1}: {2}.', op.verb, object, message ?? l10n.t('conflict')),
      l10n.t('Refresh and try again.'),
      'conflict',
      [fix.retry()],
    );
  return new KubeProblem(
    l10n.t(
      'Kubernetes refused to {0} {1} (HTTP {2}): {3}',
      op.verb,
      object,
      status,
      message ?? (err instanceof Error ? err.message.split('\n')[0] : undefined) ?? l10n.t('unknown error'),
    ),
    l10n.t('Check the object with kubectl; if it looks right, report this with the Queue Split log.'),
    'other',
  );
}
