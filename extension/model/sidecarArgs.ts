// The sidecar command lines: the preflight the extension runs before it creates a split
// (`--preflight-only`), and the sidecar for a split the extension created, which adopts it
// (`--split`), renews its lease and delivers. Credentials (env overrides, relay URLs with their
// passwords from VS Code's secret storage) never go on the command line, where `ps` shows them,
// nor in a file: they go in the child's environment (QUEUE_SPLIT_SECRET_SETTINGS), private to it.
// The --settings file (0600) keeps the rest: the address map and the relay destinations.
import * as path from 'node:path';
import type { KubeconfigFiles } from '../../core/kubeconfig';
import { PROVIDER_NAMES, PROVIDERS, type Provider } from '../../core/providers';
import type { SidecarDeliveryMode } from '../../core/sidecarProtocol';
import type { KubeTargetInfo, WorkloadKind } from './types';

/**
 * How the sidecar gets the extension's kubeconfig: a file named on its own as --kubeconfig; a list
 * (the setting's list, the Kubernetes extension's, $KUBECONFIG, ~/.kube/config) as $KUBECONFIG
 * in its environment, which it merges as kubectl does (laptop/kubeconfigFiles.ts).
 */
export function sidecarKubeconfig(
  source: KubeconfigFiles | undefined,
  delimiter: string = path.delimiter,
): { kubeconfig?: string; env: Record<string, string> } {
  if (source === undefined) return { env: {} };
  if (source.explicit && source.files[0] !== undefined) return { kubeconfig: source.files[0], env: {} };
  return { env: { KUBECONFIG: source.files.join(delimiter) } };
}

export interface SidecarLaunch {
  splitName: string;
  target: KubeTargetInfo;
  /** Empty: the sidecar's default ($KUBECONFIG, ~/.kube/config). */
  kubeconfig?: string;
  mode: SidecarDeliveryMode;
  httpTarget?: string;
  leaseSeconds: number;
  readyTimeoutSeconds: number;
  detachTimeoutSeconds: number;
  /** queueSplit.delivery.rejectAfterAttempts: http/relay only; 0 or absent: never. */
  rejectAfterAttempts?: number;
  /** Where the sidecar keeps its route state (private to the extension). */
  stateFile: string;
  /** env mode: the dotenv file with the complete env (0600). */
  envOut?: string;
  /** The --settings file (written by the caller with settingsFileContent). */
  settingsFile?: string;
}

export function sidecarArgs(launch: SidecarLaunch): string[] {
  return [
    '--split',
    launch.splitName,
    ...kubeArgs(launch.target, launch.kubeconfig),
    '--lease-seconds',
    String(launch.leaseSeconds),
    '--ready-timeout',
    String(launch.readyTimeoutSeconds),
    '--detach-timeout',
    String(launch.detachTimeoutSeconds),
    '--state-file',
    launch.stateFile,
    ...modeArgs(launch),
    // env mode delivers nothing from the sidecar, which refuses the flag there.
    ...(launch.mode !== 'env' && launch.rejectAfterAttempts !== undefined && launch.rejectAfterAttempts > 0
      ? ['--reject-after', String(launch.rejectAfterAttempts)]
      : []),
    ...(launch.mode === 'env' && launch.envOut !== undefined ? ['--env-out', launch.envOut] : []),
    ...(launch.settingsFile !== undefined ? ['--settings', launch.settingsFile] : []),
  ];
}

/** What the sidecar checks before a create, for a split the extension is about to create. */
export interface PreflightLaunch {
  workload: { kind: WorkloadKind; name: string };
  queues: readonly string[];
  owner: string;
  target: KubeTargetInfo;
  kubeconfig?: string;
  mode: SidecarDeliveryMode;
  httpTarget?: string;
  settingsFile?: string;
}

export function preflightArgs(launch: PreflightLaunch): string[] {
  return [
    '--preflight-only',
    '--workload',
    `${launch.workload.kind.toLowerCase()}/${launch.workload.name}`,
    ...(launch.queues.length > 0 ? ['--queue', launch.queues.join(',')] : []),
    '--owner',
    launch.owner,
    ...kubeArgs(launch.target, launch.kubeconfig),
    ...modeArgs(launch),
    ...(launch.settingsFile !== undefined ? ['--settings', launch.settingsFile] : []),
  ];
}

function kubeArgs(target: KubeTargetInfo, kubeconfig: string | undefined): string[] {
  return [
    '--context',
    target.context,
    '--namespace',
    target.namespace,
    ...(kubeconfig !== undefined && kubeconfig !== '' ? ['--kubeconfig', kubeconfig] : []),
  ];
}

function modeArgs(launch: { mode: SidecarDeliveryMode; httpTarget?: string }): string[] {
  const args = ['--mode', launch.mode];
  if (launch.mode === 'http' && launch.httpTarget !== undefined) args.push('--target', launch.httpTarget);
  return args;
}

/** JSON (valid YAML) for the sidecar's --settings: what holds no credential, the address map and
 * the relay destinations. */
export function settingsFileContent(input: {
  addressMap: Readonly<Record<string, string>>;
  /** relay: logical queue → local topic/queue (default: the source's own name). */
  relayTo?: Readonly<Record<string, string>>;
}): string | undefined {
  const content: Record<string, unknown> = {};
  if (Object.keys(input.addressMap).length > 0) content.addressMap = { ...input.addressMap };
  if (input.relayTo !== undefined && Object.keys(input.relayTo).length > 0)
    content.relay = { to: { ...input.relayTo } };
  return Object.keys(content).length > 0 ? `${JSON.stringify(content, null, 2)}\n` : undefined;
}

/** The value of QUEUE_SPLIT_SECRET_SETTINGS (core/sidecarProtocol.ts): env overrides and every
 * provider's local broker, under its key (core/providers.ts) — a broker URL may hold a password,
 * an env value may be one. Undefined when there is nothing to pass. */
export function secretSettingsContent(input: {
  env: Readonly<Record<string, string>>;
  relayBrokers?: Readonly<Partial<Record<Provider, string>>>;
}): string | undefined {
  const content: Record<string, unknown> = {};
  if (Object.keys(input.env).length > 0) content.env = { ...input.env };
  const relay: Record<string, unknown> = {};
  for (const provider of PROVIDER_NAMES) {
    const broker = input.relayBrokers?.[provider];
    if (broker !== undefined && broker !== '') relay[PROVIDERS[provider].relay.settingsKey] = broker;
  }
  if (Object.keys(relay).length > 0) content.relay = relay;
  return Object.keys(content).length > 0 ? JSON.stringify(content) : undefined;
}

/** File-name-safe text (contexts are often ARNs or URLs). */
export function safeFileName(text: string): string {
  return text.replace(/[^A-Za-z0-9._-]+/g, '_').slice(0, 120);
}
