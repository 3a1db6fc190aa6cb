// The sidecar command line for a split the extension created: the sidecar adopts it
// (`--split`), renews its lease and delivers. Secrets (env overrides, relay URL with a password)
// never go on the command line, where `ps` shows them: they go in the 0600 settings file.
import type { SidecarDeliveryMode } from '../../sidecar/protocol';
import type { KubeTargetInfo } from './types';

export interface SidecarLaunch {
  splitName: string;
  target: KubeTargetInfo;
  /** Empty: the sidecar's default ($KUBECONFIG, ~/.kube/config). */
  kubeconfig?: string;
  mode: SidecarDeliveryMode;
  httpTarget?: string;
  relayKafkaBrokers?: string;
  leaseSeconds: number;
  readyTimeoutSeconds: number;
  detachTimeoutSeconds: number;
  /** Where the sidecar keeps its route state (private to the extension). */
  stateFile: string;
  /** env mode: the dotenv file with the complete env (0600). */
  envOut?: string;
  /** The --settings file (written by the caller with settingsFileContent). */
  settingsFile?: string;
}

export function sidecarArgs(launch: SidecarLaunch): string[] {
  const args = [
    '--split',
    launch.splitName,
    '--context',
    launch.target.context,
    '--namespace',
    launch.target.namespace,
    '--mode',
    launch.mode,
    '--lease-seconds',
    String(launch.leaseSeconds),
    '--ready-timeout',
    String(launch.readyTimeoutSeconds),
    '--detach-timeout',
    String(launch.detachTimeoutSeconds),
    '--state-file',
    launch.stateFile,
  ];
  if (launch.kubeconfig !== undefined && launch.kubeconfig !== '')
    args.push('--kubeconfig', launch.kubeconfig);
  if (launch.mode === 'http' && launch.httpTarget !== undefined) args.push('--target', launch.httpTarget);
  if (launch.mode === 'relay' && launch.relayKafkaBrokers !== undefined && launch.relayKafkaBrokers !== '')
    args.push('--relay-kafka-brokers', launch.relayKafkaBrokers);
  if (launch.mode === 'env' && launch.envOut !== undefined) args.push('--env-out', launch.envOut);
  if (launch.settingsFile !== undefined) args.push('--settings', launch.settingsFile);
  return args;
}

/** JSON (valid YAML) for the sidecar's --settings: env overrides, address map, relay URL and destinations. */
export function settingsFileContent(input: {
  env: Readonly<Record<string, string>>;
  addressMap: Readonly<Record<string, string>>;
  relayAmqpUrl?: string;
  /** relay: logical queue → local topic/queue (default: the source's own name). */
  relayTo?: Readonly<Record<string, string>>;
}): string | undefined {
  const content: Record<string, unknown> = {};
  if (Object.keys(input.env).length > 0) content.env = { ...input.env };
  if (Object.keys(input.addressMap).length > 0) content.addressMap = { ...input.addressMap };
  const relay: Record<string, unknown> = {};
  if (input.relayAmqpUrl !== undefined && input.relayAmqpUrl !== '') relay.amqpUrl = input.relayAmqpUrl;
  if (input.relayTo !== undefined && Object.keys(input.relayTo).length > 0) relay.to = { ...input.relayTo };
  if (Object.keys(relay).length > 0) content.relay = relay;
  return Object.keys(content).length > 0 ? `${JSON.stringify(content, null, 2)}\n` : undefined;
}

/** File-name-safe text (contexts are often ARNs or URLs). */
export function safeFileName(text: string): string {
  return text.replace(/[^A-Za-z0-9._-]+/g, '_').slice(0, 120);
}
