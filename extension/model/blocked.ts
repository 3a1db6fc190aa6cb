// What the views say about a message whose delivery keeps failing (docs/design.md §8): its queue
// waits behind it, so the tree row, the status bar and the reject confirmation say which message,
// why and how often, and what a reject does on that broker. Pure: text from a BlockedDelivery.
import * as l10n from '@vscode/l10n';
import { PROVIDER_NAMES, type Provider } from '../../core/providers';
import type { BlockedDelivery, SessionView } from './sidecarView';

/** "blocked on message 0-5: HTTP 500, attempt 8" — the tree row's words. */
export function blockedText(b: BlockedDelivery): string {
  return l10n.t('blocked on message {0}: {1}, attempt {2}', b.messageId, b.reason, b.attempt);
}

/** The status bar has little room: "blocked: HTTP 500, attempt 8". */
export function blockedShort(b: BlockedDelivery): string {
  return l10n.t('blocked: {0}, attempt {1}', b.reason, b.attempt);
}

/** One line for tooltips: since when, the next attempt, the --reject-after limit. */
export function blockedDetail(b: BlockedDelivery, now: number): string {
  const since = Math.max(0, Math.round((now - Date.parse(b.since)) / 1000));
  const next = Math.max(0, Math.round((Date.parse(b.failedAt) + b.retryInMs - now) / 1000));
  return [
    next > 0
      ? l10n.t('{0} (queue {1}, for {2} s; next attempt in {3} s)', blockedText(b), b.queue, since, next)
      : l10n.t('{0} (queue {1}, for {2} s; next attempt now)', blockedText(b), b.queue, since),
    ...(b.rejectAfter !== undefined
      ? [l10n.t('rejected automatically when attempt {0} fails', b.rejectAfter)]
      : []),
    l10n.t('the messages behind it wait'),
  ].join('; ');
}

/** The blocked messages of one queue of a session, oldest first. */
export function blockedOn(view: SessionView | undefined, queue?: string): BlockedDelivery[] {
  return (view?.blocked ?? []).filter((b) => queue === undefined || b.queue === queue);
}

/** What a reject does on each broker, as the confirmation says it (a new provider does not compile without its words). */
function rejectEffect(provider: Provider): string {
  const words: Record<Provider, () => string> = {
    kafka: () =>
      l10n.t(
        'Kafka has no reject: the message is skipped, its offset committed past it, as your app would skip it. Neither you nor the app get it again.',
      ),
    rabbitmq: () =>
      l10n.t(
        "RabbitMQ rejects it without requeue, as your app's own reject would: the broker dead-letters it by the queue's rules (x-dead-letter-exchange), or discards it if the queue has no dead-letter exchange.",
      ),
    sqs: () =>
      l10n.t(
        "SQS has no reject: the message is released (visibility 0) without being deleted, as your app's failed receive would leave it. It is received again, and once the queue's maxReceiveCount is passed the RedrivePolicy moves it to the dead-letter queue; without one it stays until its retention ends.",
      ),
  };
  return words[provider]();
}

/** What rejecting does, on each broker: the modal confirmation says it before anything happens. */
export function rejectConfirmation(
  b: BlockedDelivery,
  provider: Provider | undefined,
): { message: string; detail: string; button: string } {
  // Without a known provider (a session from before the provider was reported) it says what each does.
  const effect = provider
    ? rejectEffect(provider)
    : l10n.t(
        "It is settled as your app's own reject would settle it. {0}",
        PROVIDER_NAMES.map(rejectEffect).join(' '),
      );
  return {
    message: l10n.t('Reject message {0} of {1}?', b.messageId, b.queue),
    detail:
      b.attempt === 1
        ? l10n.t(
            'It failed 1 time ({0}) and holds up the messages behind it. {1} The messages behind it then flow.',
            b.reason,
            effect,
          )
        : l10n.t(
            'It failed {0} times ({1}) and holds up the messages behind it. {2} The messages behind it then flow.',
            b.attempt,
            b.reason,
            effect,
          ),
    button: l10n.t('Reject Message'),
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
    error: l10n.t(
      'The setting queueSplit.delivery.rejectAfterAttempts is {0}: it must be a whole number of attempts from 0 to 1000000 (0: never reject, retry until delivered). Not rejecting automatically; fix it in your settings.',
      shown,
    ),
  };
}

/** A blocked message named outside the tree (a notification's action): which split, queue, id. */
export interface BlockedRef {
  kind: 'blocked';
  split: string;
  queue: string;
  messageId: string;
}
