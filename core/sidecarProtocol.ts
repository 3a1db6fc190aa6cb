// The sidecar's stdout protocol: one JSON object per line, each with a `type` and a `time`.
// The VS Code extension imports these types to parse what the sidecar says, so this module imports
// types only (it must bundle into the extension without pulling broker or kube clients).
//
// Rules every message follows:
// - No header values, message bodies or credentials ever appear (URLs are shown with the
//   password replaced by `***`). Env values derived from Secrets are never printed: `ready`
//   lists their names in `secretEnv` and writes them only to the 0600 `envFile`.
// - A parent should ignore message types and fields it does not know (the protocol grows by
//   adding them); an incompatible change bumps SIDECAR_PROTOCOL_VERSION, sent in `hello`.
// - Every failure that ends the process is one `error` line (with `suggestedAction`) followed by
//   a non-zero exit; see SIDECAR_EXIT_CODES.

import type { Provider } from './providers';

export const SIDECAR_PROTOCOL_VERSION = 1;

/** The env var through which a parent that created the split (the extension) hands a sidecar
 * started with --split the route's session secret (never on the command line). */
export const SESSION_SECRET_ENV = 'QUEUE_SPLIT_SESSION_SECRET';

/** The env var through which a parent (the extension) hands the sidecar the settings that may
 * hold a credential — `env` overrides and relay brokers, as JSON shaped like the --settings
 * file's `env` and `relay` — so that they are on no command line and in no file. The --settings
 * file's values are overridden by it, and flags override both. */
export const SECRET_SETTINGS_ENV = 'QUEUE_SPLIT_SECRET_SETTINGS';

export type SidecarDeliveryMode = 'http' | 'env' | 'relay';

/** Exit codes: 0 after a clean stop (detached), 1 after an `error`, 2 for bad flags, 130 when a second signal cut the stop short. */
export const SIDECAR_EXIT_CODES = { ok: 0, error: 1, usage: 2, interrupted: 130 } as const;

/** Which QueueSplit the sidecar serves. */
export interface SplitRef {
  name: string;
  namespace: string;
  routeId: string;
  uid?: string;
}

/** Messages delivered (acked/committed after success), failed delivery attempts, and messages
 * rejected (by a reject request or --reject-after). */
export interface DeliveryCounts {
  delivered: number;
  failed: number;
  /** Always sent by this version; optional so a reader takes lines of sidecars before rejects. */
  rejected?: number;
}

/** Sent once, first. */
export interface HelloMessage {
  type: 'hello';
  time: string;
  protocol: number;
  version: string;
  pid: number;
  mode: SidecarDeliveryMode;
}

export type ProgressStage =
  /** Reading the workload declaration and resolving broker connections. */
  | 'resolving'
  /** Creating a new QueueSplit. */
  | 'creating'
  /** Taking over an existing QueueSplit (same route id as before a restart). */
  | 'adopting'
  /** Waiting for the controller to make the split Active; `phase` says where it is. */
  | 'waiting'
  /** The split is Active. */
  | 'active'
  /** The session shadow of `queue` is being consumed. */
  | 'consuming'
  /** The delivery target (http or relay) accepts messages again after an outage. */
  | 'recovered'
  /** A signal arrived: consumers stop, then the split is deleted. */
  | 'stopping'
  /** Delete requested; waiting for the controller to drain the route (`phase`, `lag`). */
  | 'draining';

/**
 * The controller's own words about a split: written into the cluster in English for everyone
 * (kubectl users included), so a parent shows them as they are, inside its own words.
 */
export interface ControllerWords {
  /** status.phase. */
  phase: string;
  /** The phase with its blocking condition's message and the queues' own phases: `Preparing: creating shadows (orders Pending)`. */
  message: string;
  /** status.nextAction. */
  nextAction?: string;
}

export interface ProgressMessage {
  type: 'progress';
  time: string;
  stage: ProgressStage;
  message: string;
  /** `waiting`: where the controller is, in its words (the message says the same for a terminal). */
  controller?: ControllerWords;
  split?: SplitRef;
  /** The QueueSplit's status.phase when the stage is about the split. */
  phase?: string;
  queue?: string;
  /** Unconsumed session messages, when the controller reports them (draining). */
  lag?: number;
}

