// The sidecar's coded lines that are not errors (core/sidecarProtocol.ts: warnings by code,
// progress by stage, detached, rejected) in the user's language. The sidecar writes English for a
// terminal; the extension says the same from the line's code and fields through l10n, and the
// sidecar's own sentence goes to the log (sidecar/splitSessions.ts). Errors: model/sidecarErrors.ts.
import * as l10n from '@vscode/l10n';
import type { Provider } from '../../core/providers';
import type {
  DetachedMessage,
  ProgressMessage,
  RejectedMessage,
  WarningCode,
  WarningMessage,
} from '../../core/sidecarProtocol';

export interface WarningWords {
  message: string;
  suggestedAction: string;
}

const LOG = (): string => l10n.t('The Queue Split log has the details.');

/** Every warning code in the user's words (typed Record: a new code does not compile without one). */
export const SIDECAR_WARNING_WORDS: Readonly<Record<WarningCode, () => WarningWords>> = {
  'target-down': () => ({
    message: l10n.t(
      'The service you debug does not accept messages; retrying with backoff, nothing is acked or dropped meanwhile.',
    ),
    suggestedAction: l10n.t(
      'Start (or fix) the service at the queueSplit.delivery.httpTarget setting: delivery resumes by itself.',
    ),
  }),
  'relay-down': () => ({
    message: l10n.t(
      'Your local relay broker refuses messages or does not answer; retrying with backoff, nothing is acked or dropped meanwhile.',
    ),
    suggestedAction: l10n.t('Start your local broker (or fix its setting): delivery resumes by itself.'),
  }),
  'lease-renewal-failed': () => ({
    message: l10n.t('The lease of your split could not be renewed; retrying while it holds.'),
    suggestedAction: l10n.t(
      'Nothing to do unless this repeats: check that this machine reaches the cluster.',
    ),
  }),
  'lease-expired': () => ({
    message: l10n.t('The lease of your split ran out: the controller may drain the route back to the app.'),
    suggestedAction: l10n.t('If the split leaves Active, start the split again.'),
  }),
  'split-not-active': () => ({
    message: l10n.t('Your split left Active while its sidecar runs.'),
    suggestedAction: l10n.t('The Queue Splits view says why and what the controller does next.'),
  }),
  'controller-silent': () => ({
    message: l10n.t('Nothing has reported on your split for a while.'),
    suggestedAction: l10n.t(
      'Check that the Queue Split controller is installed and running in this cluster ("Queue Split: Install Controller into Cluster…").',
    ),
  }),
  'broker-reconnecting': () => ({
    message: l10n.t('The connection to the broker was lost; reconnecting. No message is lost.'),
    suggestedAction: l10n.t('Nothing to do unless this repeats: check the broker and your network.'),
  }),
  'filter-mismatch': () => ({
    message: l10n.t(
      "A message in the split's session queue does not match its filter; it is delivered anyway (dropping it would lose it).",
    ),
    suggestedAction: l10n.t(
      'Report this with the Queue Split log: the queue-agent routed a message to the wrong session queue.',
    ),
  }),
  'env-conflict': () => ({
    message: l10n.t('Two queues need different values for one env var; the first value is kept.'),
    suggestedAction: l10n.t('Split (and debug) these queues one at a time, or give them separate env vars.'),
  }),
  'file-settings': () => ({
    message: l10n.t(
      'A queue is named in a config file that no env var sets: until your process reads the session queue instead, it consumes the real source beside the split.',
    ),
    suggestedAction: l10n.t(
      'Set the keys the Queue Split log names in the config your debugged process reads, or use http delivery.',
    ),
  }),
  'unused-override': () => ({
    message: l10n.t(
      'An entry of the queueSplit.env setting is not used by the selected queues; it is ignored.',
    ),
    suggestedAction: LOG(),
  }),
  'detach-timeout': () => ({
    message: l10n.t('The route did not finish draining in time.'),
    suggestedAction: l10n.t('Nothing is lost: the controller finishes the drain without the sidecar.'),
  }),
  'advertised-address': () => ({
    message: l10n.t(
      'The Kafka brokers advertise addresses that only the queueSplit.addressMap setting makes reachable from this machine.',
    ),
    suggestedAction: l10n.t('Check that the queueSplit.addressMap setting maps every address the log names.'),
  }),
  'handback-pending': () => ({
    message: l10n.t("Your route drained, but the workload's handback is not finished."),
    suggestedAction: l10n.t(
      'Nothing is lost: the controller goes on with the handback; the Queue Splits view shows where it is.',
    ),
  }),
  'agent-restarted': () => ({
    message: l10n.t(
      'The queue-agent restarted while your split was active or draining: some messages may be delivered twice.',
    ),
    suggestedAction: l10n.t('Nothing to do: delivery goes on.'),
  }),
  'stream-interrupted': () => ({
    message: l10n.t(
      'The session stream from the queue-agent dropped; resuming. Messages delivered but not yet confirmed may be delivered again.',
    ),
    suggestedAction: l10n.t('Nothing to do unless this repeats.'),
  }),
  'message-parked': () => ({
    message: l10n.t(
      'A message cannot be delivered by this sidecar: it stays in the session queue and goes to the app when the split ends.',
    ),
    suggestedAction: LOG(),
  }),
  'agent-lookalike': () => ({
    message: l10n.t(
      "A pod carries the queue-agent's labels but is not the queue-agent: it was skipped and sent nothing.",
    ),
    suggestedAction: l10n.t('Tell your cluster admin: a pod in this namespace poses as the queue-agent.'),
  }),
  'request-ignored': () => ({
    message: l10n.t(
      'Your retry or reject request changed nothing: the message was settled meanwhile, or this session cannot do it.',
    ),
    suggestedAction: LOG(),
  }),
};

