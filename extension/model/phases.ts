// How a split's phase looks (icon, colour, wording) and how the controller's explanation of a
// stuck phase reads: the first condition that blocks, then its next action.
import * as l10n from '@vscode/l10n';
import type { QueueSplitPhase } from '../../core/crd/queueSplitSchema';
import type { QueueSplit } from './types';

export interface PhaseLook {
  /** A codicon id (`pass-filled`, `loading~spin`, ...). */
  icon: string;
  /** A theme colour id, or undefined for the default foreground. */
  color?: string;
  /** Sort order: what needs attention first. */
  rank: number;
  /** True while the controller is still moving the split somewhere. */
  transient: boolean;
}

const LOOKS: Record<QueueSplitPhase, PhaseLook> = {
  Rejected: { icon: 'error', color: 'errorForeground', rank: 0, transient: false },
  Failed: { icon: 'error', color: 'errorForeground', rank: 1, transient: false },
  Degraded: { icon: 'warning', color: 'list.warningForeground', rank: 2, transient: false },
  Pending: { icon: 'loading~spin', rank: 3, transient: true },
  Preparing: { icon: 'loading~spin', rank: 4, transient: true },
  Draining: { icon: 'sync~spin', color: 'charts.yellow', rank: 5, transient: true },
  Active: { icon: 'pass-filled', color: 'testing.iconPassed', rank: 6, transient: false },
  Stopped: { icon: 'circle-slash', color: 'disabledForeground', rank: 7, transient: false },
};

const UNKNOWN: PhaseLook = { icon: 'question', rank: 8, transient: true };

export function phaseLook(phase: string | undefined): PhaseLook {
  return (phase !== undefined ? LOOKS[phase as QueueSplitPhase] : undefined) ?? UNKNOWN;
}

/** The split's phase as the user should see it: a deleted split is draining, whatever it said. */
export function splitPhase(split: QueueSplit): string {
  if (split.metadata.deletionTimestamp !== undefined) return 'Draining';
  return split.status?.phase ?? 'Pending';
}

/** Phase of one queue of a split (a split can be Active on one queue and Degraded on another). */
export function queuePhase(split: QueueSplit, queue: string): string {
  if (split.metadata.deletionTimestamp !== undefined) return 'Draining';
  return split.status?.queues?.find((q) => q.name === queue)?.phase ?? splitPhase(split);
}

export interface BlockingReason {
  phase: string;
  /** The controller's words for what the split waits on or why it failed; undefined when nothing blocks. */
  reason?: string;
  nextAction?: string;
}

/** What holds the split up: the first False condition with a message, then any message. */
export function blockingReason(split: QueueSplit): BlockingReason {
  const phase = splitPhase(split);
  const conditions = split.status?.conditions ?? [];
  const blocking =
    conditions.find((c) => c.status === 'False' && c.message !== '') ??
    (phase === 'Active' ? undefined : conditions.find((c) => c.message !== ''));
  return {
    phase,
    ...(blocking !== undefined ? { reason: blocking.message } : {}),
    ...(split.status?.nextAction !== undefined && split.status.nextAction !== ''
      ? { nextAction: split.status.nextAction }
      : {}),
  };
}

/** One line for a progress notification: "Preparing: creating shadows (next: ...)". */
export function progressLine(split: QueueSplit): string {
  const { phase, reason, nextAction } = blockingReason(split);
  const lag = split.status?.lag;
  let line = reason !== undefined ? `${phase}: ${reason}` : phase;
  if (phase === 'Draining' && lag !== undefined) line += ` ${l10n.t('({0} left)', lag)}`;
  if (nextAction !== undefined && phase !== 'Active') line += ` — ${l10n.t('next: {0}', nextAction)}`;
  return line;
}

/** Counts as "delivered N · lag M · app lag K" for descriptions; empty when the controller
 * reported none. `sourceBacklog`: what the split adds to the app's lag (reported from 1,000 on). */
export function countsText(
  delivered: number | undefined,
  lag: number | undefined,
  sourceBacklog?: number,
): string {
  const parts: string[] = [];
  if (delivered !== undefined) parts.push(l10n.t('{0} delivered', delivered));
  if (lag !== undefined && lag > 0) parts.push(l10n.t('lag {0}', lag));
  if (sourceBacklog !== undefined) parts.push(l10n.t('app lag {0}', sourceBacklog));
  return parts.join(' · ');
}
