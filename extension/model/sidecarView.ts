// What one running sidecar has told the extension, folded from its JSON lines
// (core/sidecarProtocol.ts). Pure: the process manager feeds messages in, views read the result.
import * as l10n from '@vscode/l10n';
import type {
  ErrorMessage,
  FailedMessage,
  ReadyMessage,
  SidecarDeliveryMode,
  SidecarMessage,
  WarningMessage,
} from '../../core/sidecarProtocol';
import { sidecarError } from './sidecarErrors';
import { detachedWords, progressWords } from './sidecarWords';

export type SessionStage =
  'starting' | 'resolving' | 'waiting' | 'active' | 'stopping' | 'draining' | 'stopped' | 'failed';

export interface SessionView {
  mode: SidecarDeliveryMode;
  stage: SessionStage;
  /** The latest progress text (the controller's blocking reason while waiting or draining). */
  message: string;
  /** The split's phase as the sidecar last saw it. */
  phase?: string;
  pid?: number;
  /** Messages the sidecar handed to the debugged process (per queue and total). */
  delivered: Record<string, number>;
  failed: Record<string, number>;
  /** Messages given up on (reject requests, --reject-after), per queue. */
  rejected: Record<string, number>;
  /** Messages whose delivery keeps failing, holding up their queue (Kafka: their partition),
   * oldest first: from each one's latest `failed` line until a `delivered` or `rejected` line
   * names it. */
  blocked: BlockedDelivery[];
  /** Messages the controller routed to the split (its status), and the unconsumed lag. */
  routed?: number;
  lag?: number;
  ready?: ReadyMessage;
  error?: ErrorMessage;
  /** Recent warnings, newest last, at most 10. */
  warnings: WarningMessage[];
  /** Set when the sidecar reported the detach. */
  /** `handback`: the workload's status after the route drained (sidecar/README.md, "Detaching"). */
  detached?: {
    drained: boolean;
    message: string;
    handback?: { phase: string; message: string; nextAction?: string };
  };
}

/** A message the sidecar keeps failing to deliver, as its latest `failed` line says. */
export interface BlockedDelivery {
  queue: string;
  messageId: string;
  /** e.g. `HTTP 500` (never a body or header value). */
  reason: string;
  attempt: number;
  /** ISO time of its first failed attempt. */
  since: string;
  /** ISO time of the latest failed attempt, and the wait after it. */
  failedAt: string;
  retryInMs: number;
  /** --reject-after: the attempt whose failure rejects it. */
  rejectAfter?: number;
}

export function initialSession(mode: SidecarDeliveryMode): SessionView {
  return {
    mode,
    stage: 'starting',
    message: l10n.t('Starting the sidecar'),
    delivered: {},
    failed: {},
    rejected: {},
    blocked: [],
    warnings: [],
  };
}

function blockedBy(message: FailedMessage): BlockedDelivery {
  return {
    queue: message.queue,
    messageId: message.messageId,
    reason: message.reason,
    attempt: message.attempt,
    since: message.blockedSince,
    failedAt: message.time,
    retryInMs: message.retryInMs,
    ...(message.rejectAfter !== undefined ? { rejectAfter: message.rejectAfter } : {}),
  };
}

const unblocked = (view: SessionView, queue: string, messageId: string): BlockedDelivery[] =>
  view.blocked.filter((b) => b.queue !== queue || b.messageId !== messageId);

const STAGE_OF_PROGRESS: Record<string, SessionStage> = {
  resolving: 'resolving',
  creating: 'waiting',
  adopting: 'waiting',
  waiting: 'waiting',
  active: 'active',
  consuming: 'active',
  recovered: 'active',
  stopping: 'stopping',
  draining: 'draining',
};