/** A warning line in the user's words; the queue it names, when it names one, in front. */
export function warningWords(m: WarningMessage): WarningWords {
  const words = (SIDECAR_WARNING_WORDS[m.code] ?? SIDECAR_WARNING_WORDS['request-ignored'])();
  return m.queue === undefined
    ? words
    : { ...words, message: l10n.t('Queue {0}: {1}', m.queue, words.message) };
}

/** A progress line's stage in the user's words (the tree row and the progress notification). */
export function progressWords(m: ProgressMessage): string {
  const split = m.split?.name;
  switch (m.stage) {
    case 'resolving':
      return l10n.t('reading the workload and its broker connections');
    case 'creating':
      return split !== undefined ? l10n.t('creating split {0}', split) : l10n.t('creating the split');
    case 'adopting':
      return split !== undefined ? l10n.t('taking over split {0}', split) : l10n.t('taking over the split');
    case 'waiting':
      // The controller's words as they are, like the tree's (model/phases.ts progressLine).
      if (m.controller !== undefined) return m.controller.message;
      return m.phase !== undefined
        ? l10n.t('waiting for the controller to activate the split ({0})', m.phase)
        : l10n.t('waiting for the controller to activate the split');
    case 'active':
      return l10n.t('the split is active');
    case 'consuming':
      return m.queue !== undefined
        ? l10n.t('delivering the session queue of {0}', m.queue)
        : l10n.t('delivering the session queues');
    case 'recovered':
      return l10n.t('the delivery target accepts messages again');
    case 'stopping':
      return l10n.t('stopping delivery');
    case 'draining':
      return m.lag !== undefined
        ? l10n.t('draining the route back to the app ({0} left)', m.lag)
        : l10n.t('draining the route back to the app');
  }
}

/**
 * A detached line in the user's words: drained or not, and the workload's handback as far as the
 * line says (its phase; the controller's own message, written into the cluster for everyone,
 * stays as it wrote it).
 */
export function detachedWords(m: DetachedMessage): string {
  const name = m.split.name;
  if (!m.drained) return l10n.t('Delete requested; {0} was still draining when the sidecar exited.', name);
  const handback = m.handback;
  if (handback === undefined)
    return l10n.t('QueueSplit {0} is gone: your route drained back to the app.', name);
  switch (handback.phase) {
    case 'HandedBack':
      return l10n.t(
        'QueueSplit {0} is gone: your route drained, and the workload is handed back (the app consumes its own sources again).',
        name,
      );
    case 'Split':
    case 'Splitting':
      return l10n.t(
        'QueueSplit {0} is gone: your route drained back to the app; the workload stays split for the other routes.',
        name,
      );
    default:
      return l10n.t(
        'QueueSplit {0} is gone and your route drained, but the workload is not handed back yet ({1}): {2}',
        name,
        handback.phase,
        handback.message,
      );
  }
}

/** What a reject did on each broker (a new provider does not compile without its words). */
const REJECT_DONE: Readonly<Record<Provider, () => string>> = {
  kafka: () =>
    l10n.t(
      'Kafka has no reject: it is skipped, its offset committed past it, as your app would skip it; it is not delivered again.',
    ),
  rabbitmq: () =>
    l10n.t(
      "RabbitMQ rejected it without requeue: the broker dead-letters it by the queue's dead-letter settings (x-dead-letter-exchange), or discards it if the queue has none, as your app's own reject would.",
    ),
  sqs: () =>
    l10n.t(
      "SQS has no reject: it was released without being deleted, as your app's failed receive would leave it; the queue's RedrivePolicy moves it to the dead-letter queue after maxReceiveCount receives, or it stays until its retention ends.",
    ),
};

/** A rejected line in the user's words; `provider` is the queue's (from the ready line), when known. */
export function rejectedWords(m: RejectedMessage, provider: Provider | undefined): string {
  const what =
    m.by === 'request'
      ? l10n.t(
          'Rejected message {0} of {1} at your request after {2} failed attempts.',
          m.messageId,
          m.queue,
          m.attempts,
        )
      : l10n.t(
          'Rejected message {0} of {1} automatically after {2} failed attempts (the queueSplit.delivery.rejectAfterAttempts setting).',
          m.messageId,
          m.queue,
          m.attempts,
        );
  const done = provider !== undefined ? REJECT_DONE[provider]() : undefined;
  return done !== undefined
    ? l10n.t('{0} {1} The messages behind it flow again.', what, done)
    : l10n.t('{0} The messages behind it flow again.', what);
}
