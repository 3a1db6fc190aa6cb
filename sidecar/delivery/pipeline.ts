// Per queue, what every consuming mode shares around a Deliverer: retry until delivered (never
// drop) or until the developer gives up on the message, counts, the `delivered`/`failed`/
// `rejected` lines, and a guard that says so (once) if the session shadow ever holds a message
// the split's filter does not match — that would be a routing bug upstream, and the message is
// still delivered, since dropping it would lose it.
//
// A message that keeps failing blocks its queue (Kafka: its partition): everything behind it
// waits. That is kept — a debugging developer wants the message, and the handler fixed — but made
// visible (each `failed` line says since when it blocks) and answerable: a `retry` request ends
// the backoff wait now, a `reject` request (or --reject-after) gives up on it, and the consumer
// then settles it as the app's own reject would (../consumers/types.ts Delivery).
import { matches, type HeaderFilter, MessageView } from '../../core/filter';
import type { ShadowMessage } from '../../core/shadowMessage';
import type { Delivery, DeliveryHandler } from '../consumers/types';
import type { Reporter } from '../output';
import { PROVIDERS, type Provider } from '../../core/providers';
import type { BlockedMessageRequest, DeliveryCounts } from '../../core/sidecarProtocol';
import { BlockedMessage } from './blocked';
import { untilDelivered, type RejectedBy, type RetryPolicy, type StopSignals } from './retry';
import type { Deliverer } from './types';

export interface RejectRules {
  /** The queue's broker: what a reject does there (the `rejected` line says it). */
  provider: Provider;
  /** --reject-after: give up once this many attempts failed; undefined: never. */
  rejectAfter?: number;
  /** Why messages cannot be rejected in this session now, if they cannot (a queue-agent from
   * before rejects: core/sessionStream.ts SESSION_FEATURES). */
  cannotReject: () => string | undefined;
}

export class QueuePipeline implements DeliveryHandler {
  readonly counts: Required<DeliveryCounts> = { delivered: 0, failed: 0, rejected: 0 };
  private warnedMismatch = false;
  private warnedNoReject = false;
  /** Messages being delivered now, by id (one per lane: Kafka partitions deliver side by side). */
  private readonly inFlight = new Map<string, BlockedMessage>();

  constructor(
    private readonly queue: string,
    private readonly filter: HeaderFilter,
    private readonly deliverer: Deliverer,
    private readonly reporter: Reporter,
    private readonly policy: RetryPolicy,
    private readonly stop: StopSignals,
    private readonly rules: RejectRules,
  ) {}

  async deliver(message: ShadowMessage): Promise<Delivery> {
    if (!this.warnedMismatch && !matches(this.filter, new MessageView(message.filterHeaders, message.body))) {
      this.warnedMismatch = true;
      this.reporter.emit({
        type: 'warning',
        code: 'filter-mismatch',
        queue: this.queue,
        message: `Message ${message.id} in the session shadow does not match the split's filter; delivering it anyway (dropping would lose it).`,
        suggestedAction: 'Report this: the queue-agent routed a message to the wrong shadow.',
      });
    }
    const handle = new BlockedMessage(message.id);
    this.inFlight.set(message.id, handle);
    const rejectAfter = this.rejectAfter();
    try {
      const result = await untilDelivered((signal) => this.deliverer.attempt(message, signal), {
        policy: this.policy,
        stop: this.stop,
        outage: this.deliverer.outage(this.queue),
        queue: this.queue,
        control: handle,
        ...(rejectAfter !== undefined ? { rejectAfter } : {}),
        onFailure: (attempt, reason, retryInMs) => {
          this.counts.failed++;
          if (retryInMs === undefined) return; // given up on: the `rejected` line follows
          this.reporter.emit({
            type: 'failed',
            queue: this.queue,
            messageId: message.id,
            attempt,
            reason,
            retryInMs,
            blockedSince: (handle.since ?? new Date()).toISOString(),
            ...(rejectAfter !== undefined ? { rejectAfter } : {}),
            counts: { ...this.counts },
          });
        },
      });
      if (result.delivered) {
        if (handle.rejectedBy === 'request')
          this.ignored(
            `The reject of message ${message.id} of ${this.queue} came while an attempt was under way, and that attempt delivered it: it is acked, not rejected.`,
          );
        return { settle: 'ack', attempts: result.attempts };
      }
      this.reporter.log(
        `${this.queue}: giving up on message ${message.id} after ${result.attempts} failed attempts (${result.rejectedBy === 'request' ? 'reject request' : `--reject-after ${rejectAfter ?? ''}`}); rejecting it`,
      );
      return {
        settle: 'reject',
        attempts: result.attempts,
        rejectedBy: result.rejectedBy,
        reason: result.reason,
      };
    } finally {
      if (this.inFlight.get(message.id) === handle) this.inFlight.delete(message.id);
    }
  }