export function reduceSession(view: SessionView, message: SidecarMessage): SessionView {
  switch (message.type) {
    case 'hello':
      return { ...view, pid: message.pid, mode: message.mode };
    case 'progress': {
      const stage = STAGE_OF_PROGRESS[message.stage] ?? view.stage;
      // Once stopping, a late "consuming" line must not make the session look active again.
      const stopping = view.stage === 'stopping' || view.stage === 'draining';
      const next = stopping && stage === 'active' ? view.stage : stage;
      return {
        ...view,
        stage: next,
        // Stopping ends every retry: nothing is blocked any more, it stays in the shadow.
        ...(next === 'stopping' || next === 'draining' ? { blocked: [] } : {}),
        message: progressWords(message),
        ...(message.phase !== undefined ? { phase: message.phase } : {}),
        ...(message.lag !== undefined ? { lag: message.lag } : {}),
      };
    }
    case 'warning':
      return { ...view, warnings: [...view.warnings, message].slice(-10) };
    case 'error': {
      // Kept in the extension's words (settings and commands, not sidecar flags): model/sidecarErrors.ts.
      const shown = sidecarError(message);
      return {
        ...view,
        stage: 'failed',
        error: { ...message, message: shown.message, suggestedAction: shown.suggestedAction },
        message: shown.message,
        blocked: [],
      };
    }
    case 'ready':
      return {
        ...view,
        stage: view.stage === 'stopping' || view.stage === 'draining' ? view.stage : 'active',
        ready: message,
        phase: 'Active',
        message: l10n.t('Active: {0}', message.queues.map((q) => `${q.name} → ${q.deliversTo}`).join(', ')),
      };
    case 'delivered':
    case 'rejected':
      return {
        ...view,
        ...counted(view, message.queue, message.counts),
        blocked: unblocked(view, message.queue, message.messageId),
      };
    case 'failed':
      return {
        ...view,
        ...counted(view, message.queue, message.counts),
        blocked: [...unblocked(view, message.queue, message.messageId), blockedBy(message)].sort((a, b) =>
          a.since.localeCompare(b.since),
        ),
      };
    case 'status':
      return {
        ...view,
        ...(message.phase !== undefined ? { phase: message.phase } : {}),
        ...(message.delivered !== undefined ? { routed: message.delivered } : {}),
        ...(message.lag !== undefined ? { lag: message.lag } : {}),
      };
    case 'publish-result':
      return view; // answered to its requester (SplitSession.publish)
    case 'detached':
      return {
        ...view,
        stage: 'stopped',
        blocked: [],
        detached: {
          drained: message.drained,
          message: detachedWords(message),
          ...(message.handback !== undefined ? { handback: message.handback } : {}),
        },
        message: detachedWords(message),
      };
  }
}

/** The sidecar process ended: unless it already said why, that is a failure. */
export function sessionExited(view: SessionView, code: number | null, signal: string | null): SessionView {
  if (view.stage === 'stopped' || view.stage === 'failed') return view;
  if (code === 0 && (view.stage === 'stopping' || view.stage === 'draining'))
    return { ...view, stage: 'stopped', blocked: [] };
  return {
    ...view,
    stage: 'failed',
    blocked: [],
    message:
      signal !== null
        ? l10n.t('The sidecar exited unexpectedly (signal {0}).', signal)
        : l10n.t('The sidecar exited unexpectedly (code {0}).', String(code)),
  };
}

function counted(
  view: SessionView,
  queue: string,
  counts: { delivered: number; failed: number; rejected?: number },
): Pick<SessionView, 'delivered' | 'failed' | 'rejected'> {
  return {
    delivered: { ...view.delivered, [queue]: counts.delivered },
    failed: { ...view.failed, [queue]: counts.failed },
    rejected: { ...view.rejected, [queue]: counts.rejected ?? view.rejected[queue] ?? 0 },
  };
}

export function totalDelivered(view: SessionView): number {
  return Object.values(view.delivered).reduce((a, b) => a + b, 0);
}

export function isLive(view: SessionView): boolean {
  return view.stage !== 'stopped' && view.stage !== 'failed';
}