export type WarningCode =
  /** The http target failed (connection error or non-2xx); retrying, nothing dropped. Once per outage. */
  | 'target-down'
  /** The local relay broker refused or is unreachable; retrying, nothing dropped. Once per outage. */
  | 'relay-down'
  /** A lease renewal failed; the sidecar keeps trying. */
  | 'lease-renewal-failed'
  /** The lease ran out before a renewal got through: the controller may drain the route. */
  | 'lease-expired'
  /** The split left Active (Degraded, Draining, ...) while the sidecar runs. */
  | 'split-not-active'
  /** Nothing has reported on the split for a while: is the controller installed? */
  | 'controller-silent'
  /** Lost the broker connection; reconnecting. */
  | 'broker-reconnecting'
  /** A message in the session shadow does not match the split's filter (delivered anyway). */
  | 'filter-mismatch'
  /** Two queues need different values for one env var (env mode); the first one wins. */
  | 'env-conflict'
  /** env mode: a queue the workload names in a mounted config file, which no env var sets; the
   * message names the keys and values the debugged process must read instead. */
  | 'file-settings'
  /** An --env override names a variable no selected queue uses. */
  | 'unused-override'
  /** The route did not finish draining within --detach-timeout; the controller finishes it. */
  | 'detach-timeout'
  /** Kafka brokers advertise addresses only the sidecar's address map makes reachable. */
  | 'advertised-address'
  /** The route drained but the workload's handback is not finished (waiting or Degraded): reason and safe action. */
  | 'handback-pending'
  /** The queue-agent restarted while the split was active or draining (duplicates possible). */
  | 'agent-restarted'
  /** The session stream to the queue-agent dropped (port-forward, agent restart); resuming. */
  | 'stream-interrupted'
  /** A message this sidecar cannot deliver: not acked, it stays in the session shadow (for the
   * app at the split's end); names queue and message id; the rest of the stream goes on. */
  | 'message-parked'
  /** A pod carries the queue-agent's labels but is not it (sidecar/agentPod.ts): never connected to. */
  | 'agent-lookalike'
  /** A retry or reject request on stdin that changed nothing: the message it names is not the
   * blocked one (delivered meanwhile, a typo), or this session cannot reject (the message says
   * which and why); also --reject-after where it cannot apply (a queue-agent before rejects). */
  | 'request-ignored';

export interface WarningMessage {
  type: 'warning';
  time: string;
  code: WarningCode;
  message: string;
  suggestedAction?: string;
  queue?: string;
}

export type ErrorCode =
  /** A flag or settings-file value is wrong; `flag` names it. */
  | 'usage'
  | 'kube-config'
  | 'kube-unreachable'
  | 'kube-unauthorized'
  /** RBAC refused a read or write; the message names verb, resource and object. */
  | 'forbidden'
  /** The QueueSplit CRD is not installed in the cluster. */
  | 'crd-missing'
  | 'workload-not-found'
  /** The workload's queue declaration is invalid or lacks the requested queue. */
  | 'declaration-invalid'
  /** An env var the broker connection needs has no value (missing key, Secret, ConfigMap). */
  | 'config-missing'
  /** The state file or an existing QueueSplit does not fit what was asked for. */
  | 'split-conflict'
  | 'split-rejected'
  | 'split-failed'
  | 'split-timeout'
  /** The QueueSplit was deleted by someone else while the sidecar ran. */
  | 'split-deleted'
  /** Preflight: the http target accepts no connection (checked before the QueueSplit is created). */
  | 'target-unreachable'
  | 'broker-unreachable'
  | 'broker-auth'
  /** The session shadow named by the controller does not exist on the broker. */
  | 'shadow-missing'
  /** The relay destination topic/queue does not exist on the local broker. */
  | 'relay-destination-missing'
  /** The queue-agent refused the session stream (the route's secret does not match, another
   * sidecar took it over); or no queue-agent pod to stream from could be reached. */
  | 'session-refused'
  | 'agent-unreachable'
  /** What was reached as the queue-agent is not it (a pod with its labels but not its
   * ReplicaSet's or ServiceAccount's, or one relaying another pod's challenge): nothing was sent. */
  | 'agent-impostor'
  | 'internal';

export interface ErrorMessage {
  type: 'error';
  time: string;
  code: ErrorCode;
  message: string;
  suggestedAction: string;
  /** For `usage` and failed preflight checks: the flag (e.g. `--mode`) or settings key at fault. */
  flag?: string;
  /** `split-rejected`, `split-failed`: why, in the controller's words (the message says it for a terminal). */
  controller?: ControllerWords;
}

