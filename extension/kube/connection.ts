// The user's kubeconfig, context and namespace, as the extension uses them. Precedence: the
// choice made with "Select Context/Namespace…" for this workspace, then the settings, then the
// kubeconfig's current context and that context's namespace, then `default`.
import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import { KubeConfig } from '@kubernetes/client-node';
import type { ExecCredentialConfig } from '../../core/kubeFailure';
import { fix } from '../model/fixes';
import type { KubeTargetInfo } from '../model/types';
import type { Selection } from '../model/selection';
import { KubeProblem, type Operation } from './errors';

export interface KubeConnection {
  kc: KubeConfig;
  target: KubeTargetInfo;
  /** The kubeconfig file given in the settings, for the sidecar; undefined = default lookup. */
  kubeconfigPath?: string;
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

/**
 * The file behind the kubeconfig in use: the setting's, else the first existing file of
 * $KUBECONFIG, else ~/.kube/config; undefined when there is none.
 */
export function kubeconfigFile(kubeconfigPath: string): string | undefined {
  if (kubeconfigPath !== '') return kubeconfigPath;
  const candidates = (process.env.KUBECONFIG ?? '').split(path.delimiter).filter((f) => f !== '');
  candidates.push(path.join(os.homedir(), '.kube', 'config'));
  return candidates.find((f) => fs.existsSync(f));
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

export function loadKubeConfig(kubeconfigPath: string): KubeConfig {
  const kc = new KubeConfig();
  try {
    if (kubeconfigPath !== '') {
      if (!fs.existsSync(kubeconfigPath)) throw new Error(`${kubeconfigPath} does not exist`);
      kc.loadFromFile(kubeconfigPath);
    } else kc.loadFromDefault();
  } catch (err) {
    throw new KubeProblem(
      `Cannot load the kubeconfig${kubeconfigPath !== '' ? ` ${kubeconfigPath}` : ''}: ${err instanceof Error ? err.message : String(err)}`,
      'Point the queueSplit.kubeconfig setting (or $KUBECONFIG) at a valid kubeconfig file.',
      'config',
      [fix.setting('queueSplit.kubeconfig')],
    );
  }
  return kc;
}

/** Which kubeconfig was read, for messages: the setting's file, else $KUBECONFIG or ~/.kube/config. */
export function kubeconfigSource(kubeconfigPath: string): string {
  if (kubeconfigPath !== '') return `${kubeconfigPath} (queueSplit.kubeconfig)`;
  const env = process.env.KUBECONFIG;
  return env !== undefined && env !== '' ? `${env} ($KUBECONFIG)` : '~/.kube/config';
}

export function listContexts(kubeconfigPath: string): ContextInfo[] {
  const kc = loadKubeConfig(kubeconfigPath);
  const current = kc.getCurrentContext();
  return kc.getContexts().map((c) => ({
    name: c.name,
    cluster: c.cluster,
    ...(c.namespace !== undefined ? { namespace: c.namespace } : {}),
    current: c.name === current,
  }));
}

export function connect(
  kubeconfigPath: string,
  selection: Selection,
  settingsTarget: Selection,
): KubeConnection {
  const kc = loadKubeConfig(kubeconfigPath);
  const wanted = selection.context || settingsTarget.context || undefined;
  if (wanted !== undefined) {
    if (!kc.getContexts().some((c) => c.name === wanted)) {
      const known = kc.getContexts().map((c) => c.name);
      throw new KubeProblem(
        `Context "${wanted}" is not in the kubeconfig ${kubeconfigSource(kubeconfigPath)} (it has ${known.length > 0 ? known.join(', ') : 'no contexts'}).`,
        'Run "Queue Split: Select Context/Namespace…" to pick one.',
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
      'The kubeconfig has no current context with a cluster.',
      'Run "Queue Split: Select Context/Namespace…", or set one with `kubectl config use-context`.',
      'config',
      [fix.selectContext()],
    );
  }
  const namespace =
    selection.namespace || settingsTarget.namespace || kc.getContextObject(context)?.namespace || 'default';
  const exec = execOf(kc);
  const file = kubeconfigFile(kubeconfigPath);
  return {
    kc,
    target: { context, namespace, server: cluster.server },
    ...(kubeconfigPath !== '' ? { kubeconfigPath } : {}),
    ...(exec !== undefined ? { exec } : {}),
    ...(file !== undefined ? { kubeconfigFile: file } : {}),
  };
}
