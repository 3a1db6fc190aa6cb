// The user's kubeconfig, context and namespace, as the extension uses them. The files: see
// core/kubeconfig.ts (the setting, the Kubernetes extension's, $KUBECONFIG, ~/.kube/config; merged
// as kubectl merges them). The context: the one pinned with "Select Context/Namespace…" for this
// workspace, else the queueSplit.context setting, else the kubeconfig's current context, read
// afresh on every use (so `kubectl config use-context` is followed). The namespace: the pinned
// one, else queueSplit.namespace, else the context's namespace, else `default`.
import * as l10n from '@vscode/l10n';
import * as fs from 'node:fs';
import { KubeConfig } from '@kubernetes/client-node';
import { describeKubeconfigFiles, type KubeconfigFiles } from '../../core/kubeconfig';
import type { ExecCredentialConfig } from '../../core/kubeFailure';
import { KubeconfigLoadError, loadKubeconfigFiles } from '../../laptop/kubeconfigFiles';
import type { KubeTargetInfo } from '../model/types';
import type { Selection } from '../model/selection';
import { fix } from '../model/fixes';
import { KubeProblem, type Operation } from './errors';

export interface KubeConnection {
  kc: KubeConfig;
  target: KubeTargetInfo;
  /** The files read, for the sidecar (an explicit file as --kubeconfig, a list as $KUBECONFIG). */
  kubeconfig: KubeconfigFiles;
  /** The current user's credential plugin (users[].user.exec), when the kubeconfig uses one. */
  exec?: ExecCredentialConfig;
  /** The kubeconfig file a person would open to fix the context (Open Kubeconfig). */
  kubeconfigFile?: string;
}

/** What kubeProblem() needs of a connection besides the operation: context, plugin, file. */
export function failureFacts(
  connection: KubeConnection,
): Pick<Operation, 'context' | 'exec' | 'kubeconfigFile'> {
  return {
    context: connection.target.context,
    ...(connection.exec !== undefined ? { exec: connection.exec } : {}),
    ...(connection.kubeconfigFile !== undefined ? { kubeconfigFile: connection.kubeconfigFile } : {}),
  };
}

/** The file behind the kubeconfig in use (the first of its files that exists); undefined: none. */
export function kubeconfigFile(source: KubeconfigFiles): string | undefined {
  return source.files.find((f) => fs.existsSync(f));
}

function execOf(kc: KubeConfig): ExecCredentialConfig | undefined {
  const user = kc.getCurrentUser();
  const exec = (user?.exec ??
    (user?.authProvider as { config?: { exec?: unknown } } | undefined)?.config?.exec) as
    ExecCredentialConfig | undefined;
  return exec !== undefined && exec !== null && typeof exec.command === 'string' ? exec : undefined;
}

export interface ContextInfo {
  name: string;
  cluster: string;
  namespace?: string;
  current: boolean;
}

const fixFiles = () =>
  l10n.t(
    'Point the queueSplit.kubeconfig setting (a file, or a list merged as kubectl merges $KUBECONFIG) at valid kubeconfig files.',
  );

export function loadKubeConfig(source: KubeconfigFiles): KubeConfig {
  let loaded;
  try {
    loaded = loadKubeconfigFiles(source);
  } catch (err) {
    const reason = err instanceof KubeconfigLoadError || err instanceof Error ? err.message : String(err);
    throw new KubeProblem(
      l10n.t('Cannot load the kubeconfig {0}: {1}', describeKubeconfigFiles(source), reason),
      fixFiles(),
      'config',
      [fix.setting('queueSplit.kubeconfig')],
    );
  }
  if (loaded.missing.length === source.files.length) {
    throw new KubeProblem(
      source.files.length === 1
        ? l10n.t('Cannot load the kubeconfig {0}: it does not exist.', describeKubeconfigFiles(source))
        : l10n.t('Cannot load the kubeconfig {0}: none of them exists.', describeKubeconfigFiles(source)),
      fixFiles(),
      'config',
      [fix.setting('queueSplit.kubeconfig')],
    );
  }
  return loaded.kc;
}

/** Which kubeconfig was read, for messages. */
export function kubeconfigSource(source: KubeconfigFiles): string {
  return describeKubeconfigFiles(source);
}

export function listContexts(source: KubeconfigFiles): ContextInfo[] {
  const kc = loadKubeConfig(source);
  const current = kc.getCurrentContext();
  return kc.getContexts().map((c) => ({
    name: c.name,
    cluster: c.cluster,
    ...(c.namespace !== undefined ? { namespace: c.namespace } : {}),
    current: c.name === current,
  }));
}

export function connect(
  source: KubeconfigFiles,
  selection: Selection,
  settingsTarget: Selection,
): KubeConnection {
  const kc = loadKubeConfig(source);
  const wanted = selection.context || settingsTarget.context || undefined;
  const contextFrom: KubeTargetInfo['contextFrom'] = selection.context
    ? 'pinned'
    : settingsTarget.context
      ? 'setting'
      : 'kubeconfig';
  if (wanted !== undefined) {
    if (!kc.getContexts().some((c) => c.name === wanted)) {
      const known = kc.getContexts().map((c) => c.name);
      throw new KubeProblem(
        l10n.t(
          'Context "{0}" ({1}) is not in the kubeconfig {2} (it has {3}).',
          wanted,
          contextFrom === 'pinned'
            ? l10n.t('pinned with Select Context/Namespace…')
            : l10n.t('the queueSplit.context setting'),
          kubeconfigSource(source),
          known.length > 0 ? known.join(', ') : l10n.t('no contexts'),
        ),
        contextFrom === 'pinned'
          ? l10n.t(
              'Run "Queue Split: Select Context/Namespace…" to pick another, or "Queue Split: Unpin Context" to follow the kubeconfig\'s current context.',
            )
          : l10n.t('Change the queueSplit.context setting, or run "Queue Split: Select Context/Namespace…".'),
        'config',
        [fix.selectContext(), fix.setting('queueSplit.context')],
      );
    }
    kc.setCurrentContext(wanted);
  }
  const context = kc.getCurrentContext();
  const cluster = kc.getCurrentCluster();
  if (!context || cluster === null) {
    throw new KubeProblem(
      context
        ? l10n.t(
            'The current context "{0}" of the kubeconfig {1} is not one of its contexts, or has no cluster.',
            context,
            kubeconfigSource(source),
          )
        : l10n.t('The kubeconfig {0} has no current context.', kubeconfigSource(source)),
      l10n.t('Run "Queue Split: Select Context/Namespace…", or set one with `kubectl config use-context`.'),
      'config',
      [fix.selectContext()],
    );
  }
  const contextNamespace = kc.getContextObject(context)?.namespace || undefined;
  const namespaceFrom: KubeTargetInfo['namespaceFrom'] = selection.namespace
    ? 'pinned'
    : settingsTarget.namespace
      ? 'setting'
      : contextNamespace !== undefined
        ? 'context'
        : 'default';
  const namespace = selection.namespace || settingsTarget.namespace || contextNamespace || 'default';
  const exec = execOf(kc);
  const file = kubeconfigFile(source);
  return {
    kc,
    target: {
      context,
      namespace,
      server: cluster.server,
      contextFrom,
      namespaceFrom,
    },
    kubeconfig: source,
    ...(exec !== undefined ? { exec } : {}),
    ...(file !== undefined ? { kubeconfigFile: file } : {}),
  };
}
