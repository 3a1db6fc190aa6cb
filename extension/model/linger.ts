// Linger (README, "VS Code extension"): after the last debug session that holds a split ends, the
// split stays `queueSplit.linger` seconds, so a debug restart or the next F5 does not roll the
// workload's pods twice. Pure: reading the setting's raw value and saying how long is left.
import * as l10n from '@vscode/l10n';

export const DEFAULT_LINGER_SECONDS = 180;
/** One day: a longer linger is a forgotten split; `persist` is the setting for "keep it". */
export const MAX_LINGER_SECONDS = 86_400;

export interface LingerSetting {
  seconds: number;
  /** Set when the configured value was unusable (the default is used instead). */
  error?: string;
}

/** `queueSplit.linger` as configured (anything a settings.json can hold) → seconds to linger. */
export function parseLinger(raw: unknown): LingerSetting {
  if (raw === undefined || raw === null) return { seconds: DEFAULT_LINGER_SECONDS };
  if (typeof raw === 'number' && Number.isInteger(raw) && raw >= 0 && raw <= MAX_LINGER_SECONDS)
    return { seconds: raw };
  const shown =
    typeof raw === 'string' ? JSON.stringify(raw) : typeof raw === 'number' ? String(raw) : typeof raw;
  return {
    seconds: DEFAULT_LINGER_SECONDS,
    error: l10n.t(
      'The setting queueSplit.linger is {0}: it must be a whole number of seconds from 0 to {1} (0 stops a split when its last debug session ends). Using the default, {2} s; fix it in your settings.',
      shown,
      MAX_LINGER_SECONDS,
      DEFAULT_LINGER_SECONDS,
    ),
  };
}

/** "2:41" (m:ss), "1:02:03" past an hour; never negative, rounded up so 0:00 means stopping now. */
export function formatTimeLeft(ms: number): string {
  const total = Math.max(0, Math.ceil(ms / 1000));
  const hours = Math.floor(total / 3600);
  const minutes = Math.floor((total % 3600) / 60);
  const seconds = String(total % 60).padStart(2, '0');
  return hours > 0 ? `${hours}:${String(minutes).padStart(2, '0')}:${seconds}` : `${minutes}:${seconds}`;
}

/** What the tree row and the status bar say while a split lingers. */
export function lingerText(msLeft: number): string {
  return l10n.t('lingering, stops in {0}', formatTimeLeft(msLeft));
}