export interface ReadyQueue {
  name: string;
  provider: Provider;
  /** `agent`: the queue-agent reads the session shadow and streams it to the sidecar (http and
   * relay by default). Absent: the sidecar reads the broker itself (`--transport broker`), or
   * the debugged process does (env mode). */
  via?: 'agent';
  /** Session shadow topic/queue. */
  shadow: string;
  /** Kafka session consumer group. */
  group?: string;
  /** Where messages go: the http target, the relay destination, or `env`. */
  deliversTo: string;
}

/** Sent once the split is Active and delivery runs (env mode: once the env is known). */
export interface ReadyMessage {
  type: 'ready';
  time: string;
  mode: SidecarDeliveryMode;
  split: SplitRef;
  queues: ReadyQueue[];
  /**
   * Env for the debugged process without secret values: source → session shadow, group →
   * session group, plus non-secret connection env (address map applied). Empty unless mode=env.
   */
  env: Record<string, string>;
  /** Names of env vars whose values are secret: present only in envFile. */
  secretEnv: string[];
  /** env mode: dotenv file (mode 0600) with the complete env, secrets included. */
  envFile?: string;
}

export interface DeliveredMessage {
  type: 'delivered';
  time: string;
  queue: string;
  messageId: string;
  /** Attempts this message needed (1 = first try). */
  attempts: number;
  /** Counts for this queue since the sidecar started. */
  counts: DeliveryCounts;
}

/**
 * One failed attempt; the message is retried after `retryInMs` (never dropped). Until it is
 * delivered or rejected, the messages behind it on its queue (Kafka: its partition) wait: the
 * queue is blocked on it since `blockedSince`, and a parent can say "blocked on message
 * <messageId>: <reason>, attempt <attempt>" from this line alone, until a `delivered` or
 * `rejected` line names the same queue and messageId. A `retry` request ends the wait now; a
 * `reject` request gives up on it (SidecarRequest).
 */
export interface FailedMessage {
  type: 'failed';
  time: string;
  queue: string;
  messageId: string;
  attempt: number;
  /** e.g. `HTTP 500`, `connection refused`; never a body or header value. */
  reason: string;
  retryInMs: number;
  /** When this message's first attempt failed (ISO time). */
  blockedSince: string;
  /** --reject-after: the attempt whose failure rejects it; absent: retried for ever. */
  rejectAfter?: number;
  counts: DeliveryCounts;
}

/**
 * A message given up on, settled the way the app's own reject would settle it: RabbitMQ rejects
 * it without requeue (the broker dead-letters it by the queue's dead-letter settings, or discards
 * it without a dead-letter exchange); Kafka skips it (its offset is committed past). Sent once the
 * broker has it, like `delivered`; the queue flows again.
 */
export interface RejectedMessage {
  type: 'rejected';
  time: string;
  queue: string;
  messageId: string;
  /** Delivery attempts made (0: rejected before any attempt). */
  attempts: number;
  /** `request`: a reject request on stdin; `reject-after`: the --reject-after limit. */
  by: 'request' | 'reject-after';
  /** The last attempt's failure, e.g. `HTTP 500`; never a body or header value. */
  reason?: string;
  /** For people: what was done with it. */
  message: string;
  counts: DeliveryCounts;
}

/** The controller's view, sent when it changes: phase, messages routed to the split, lag. */
export interface StatusMessage {
  type: 'status';
  time: string;
  phase?: string;
  delivered?: number;
  lag?: number;
  queues: { name: string; phase?: string; delivered?: number; lag?: number }[];
  /** Session delivery: what went wrong on the stream so far; absent while all are 0. */
  stream?: StreamCounts;
}

/** Counted by the sidecar's session stream (sidecar/agentStream.ts). */
export interface StreamCounts {
  /** Messages this sidecar cannot deliver, left in the shadow (message-parked warnings). */
  parked: number;
  /** Frames from the queue-agent it could not read. */
  unreadableFrames: number;
  /** Times another client took the route's stream over. */
  replaced: number;
}

/** The split is gone (drained) or the drain outlived --detach-timeout (`drained: false`). */
export interface DetachedMessage {
  type: 'detached';
  time: string;
  split: SplitRef;
  drained: boolean;
  waitedMs: number;
  message: string;
  /** The workload-level status after the route drained (core/workloadStatus.ts), when the controller publishes one. */
  handback?: { phase: string; message: string; nextAction?: string };
}

/** The answer to a `publish` request: the queue-agent published it into the source, or why not. */
export interface PublishResultMessage {
  type: 'publish-result';
  time: string;
  /** The request's id. */
  id: string;
  queue: string;
  published: boolean;
  /** The published message's id (Kafka `message-id` header, AMQP message-id). */
  messageId?: string;
  /** Why it was refused (never a header value or the body). */
  reason?: string;
}

