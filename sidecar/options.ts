// Flags (and the --settings file) → validated options. Every problem names the flag or settings
// key and says what a valid value looks like; nothing reaches the cluster before this passes.
import * as fs from 'node:fs';
import { InvalidArgumentError } from 'commander';
import { parse as parseYaml } from 'yaml';
import { z } from 'zod';
import type { WorkloadRef } from '../core/crd/queueSplitSchema';
import { DEFAULT_FILTER_KEY, parseFilter, type HeaderFilter } from '../core/filter';
import { formatFieldError } from '../core/result';
import { PATTERNS } from '../core/queueConfig/schema';
import { AddressMap } from '../laptop/addressMap';
import type { RetryPolicy } from './delivery/retry';
import { SidecarError, usageError, errorText } from '../laptop/errors';
import { SECRET_SETTINGS_ENV, type SidecarDeliveryMode } from '../core/sidecarProtocol';
import { PROVIDER_NAMES, PROVIDERS, type Provider } from '../core/providers';
import { sidecarProvider } from './providers/registry';

/** What commander hands over (all strings; repeatable flags as lists). */
export interface RawOptions {
  workload?: string;
  split?: string;
  queue?: string[];
  filter?: string;
  owner?: string;
  mode: string;
  transport: string;
  agentUrl?: string;
  target?: string;
  httpTimeout: number;
  retryMaxDelay: number;
  /** --reject-after as given: checked here, so its error can name the fix. */
  rejectAfter?: string;
  envOut?: string;
  /** Each provider's relay flag as given (main.ts reads them by the provider table). */
  relayBrokers?: Partial<Record<Provider, string>>;
  relayTo?: string[];
  env?: string[];
  mapAddress?: string[];
  tlsCaFile?: string;
  settings?: string;
  /** The JSON the parent passed in QUEUE_SPLIT_SECRET_SETTINGS (env overrides, relay brokers):
   * read like the --settings file, over it. */
  secretSettings?: string;
  kubeconfig?: string;
  context?: string;
  namespace?: string;
  leaseSeconds: number;
  readyTimeout: number;
  detachTimeout: number;
  stateFile?: string;
  pollInterval: number;
  stopGrace: number;
  preflightOnly?: boolean;
}

export interface SidecarOptions {
  kubeconfig?: string;
  context?: string;
  namespace?: string;
  /** Undefined only with --split (the split names its workload). */
  workload?: WorkloadRef;
  split?: string;
  /** Empty: every queue the workload declares (or the adopted split's). */
  queues: string[];
  /** Undefined: `x-queue-split-user=<owner>`. */
  filter?: HeaderFilter;
  /** --owner (admins acting for somebody); undefined: the Kubernetes user name (core/identity.ts). */
  owner?: string;
  mode: SidecarDeliveryMode;
  /**
   * http and relay: who reads the session shadow. `agent` (default): the queue-agent in the
   * cluster, streaming it here through the API server's port-forward — no broker address or
   * credential on this machine. `broker`: the sidecar itself, which needs both.
   */
  transport: SessionTransport;
  /** Connect the session stream here instead of port-forwarding (a port-forward you run yourself). */
  agentUrl?: string;
  target?: URL;
  httpTimeoutMs: number;
  retry: RetryPolicy;
  /** http/relay: reject a message (as the app's reject would) once this many attempts failed;
   * undefined: retry for ever (the default). */
  rejectAfter?: number;
  envFile?: string;
  /** relay: the local broker of each provider the options name (its flag's or settings' text,
   * read by sidecar/providers/<provider>.ts), and the local topic/queue per queue. */
  relay: { brokers: Partial<Record<Provider, string>>; to: Map<string, string> };
  env: Map<string, string>;
  addressMap: AddressMap;
  tlsCaFile?: string;
  leaseSeconds: number;
  readyTimeoutMs: number;
  detachTimeoutMs: number;
  stateFile?: string;
  pollMs: number;
  stopGraceMs: number;
  /** Run the checks a create runs first (access, declaration, the mode's needs), then exit:
   * the extension asks before it creates a split itself, since creating one rolls the workload. */
  preflightOnly: boolean;
}

