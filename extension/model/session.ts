// What one running sidecar has told the extension, folded from its JSON lines
// (sidecar/protocol.ts). Pure: the process manager feeds messages in, views read the result.
import type {
  ErrorMessage,
  ReadyMessage,
  SidecarDeliveryMode,
  SidecarMessage,
  WarningMessage,
} from '../../sidecar/protocol';

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

export function initialSession(mode: SidecarDeliveryMode): SessionView {
  return {
    mode,
    stage: 'starting',
    message: 'Starting the sidecar',
    delivered: {},
    failed: {},
    warnings: [],
  };
}

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
      return {
        ...view,
        stage: stopping && stage === 'active' ? view.stage : stage,
        message: message.message,
        ...(message.phase !== undefined ? { phase: message.phase } : {}),
        ...(message.lag !== undefined ? { lag: message.lag } : {}),
      };
    }
    case 'warning':
      return { ...view, warnings: [...view.warnings, message].slice(-10) };
    case 'error':
      return { ...view, stage: 'failed', error: message, message: message.message };
    case 'ready':
      return {
        ...view,
        stage: view.stage === 'stopping' || view.stage === 'draining' ? view.stage : 'active',
        ready: message,
        phase: 'Active',
        message: `Active: ${message.queues.map((q) => `${q.name} → ${q.deliversTo}`).join(', ')}`,
      };
    case 'delivered':
      return {
        ...view,
        delivered: { ...view.delivered, [message.queue]: message.counts.delivered },
        failed: { ...view.failed, [message.queue]: message.counts.failed },
      };
    case 'failed':
      return {
        ...view,
        delivered: { ...view.delivered, [message.queue]: message.counts.delivered },
        failed: { ...view.failed, [message.queue]: message.counts.failed },
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
        detached: {
          drained: message.drained,
          message: message.message,
          ...(message.handback !== undefined ? { handback: message.handback } : {}),
        },
        message: message.message,
      };
  }
}

/** The sidecar process ended: unless it already said why, that is a failure. */
export function sessionExited(view: SessionView, code: number | null, signal: string | null): SessionView {
  if (view.stage === 'stopped' || view.stage === 'failed') return view;
  if (code === 0 && (view.stage === 'stopping' || view.stage === 'draining'))
    return { ...view, stage: 'stopped' };
  return {
    ...view,
    stage: 'failed',
    message: `The sidecar exited unexpectedly (${signal !== null ? `signal ${signal}` : `code ${code}`}).`,
  };
}

export function totalDelivered(view: SessionView): number {
  return Object.values(view.delivered).reduce((a, b) => a + b, 0);
}

export function isLive(view: SessionView): boolean {
  return view.stage !== 'stopped' && view.stage !== 'failed';
}
