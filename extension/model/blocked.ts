// What the views say about a message whose delivery keeps failing (docs/design.md §8): its queue
// waits behind it, so the tree row, the status bar and the reject confirmation say which message,
// why and how often, and what a reject does on that broker. Pure: text from a BlockedDelivery.
import { PROVIDER_NAMES, PROVIDERS, type Provider } from '../../core/providers';
import type { BlockedDelivery, SessionView } from './sidecarView';

/** "blocked on message 0-5: HTTP 500, attempt 8" — the tree row's words. */
export function blockedText(b: BlockedDelivery): string {
  return `blocked on message ${b.messageId}: ${b.reason}, attempt ${b.attempt}`;
}

/** The status bar has little room: "blocked: HTTP 500, attempt 8". */
export function blockedShort(b: BlockedDelivery): string {
  return `blocked: ${b.reason}, attempt ${b.attempt}`;
}

/** One line for tooltips: since when, the next attempt, the --reject-after limit. */
export function blockedDetail(b: BlockedDelivery, now: number): string {
  const since = Math.max(0, Math.round((now - Date.parse(b.since)) / 1000));
  const next = Math.max(0, Math.round((Date.parse(b.failedAt) + b.retryInMs - now) / 1000));
  return [
    `${blockedText(b)} (queue ${b.queue}, for ${since} s; next attempt ${next > 0 ? `in ${next} s` : 'now'})`,
    ...(b.rejectAfter !== undefined ? [`rejected automatically when attempt ${b.rejectAfter} fails`] : []),
    'the messages behind it wait',
  ].join('; ');
}

/** The blocked messages of one queue of a session, oldest first. */
export function blockedOn(view: SessionView | undefined, queue?: string): BlockedDelivery[] {
  return (view?.blocked ?? []).filter((b) => queue === undefined || b.queue === queue);
}

/** What rejecting does, on each broker: the modal confirmation says it before anything happens. */
export function rejectConfirmation(
  b: BlockedDelivery,
  provider: Provider | undefined,
): { message: string; detail: string; button: string } {
  // Without a known provider (a session from before the provider was reported) it says what each does.
  const effect = provider
    ? PROVIDERS[provider].reject.confirm
    : `It is settled as your app's own reject would settle it. ${PROVIDER_NAMES.map((p) => PROVIDERS[p].reject.confirm).join(' ')}`;
  return {
    message: `Reject message ${b.messageId} of ${b.queue}?`,
    detail: `It failed ${b.attempt} ${b.attempt === 1 ? 'time' : 'times'} (${b.reason}) and holds up the messages behind it. ${effect} The messages behind it then flow.`,
    button: 'Reject Message',
  };
}

export interface RejectAfterSetting {
  /** 0: never. */
  attempts: number;
  /** Set when the setting's value is not usable (it is then ignored). */
  error?: string;
}

/** queueSplit.delivery.rejectAfterAttempts: a whole number ≥ 0, 0 (the default) meaning never. */
export function parseRejectAfter(raw: unknown): RejectAfterSetting {
  if (raw === undefined || raw === null) return { attempts: 0 };
  if (typeof raw === 'number' && Number.isInteger(raw) && raw >= 0 && raw <= 1_000_000)
    return { attempts: raw };
  const shown =
    typeof raw === 'string' ? JSON.stringify(raw) : typeof raw === 'number' ? String(raw) : typeof raw;
  return {
    attempts: 0,
    error: `The setting queueSplit.delivery.rejectAfterAttempts is ${shown}: it must be a whole number of attempts from 0 to 1000000 (0: never reject, retry until delivered). Not rejecting automatically; fix it in your settings.`,
  };
}

/** A blocked message named outside the tree (a notification's action): which split, queue, id. */
export interface BlockedRef {
  kind: 'blocked';
  split: string;
  queue: string;
  messageId: string;
}