/** commander argParser: an integer in [min, max]. */
export function intIn(min: number, max: number) {
  return (value: string): number => {
    const n = Number(value);
    if (!/^\d+$/.test(value.trim()) || !Number.isSafeInteger(n) || n < min || n > max) {
      throw new InvalidArgumentError(`must be a whole number from ${min} to ${max}.`);
    }
    return n;
  };
}

/** commander argParser for repeatable flags: `--x a --x b,c` → [a, b, c] (when `split`). */
export function collect(splitCommas: boolean) {
  return (value: string, previous: string[] | undefined): string[] => [
    ...(previous ?? []),
    ...(splitCommas ? value.split(',') : [value]).map((v) => v.trim()).filter((v) => v !== ''),
  ];
}

const KINDS: Record<string, WorkloadRef['kind']> = {
  deployment: 'Deployment',
  deployments: 'Deployment',
  deploy: 'Deployment',
  'deployment.apps': 'Deployment',
  statefulset: 'StatefulSet',
  statefulsets: 'StatefulSet',
  sts: 'StatefulSet',
  'statefulset.apps': 'StatefulSet',
};

export function parseWorkload(text: string): WorkloadRef {
  const slash = text.indexOf('/');
  const kindText = slash < 0 ? 'deployment' : text.slice(0, slash).toLowerCase();
  const name = slash < 0 ? text : text.slice(slash + 1);
  const kind = KINDS[kindText];
  if (kind === undefined) {
    throw usageError(
      '--workload',
      `"${kindText}" is not a supported kind.`,
      'Use deployment/<name> or statefulset/<name> (a bare name means a Deployment).',
    );
  }
  if (!/^[a-z0-9]([-a-z0-9.]*[a-z0-9])?$/.test(name) || name.length > 253) {
    throw usageError(
      '--workload',
      `"${name}" is not a Kubernetes object name.`,
      'Use the workload name as `kubectl get deploy` shows it.',
    );
  }
  return { kind, name };
}

function keyValues(entries: readonly string[], flag: string, example: string): Map<string, string> {
  const out = new Map<string, string>();
  for (const entry of entries) {
    const eq = entry.indexOf('=');
    if (eq <= 0) throw usageError(flag, `"${entry}" is not NAME=VALUE.`, `Write it as ${example}.`);
    out.set(entry.slice(0, eq).trim(), entry.slice(eq + 1));
  }
  return out;
}

const settingsSchema = z.strictObject({
  env: z.record(z.string().regex(PATTERNS.envName.regex), z.string()).optional(),
  addressMap: z.record(z.string(), z.string()).optional(),
  tlsCaFile: z.string().optional(),
  target: z.string().optional(),
  relay: z
    .strictObject({
      // Each provider's local broker, under its key (sidecar/providers/<provider>.ts).
      ...Object.fromEntries(
        PROVIDER_NAMES.map((provider) => [PROVIDERS[provider].relay.settingsKey, z.string().optional()]),
      ),
      to: z.record(z.string(), z.string()).optional(),
    })
    .optional(),
});
export type SettingsFile = z.infer<typeof settingsSchema>;

/** Reads the --settings file (YAML or JSON); problems name the file and the key. */
export function loadSettings(file: string): SettingsFile {
  let value: unknown;
  try {
    value = parseYaml(fs.readFileSync(file, 'utf8'));
  } catch (err) {
    throw usageError(
      '--settings',
      `cannot read ${file}: ${errorText(err)}`,
      'Pass a readable YAML or JSON file.',
    );
  }
  const parsed = settingsSchema.safeParse(value ?? {});
  if (!parsed.success) {
    const issue = parsed.error.issues[0];
    const where = issue?.path.join('.') || '(top level)';
    throw usageError(
      '--settings',
      `${file}: ${where}: ${issue?.message ?? 'invalid'}.`,
      `Allowed keys: env {NAME: value}, addressMap {from: to}, tlsCaFile, target, relay {${relaySettingsKeys}, to {queue: destination}}.`,
    );
  }
  return parsed.data;
}

