// The status bar item for my splits: hidden when I have none; otherwise the phase and the
// number of messages delivered to my process, with one tooltip line per split. A split whose
// delivery is blocked on a failing message says so first (briefly: the tooltip has the rest).
import * as l10n from '@vscode/l10n';
import { blockedShort, blockedText } from './blocked';
import { lingerText } from './linger';
import type { BlockedDelivery } from './sidecarView';
import { phaseLook } from './phases';

export interface MySplitSummary {
  name: string;
  workload: string;
  queues: string[];
  phase: string;
  /** Messages the sidecar handed to my process (undefined without a sidecar, e.g. env mode). */
  delivered?: number;
  /** Messages the controller routed to my split. */
  routed?: number;
  /** Lingering after its last debug session: ms until it stops. */
  lingerLeftMs?: number;
  /** The message its delivery is blocked on (the oldest, if several). */
  blocked?: BlockedDelivery;
}

export interface StatusBarLook {
  visible: boolean;
  text: string;
  tooltip: string;
  /** A theme colour for the background when something needs attention. */
  background?: 'statusBarItem.warningBackground' | 'statusBarItem.errorBackground';
}

function count(s: MySplitSummary): number {
  return s.delivered ?? s.routed ?? 0;
}

export function statusBarLook(splits: readonly MySplitSummary[]): StatusBarLook {
  if (splits.length === 0) return { visible: false, text: '', tooltip: '' };
  const worst = [...splits].sort((a, b) => phaseLook(a.phase).rank - phaseLook(b.phase).rank)[0]!;
  const look = phaseLook(worst.phase);
  const icon = `$(${look.icon})`;
  const total = splits.reduce((sum, s) => sum + count(s), 0);
  const blocked = splits.filter((s) => s.blocked !== undefined);
  const single = splits.length === 1 ? worst.blocked : undefined;
  const text =
    splits.length === 1
      ? single !== undefined
        ? `$(warning) ${worst.workload}: ${blockedShort(single)} · ${total}`
        : `${icon} ${worst.workload}: ${worst.phase}${worst.lingerLeftMs !== undefined ? ` (${lingerText(worst.lingerLeftMs)})` : ''} · ${total}`
      : `${blocked.length > 0 ? '$(warning)' : icon} ${
          blocked.length > 0
            ? l10n.t('{0} splits: {1} blocked, {2}', splits.length, blocked.length, summarizePhases(splits))
            : l10n.t('{0} splits: {1}', splits.length, summarizePhases(splits))
        } · ${total}`;
  const tooltip = [
    l10n.t('Queue Split — your splits (click for details)'),
    ...splits.map((s) => {
      const phase = `${s.phase}${s.lingerLeftMs !== undefined ? ` (${lingerText(s.lingerLeftMs)})` : ''}`;
      const delivered =
        s.delivered === undefined && s.routed !== undefined
          ? l10n.t('{0} delivered (routed by the controller)', count(s))
          : l10n.t('{0} delivered', count(s));
      const blockedOn =
        s.blocked !== undefined
          ? `; ${l10n.t('{0} (queue {1})', blockedText(s.blocked), s.blocked.queue)}`
          : '';
      return `${s.workload} [${s.queues.join(', ')}]: ${phase}, ${delivered}${blockedOn}`;
    }),
  ].join('\n');
  const background =
    look.rank <= 1
      ? 'statusBarItem.errorBackground'
      : look.rank === 2 || blocked.length > 0
        ? 'statusBarItem.warningBackground'
        : undefined;
  return { visible: true, text, tooltip, ...(background !== undefined ? { background } : {}) };
}

function summarizePhases(splits: readonly MySplitSummary[]): string {
  const counts = new Map<string, number>();
  for (const s of splits) counts.set(s.phase, (counts.get(s.phase) ?? 0) + 1);
  return [...counts]
    .sort(([a], [b]) => phaseLook(a).rank - phaseLook(b).rank)
    .map(([phase, n]) => `${n} ${phase}`)
    .join(', ');
}
