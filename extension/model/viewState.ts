// Which welcome view the Queue Splits view shows (context key queueSplit.state; the texts and
// buttons are package.json `viewsWelcome`, one per state), from how its first look at the
// cluster ended. Pure: the tree provider (tree/provider.ts) sets it.
import type { KubeProblemKind } from '../kube/errors';

export type ViewState =
  | 'loading'
  | 'noCluster'
  | 'unreachable'
  | 'tlsUntrusted'
  | 'unauthorized'
  | 'forbidden'
  | 'credentialPluginMissing'
  | 'credentialPluginFailed'
  | 'failed'
  | 'controllerMissing'
  | 'noWorkloads'
  | 'ready';

/** Every state with a welcome view of its own (all but loading and ready). */
export const WELCOME_STATES: readonly ViewState[] = [
  'noCluster',
  'unreachable',
  'tlsUntrusted',
  'unauthorized',
  'forbidden',
  'credentialPluginMissing',
  'credentialPluginFailed',
  'failed',
  'controllerMissing',
  'noWorkloads',
];

const BY_KIND: Record<KubeProblemKind, ViewState> = {
  config: 'noCluster',
  unreachable: 'unreachable',
  tls: 'tlsUntrusted',
  unauthorized: 'unauthorized',
  forbidden: 'forbidden',
  'credential-plugin-missing': 'credentialPluginMissing',
  'credential-plugin-failed': 'credentialPluginFailed',
  'crd-missing': 'controllerMissing',
  'not-found': 'failed',
  conflict: 'failed',
  other: 'failed',
};

/** The welcome state of a failed look, by the KubeProblem's kind (anything else: `failed`). */
export function viewStateOf(kind: unknown): ViewState {
  return typeof kind === 'string' && Object.hasOwn(BY_KIND, kind)
    ? BY_KIND[kind as KubeProblemKind]
    : 'failed';
}

/**
 * Whether a failed look also raises a notification (its words name what the static welcome text
 * cannot: the plugin, the verb and resource, the plugin's error): not for a missing kubeconfig
 * or controller, which the welcome view alone explains to a first-time user.
 */
export function notifiesOf(state: ViewState): boolean {
  return (
    state !== 'noCluster' &&
    state !== 'controllerMissing' &&
    state !== 'noWorkloads' &&
    state !== 'ready' &&
    state !== 'loading'
  );
}
