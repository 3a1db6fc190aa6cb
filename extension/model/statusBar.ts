// The status bar item for my splits: hidden when I have none; otherwise the phase and the
// number of messages delivered to my process, with one tooltip line per split.
import { lingerText } from './linger';
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
  const text =
    splits.length === 1
      ? `${icon} ${worst.workload}: ${worst.phase}${worst.lingerLeftMs !== undefined ? ` (${lingerText(worst.lingerLeftMs)})` : ''} · ${total}`
      : `${icon} ${splits.length} splits: ${summarizePhases(splits)} · ${total}`;
  const tooltip = [
    'Queue Split — your splits (click for details)',
    ...splits.map(
      (s) =>
        `${s.workload} [${s.queues.join(', ')}]: ${s.phase}${s.lingerLeftMs !== undefined ? ` (${lingerText(s.lingerLeftMs)})` : ''}, ${count(s)} delivered${s.delivered === undefined && s.routed !== undefined ? ' (routed by the controller)' : ''}`,
    ),
  ].join('\n');
  const background =
    look.rank <= 1
      ? 'statusBarItem.errorBackground'
      : look.rank === 2
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
