// Typed access to the `queueSplit.*` settings (declared in package.json `contributes.configuration`).
// Read fresh on every use: a changed setting applies to the next command without a reload.
import * as vscode from 'vscode';
import { PROVIDERS, type Provider } from '../core/providers';
import type { SidecarDeliveryMode } from '../core/sidecarProtocol';
import { parseRejectAfter, type RejectAfterSetting } from './model/blocked';
import { parseLinger, type LingerSetting } from './model/linger';

export type NotificationKind = 'progress' | 'info' | 'warnings' | 'errors';

function section(): vscode.WorkspaceConfiguration {
  return vscode.workspace.getConfiguration('queueSplit');
}

function stringMap(value: unknown): Record<string, string> {
  if (typeof value !== 'object' || value === null || Array.isArray(value)) return {};
  return Object.fromEntries(
    Object.entries(value).filter((e): e is [string, string] => typeof e[1] === 'string'),
  );
}

export const settings = {
  /** A file (string) or a list of files (merged as kubectl merges $KUBECONFIG); see core/kubeconfig.ts. */
  kubeconfig: (): unknown => section().get<unknown>('kubeconfig', ''),
  context: (): string => section().get<string>('context', '').trim(),
  namespace: (): string => section().get<string>('namespace', '').trim(),
  /** Namespaces the view shows (model/namespaces.ts parses it): names, or ["*"] for all I can list. */
  namespaces: (): unknown => section().get<unknown>('namespaces'),
  /** Only for admins acting for somebody; empty: the Kubernetes user name (ClusterService.owner()). */
  ownerSetting: (): string => section().get<string>('owner', '').trim(),
  workload: (): string => section().get<string>('workload', '').trim(),
  deliveryMode: (): SidecarDeliveryMode => {
    const mode = section().get<string>('delivery.mode', 'http');
    return mode === 'env' || mode === 'relay' ? mode : 'http';
  },
  httpTarget: (): string => section().get<string>('delivery.httpTarget', 'http://127.0.0.1:8080/').trim(),
  /** relay: the local broker of `provider`'s kind (its setting: core/providers.ts); '' for none. */
  relayBroker: (provider: Provider): string =>
    section().get<string>(`delivery.${PROVIDERS[provider].relay.setting}`, '').trim(),
  /** relay: logical queue → local topic/queue; unnamed queues keep their source's name. */
  relayTo: (): Record<string, string> => stringMap(section().get('delivery.relayTo')),
  /** http/relay: reject a message after this many failed attempts (0: never); a bad value says so. */
  rejectAfterAttempts: (): RejectAfterSetting =>
    parseRejectAfter(section().get<unknown>('delivery.rejectAfterAttempts')),
  /** Local values of container env vars (may be secrets: never log them). */
  envOverrides: (): Record<string, string> => stringMap(section().get('env')),
  addressMap: (): Record<string, string> => stringMap(section().get('addressMap')),
  leaseSeconds: (): number => Math.min(3600, Math.max(10, section().get<number>('leaseSeconds', 60))),
  /** Seconds a split stays after its last debug session ends; a bad value says so and falls back. */
  linger: (): LingerSetting => parseLinger(section().get<unknown>('linger')),
  readyTimeoutSeconds: (): number => Math.max(10, section().get<number>('readyTimeoutSeconds', 300)),
  sidecarNodePath: (): string => section().get<string>('sidecar.nodePath', '').trim(),
  installImage: (): string => section().get<string>('install.image', '').trim(),
  installNamespace: (): string =>
    section().get<string>('install.namespace', 'queuesplit-system').trim() || 'queuesplit-system',
  /** Ask before a split restarts a workload's pods (its first split activates it). */
  confirmWorkloadRestart: (): boolean => section().get<boolean>('confirmWorkloadRestart', true),
  /** "Don't ask again": for every workspace of this user. */
  stopConfirmingWorkloadRestart: (): Thenable<void> =>
    section().update('confirmWorkloadRestart', false, vscode.ConfigurationTarget.Global),
  notify: (kind: NotificationKind): boolean => section().get<boolean>(`notifications.${kind}`, true),
};

export type Settings = typeof settings;

/** Fires when a setting that changes which cluster/namespace/owner the views show changes. */
export function affectsTarget(event: vscode.ConfigurationChangeEvent): boolean {
  return ['kubeconfig', 'context', 'namespace', 'namespaces', 'owner'].some((key) =>
    event.affectsConfiguration(`queueSplit.${key}`),
  );
}