/** What QUEUE_SPLIT_SECRET_SETTINGS may carry: the --settings keys that can hold a credential. */
const secretSettingsSchema = settingsSchema.pick({ env: true, relay: true });

/** Reads QUEUE_SPLIT_SECRET_SETTINGS; a problem names the env var and the key, never a value. */
export function loadSecretSettings(text: string): SettingsFile {
  let value: unknown;
  try {
    value = JSON.parse(text);
  } catch {
    throw usageError(
      SECRET_SETTINGS_ENV,
      'is not JSON.',
      'Leave it unset, or pass {"env": {NAME: value}, "relay": {...}} (the extension sets it itself).',
    );
  }
  const parsed = secretSettingsSchema.safeParse(value ?? {});
  if (!parsed.success) {
    const issue = parsed.error.issues[0];
    const where = issue?.path.join('.') || '(top level)';
    throw usageError(
      SECRET_SETTINGS_ENV,
      `${where}: ${issue?.message ?? 'invalid'}.`,
      `Allowed keys: env {NAME: value}, relay {${relaySettingsKeys}, to {queue: destination}}.`,
    );
  }
  return parsed.data;
}

/** The --settings file's values with QUEUE_SPLIT_SECRET_SETTINGS's over them, key by key. */
function mergeSettings(file: SettingsFile, secret: SettingsFile): SettingsFile {
  const env = { ...file.env, ...secret.env };
  const relay = {
    ...file.relay,
    ...secret.relay,
    ...(file.relay?.to !== undefined || secret.relay?.to !== undefined
      ? { to: { ...file.relay?.to, ...secret.relay?.to } }
      : {}),
  };
  return {
    ...file,
    ...(Object.keys(env).length > 0 ? { env } : {}),
    ...(Object.keys(relay).length > 0 ? { relay } : {}),
  };
}

function httpUrl(text: string, flag: string): URL {
  let url: URL;
  try {
    url = new URL(text);
  } catch {
    throw usageError(
      flag,
      `"${text}" is not a URL.`,
      'Give the full URL your service receives messages on, e.g. http://127.0.0.1:8080/events.',
    );
  }
  if (url.protocol !== 'http:' && url.protocol !== 'https:') {
    throw usageError(flag, `"${url.protocol}" is not http: or https:.`, 'Give an http:// or https:// URL.');
  }
  return url;
}

export type SessionTransport = 'agent' | 'broker';

/** The most attempts --reject-after takes: beyond that, leaving it out (never) says it better. */
export const MAX_REJECT_AFTER = 1_000_000;

/** --reject-after <N>: a positive whole number, for the modes in which the sidecar delivers. */
export function parseRejectAfter(text: string, mode: SidecarDeliveryMode): number {
  const fix =
    'Give the number of failed attempts after which a message is rejected, e.g. --reject-after 8, or leave the flag out to retry until delivered (the default).';
  const value = text.trim();
  const n = Number(value);
  if (!/^\d+$/.test(value) || !Number.isSafeInteger(n))
    throw usageError('--reject-after', `"${text}" is not a whole number of attempts.`, fix);
  if (n < 1 || n > MAX_REJECT_AFTER)
    throw usageError('--reject-after', `must be from 1 to ${MAX_REJECT_AFTER} attempts, not ${n}.`, fix);
  if (mode === 'env')
    throw usageError(
      '--reject-after',
      'is for http and relay delivery: with --mode env your process consumes the session shadow itself and rejects what it rejects.',
      'Leave --reject-after out.',
    );
  return n;
}