export type SidecarMessage =
  | PublishResultMessage
  | HelloMessage
  | ProgressMessage
  | WarningMessage
  | ErrorMessage
  | ReadyMessage
  | DeliveredMessage
  | FailedMessage
  | RejectedMessage
  | StatusMessage
  | DetachedMessage;

export type SidecarMessageType = SidecarMessage['type'];

const TYPES: ReadonlySet<string> = new Set<SidecarMessageType>([
  'publish-result',
  'hello',
  'progress',
  'warning',
  'error',
  'ready',
  'delivered',
  'failed',
  'rejected',
  'status',
  'detached',
]);

/**
 * What a parent may write to the sidecar's stdin, one JSON object per line. `stop` does what the
 * first SIGINT/SIGTERM does (stop delivery, delete the split, report the drain, exit 0): the
 * extension uses it because on Windows a signal to a child is a hard kill that skips the drain
 * (docs/launch-configurations.md). Unknown lines are ignored, as unknown stdout types are.
 */
export interface StopRequest {
  type: 'stop';
}

/**
 * Send Test Message through the cluster (http and relay via the queue-agent): the agent
 * publishes `body` into the queue's real source with `headers`, if they match the split's
 * filter. Answered by one `publish-result` line with the same `id`.
 */
export interface PublishRequest {
  type: 'publish';
  id: string;
  queue: string;
  headers: Record<string, string>;
  /** UTF-8 text. */
  body: string;
  contentType?: string;
  /** Kafka record key. */
  key?: string;
}

/**
 * The message a queue is blocked on (the `messageId` of its latest `failed` line): `retry` ends
 * the backoff wait and attempts it now; `reject` gives up on it — no more attempts, and it is
 * settled as the app's own reject would (RejectedMessage). A request naming any other message
 * changes nothing and is answered by a `request-ignored` warning.
 */
export interface BlockedMessageRequest {
  type: 'retry' | 'reject';
  queue: string;
  messageId: string;
}

export type SidecarRequest = StopRequest | PublishRequest | BlockedMessageRequest;

/** The stdin line of a stop request (with its newline). */
export const STOP_REQUEST_LINE = `${JSON.stringify({ type: 'stop' } satisfies StopRequest)}\n`;

/** One stdin line → a request, or undefined for anything else (blank, not JSON, unknown type). */
export function parseSidecarRequest(line: string): SidecarRequest | undefined {
  const text = line.trim();
  if (!text.startsWith('{')) return undefined;
  try {
    const value = JSON.parse(text) as unknown;
    if (typeof value !== 'object' || value === null) return undefined;
    const v = value as Record<string, unknown>;
    if (v.type === 'stop') return { type: 'stop' };
    const str = (x: unknown): x is string => typeof x === 'string';
    if ((v.type === 'retry' || v.type === 'reject') && str(v.queue) && str(v.messageId))
      return { type: v.type, queue: v.queue, messageId: v.messageId };
    if (
      v.type === 'publish' &&
      str(v.id) &&
      str(v.queue) &&
      str(v.body) &&
      typeof v.headers === 'object' &&
      v.headers !== null &&
      Object.values(v.headers).every(str) &&
      (v.contentType === undefined || str(v.contentType)) &&
      (v.key === undefined || str(v.key))
    )
      return {
        type: 'publish',
        id: v.id,
        queue: v.queue,
        headers: v.headers as Record<string, string>,
        body: v.body,
        ...(str(v.contentType) ? { contentType: v.contentType } : {}),
        ...(str(v.key) ? { key: v.key } : {}),
      };
  } catch {
    return undefined;
  }
  return undefined;
}

/**
 * One stdout line → a message, or undefined for anything that is not a protocol line (blank,
 * not JSON, unknown type). Only the envelope is checked; fields are trusted as the sidecar's.
 */
export function parseSidecarLine(line: string): SidecarMessage | undefined {
  const text = line.trim();
  if (!text.startsWith('{')) return undefined;
  let value: unknown;
  try {
    value = JSON.parse(text);
  } catch {
    return undefined;
  }
  if (typeof value !== 'object' || value === null) return undefined;
  const { type, time } = value as { type?: unknown; time?: unknown };
  if (typeof type !== 'string' || !TYPES.has(type) || typeof time !== 'string') return undefined;
  return value as SidecarMessage;
}