  settled(message: ShadowMessage, delivery: Delivery): void {
    if (delivery.settle === 'ack') {
      this.counts.delivered++;
      this.reporter.emit({
        type: 'delivered',
        queue: this.queue,
        messageId: message.id,
        attempts: delivery.attempts,
        counts: { ...this.counts },
      });
      return;
    }
    this.counts.rejected++;
    const by: RejectedBy = delivery.rejectedBy ?? 'request';
    const last = delivery.reason !== undefined ? `; last: ${delivery.reason}` : '';
    const why =
      by === 'request'
        ? `Rejected message ${message.id} of ${this.queue} at your request after ${delivery.attempts} failed attempts${last}.`
        : `Rejected message ${message.id} of ${this.queue} automatically after ${delivery.attempts} failed attempts (--reject-after ${delivery.attempts}${last}).`;
    this.reporter.emit({
      type: 'rejected',
      queue: this.queue,
      messageId: message.id,
      attempts: delivery.attempts,
      by,
      ...(delivery.reason !== undefined ? { reason: delivery.reason } : {}),
      message: `${why} ${PROVIDERS[this.rules.provider].reject.done}. The messages behind it flow again.`,
      counts: { ...this.counts },
    });
  }

  /** The ids of the messages this queue is blocked on now (failed at least once, not settled). */
  blockedOn(): string[] {
    return [...this.inFlight.values()].filter((b) => b.blocked).map((b) => b.messageId);
  }

  /** A `retry` or `reject` request from stdin: acts on the blocked message it names, or says why not. */
  request(request: BlockedMessageRequest): void {
    const handle = this.inFlight.get(request.messageId);
    const verb = request.type === 'retry' ? 'Retry' : 'Reject';
    if (handle === undefined || !handle.blocked) {
      const blocked = this.blockedOn();
      this.ignored(
        `${verb} of message ${request.messageId} of ${this.queue} ignored: that message is not blocked${
          blocked.length > 0
            ? `; ${this.queue} is blocked on ${blocked.join(', ')}`
            : ` and nothing on ${this.queue} is (it may have been delivered meanwhile)`
        }. Nothing was changed.`,
      );
      return;
    }
    if (request.type === 'retry') {
      this.reporter.log(
        handle.retryNow()
          ? `${this.queue}: retrying message ${request.messageId} now, on request`
          : `${this.queue}: an attempt of message ${request.messageId} is under way already`,
      );
      return;
    }
    const why = this.rules.cannotReject();
    if (why !== undefined) {
      this.reporter.emit({
        type: 'warning',
        code: 'request-ignored',
        queue: this.queue,
        message: `Reject of message ${request.messageId} of ${this.queue} ignored: ${why}. It is still retried.`,
        suggestedAction:
          'Retry it once your handler is fixed, or stop the split: an unsettled message goes back to the app.',
      });
      return;
    }
    handle.reject('request');
    this.reporter.log(
      `${this.queue}: reject of message ${request.messageId} requested${handle.waiting ? '' : '; it takes effect when the attempt under way ends'}`,
    );
  }

  private ignored(message: string): void {
    this.reporter.emit({
      type: 'warning',
      code: 'request-ignored',
      queue: this.queue,
      message,
      suggestedAction: `Act on the message the latest "failed" line of ${this.queue} names.`,
    });
  }

  /** --reject-after where this session can reject; otherwise said once, and retried for ever. */
  private rejectAfter(): number | undefined {
    if (this.rules.rejectAfter === undefined) return undefined;
    const why = this.rules.cannotReject();
    if (why === undefined) return this.rules.rejectAfter;
    if (!this.warnedNoReject) {
      this.warnedNoReject = true;
      this.reporter.emit({
        type: 'warning',
        code: 'request-ignored',
        queue: this.queue,
        message: `--reject-after ${this.rules.rejectAfter} does not apply to ${this.queue}: ${why}. Failing messages are retried until delivered.`,
        suggestedAction: 'Ask whoever runs the cluster to upgrade the Queue Split controller.',
      });
    }
    return undefined;
  }
}