export function buildOptions(raw: RawOptions): SidecarOptions {
  const settings = mergeSettings(
    raw.settings !== undefined ? loadSettings(raw.settings) : {},
    raw.secretSettings !== undefined ? loadSecretSettings(raw.secretSettings) : {},
  );
  const mode = raw.mode;
  if (mode !== 'http' && mode !== 'env' && mode !== 'relay') {
    throw usageError(
      '--mode',
      `"${mode}" is not a delivery mode.`,
      'Use http (POST each message to --target), env (print env for your own consumer) or relay (republish into a local broker).',
    );
  }
  const transport = raw.transport;
  if (transport !== 'agent' && transport !== 'broker') {
    throw usageError(
      '--transport',
      `"${transport}" is not a transport.`,
      'Use agent (the queue-agent streams your messages through the cluster; the default) or broker (the sidecar reads the brokers itself: needs their address and credentials).',
    );
  }
  if (raw.agentUrl !== undefined && !/^wss?:\/\/[^/]+\/v1\/session$/.test(raw.agentUrl)) {
    throw usageError(
      '--agent-url',
      `"${raw.agentUrl}" is not the queue-agent's session URL.`,
      'e.g. --agent-url ws://127.0.0.1:9090/v1/session (with `kubectl port-forward pod/<queue-agent> 9090`).',
    );
  }
  if (raw.agentUrl !== undefined && (transport !== 'agent' || mode === 'env')) {
    throw usageError(
      '--agent-url',
      `is for the agent transport of http and relay delivery, not ${mode === 'env' ? '--mode env' : '--transport broker'}.`,
      'Leave --agent-url out.',
    );
  }
  if (raw.workload === undefined && raw.split === undefined) {
    throw usageError(
      '--workload',
      'is required (or --split <name> to adopt an existing QueueSplit).',
      'Pass --workload deployment/<name>.',
    );
  }
  if (raw.preflightOnly === true && raw.workload === undefined) {
    throw usageError(
      '--preflight-only',
      'checks what creating a split needs, so it needs --workload (an adopted --split exists already).',
      'Pass --workload deployment/<name> instead of --split.',
    );
  }
  if (raw.workload !== undefined && raw.split !== undefined) {
    throw usageError(
      '--split',
      'cannot be combined with --workload: the split names its workload.',
      'Pass one of the two.',
    );
  }
  const owner = raw.owner?.trim();
  if (owner === '') {
    throw usageError(
      '--owner',
      'is empty.',
      'Leave --owner out: the owner is your Kubernetes user name (only a member of queuesplit:admins may name another).',
    );
  }
  let filter: HeaderFilter | undefined;
  if (raw.filter !== undefined) {
    const parsed = parseFilter(raw.filter, '--filter');
    if (!parsed.ok) {
      throw usageError(
        '--filter',
        parsed.errors.map((e) => formatFieldError({ ...e, path: '' })).join(' '),
        `Write it as ${DEFAULT_FILTER_KEY}=${owner ?? '<you>'}[,key=value].`,
      );
    }
    filter = parsed.value;
  }
  for (const queue of raw.queue ?? []) {
    if (!PATTERNS.queueName.regex.test(queue))
      throw usageError('--queue', `"${queue}" is not a logical queue name.`, PATTERNS.queueName.fix);
  }
  const targetText = raw.target ?? settings.target;
  const target =
    targetText !== undefined
      ? httpUrl(targetText, raw.target !== undefined ? '--target' : '--settings target')
      : undefined;
  if (mode === 'http' && target === undefined) {
    throw usageError(
      '--target',
      'is required with --mode http.',
      'Pass the URL your debugged service receives messages on, e.g. --target http://127.0.0.1:8080/events.',
    );
  }
  const env = new Map([
    ...Object.entries(settings.env ?? {}),
    ...keyValues(raw.env ?? [], '--env', 'KAFKA_BROKERS=127.0.0.1:9092'),
  ]);
  for (const name of env.keys()) {
    if (!PATTERNS.envName.regex.test(name))
      throw usageError(
        '--env',
        `"${name}" is not an env var name.`,
        'Use the name of an env var of the workload container.',
      );
  }
  const addressMap = AddressMap.parse(raw.mapAddress ?? []).withFallback(
    AddressMap.parse(settings.addressMap ?? {}, '--settings addressMap'),
  );
  const relayTo = new Map([
    ...Object.entries(settings.relay?.to ?? {}),
    ...keyValues(raw.relayTo ?? [], '--relay-to', 'orders=local-orders'),
  ]);
  const relayBrokers = relayBrokersOf(raw, settings);
  if (mode === 'relay' && Object.keys(relayBrokers).length === 0) {
    const first = sidecarProvider(PROVIDER_NAMES[0]).relay;
    const rest = PROVIDER_NAMES.slice(1).map((provider) => sidecarProvider(provider).relay);
    throw usageError(
      first.flag,
      `${rest.map((r) => `or ${r.flag} `).join('')}is required with --mode relay.`,
      `Name the local broker to republish into, e.g. ${first.flag} ${first.example}.`,
    );
  }
  if (raw.retryMaxDelay < 250)
    throw usageError('--retry-max-delay', 'must be at least 250 ms.', 'e.g. --retry-max-delay 30000.');
  const rejectAfter = raw.rejectAfter !== undefined ? parseRejectAfter(raw.rejectAfter, mode) : undefined;
  const tlsCaFile = raw.tlsCaFile ?? settings.tlsCaFile;
  return {
    ...(raw.kubeconfig !== undefined ? { kubeconfig: raw.kubeconfig } : {}),
    ...(raw.context !== undefined ? { context: raw.context } : {}),
    ...(raw.namespace !== undefined ? { namespace: raw.namespace } : {}),
    ...(raw.workload !== undefined ? { workload: parseWorkload(raw.workload) } : {}),
    ...(raw.split !== undefined ? { split: raw.split } : {}),
    queues: [...new Set(raw.queue ?? [])],
    ...(filter !== undefined ? { filter } : {}),
    ...(owner !== undefined ? { owner } : {}),
    mode,
    transport,
    ...(raw.agentUrl !== undefined ? { agentUrl: raw.agentUrl } : {}),
    ...(target !== undefined ? { target } : {}),
    httpTimeoutMs: raw.httpTimeout * 1000,
    retry: { initialMs: Math.min(250, raw.retryMaxDelay), maxMs: raw.retryMaxDelay },
    ...(rejectAfter !== undefined ? { rejectAfter } : {}),
    ...(raw.envOut !== undefined ? { envFile: raw.envOut } : {}),
    relay: { brokers: relayBrokers, to: relayTo },
    env,
    addressMap,
    ...(tlsCaFile !== undefined ? { tlsCaFile } : {}),
    leaseSeconds: raw.leaseSeconds,
    readyTimeoutMs: raw.readyTimeout * 1000,
    detachTimeoutMs: raw.detachTimeout * 1000,
    ...(raw.stateFile !== undefined ? { stateFile: raw.stateFile } : {}),
    pollMs: raw.pollInterval,
    stopGraceMs: raw.stopGrace * 1000,
    preflightOnly: raw.preflightOnly === true,
  };
}

/** The settings file's relay keys, for the error that lists the allowed ones. */
const relaySettingsKeys = PROVIDER_NAMES.map((provider) => PROVIDERS[provider].relay.settingsKey).join(', ');

/** Each provider's local broker for relay delivery: its flag, else its settings key (flags win);
 * each value checked by its provider. */
function relayBrokersOf(raw: RawOptions, settings: SettingsFile): Partial<Record<Provider, string>> {
  // The schema admits each provider's key as a string (settingsSchema), which its type cannot say.
  const fromSettings = (settings.relay ?? {}) as Partial<Record<string, string>>;
  const brokers: Partial<Record<Provider, string>> = {};
  for (const provider of PROVIDER_NAMES) {
    const relay = sidecarProvider(provider).relay;
    const text = raw.relayBrokers?.[provider] ?? fromSettings[PROVIDERS[provider].relay.settingsKey];
    if (text === undefined) continue;
    relay.check(text);
    brokers[provider] = text;
  }
  return brokers;
}

/** For the error line when a non-SidecarError escapes option handling. */
export function asUsageError(err: unknown): SidecarError {
  return err instanceof SidecarError
    ? err
    : usageError('(flags)', errorText(err), 'Run with --help for usage.');
}
