// Per queue, what every consuming mode shares around a Deliverer: retry until delivered (never
// drop), counts, the `delivered`/`failed` lines, and a guard that says so (once) if the session
// shadow ever holds a message the split's filter does not match — that would be a routing bug
// upstream, and the message is still delivered, since dropping it would lose it.
import { matches, type HeaderFilter } from '../../core/filter';
import type { ShadowMessage } from '../../core/shadowMessage';
import type { DeliveryHandler } from '../consumers/types';
import type { Reporter } from '../output';
import type { DeliveryCounts } from '../protocol';
import { untilDelivered, type RetryPolicy, type StopSignals } from './retry';
import type { Deliverer } from './types';

export class QueuePipeline implements DeliveryHandler {
  readonly counts: DeliveryCounts = { delivered: 0, failed: 0 };
  private warnedMismatch = false;

  constructor(
    private readonly queue: string,
    private readonly filter: HeaderFilter,
    private readonly deliverer: Deliverer,
    private readonly reporter: Reporter,
    private readonly policy: RetryPolicy,
    private readonly stop: StopSignals,
  ) {}

  async deliver(message: ShadowMessage): Promise<number> {
    if (!this.warnedMismatch && !matches(this.filter, message.filterHeaders)) {
      this.warnedMismatch = true;
      this.reporter.emit({
        type: 'warning',
        code: 'filter-mismatch',
        queue: this.queue,
        message: `Message ${message.id} in the session shadow does not match the split's filter; delivering it anyway (dropping would lose it).`,
        suggestedAction: 'Report this: the queue-agent routed a message to the wrong shadow.',
      });
    }
    return untilDelivered((signal) => this.deliverer.attempt(message, signal), {
      policy: this.policy,
      stop: this.stop,
      outage: this.deliverer.outage(this.queue),
      queue: this.queue,
      onFailure: (attempt, reason, retryInMs) => {
        this.counts.failed++;
        this.reporter.emit({
          type: 'failed',
          queue: this.queue,
          messageId: message.id,
          attempt,
          reason,
          retryInMs,
          counts: { ...this.counts },
        });
      },
    });
  }

  acked(message: ShadowMessage, attempts: number): void {
    this.counts.delivered++;
    this.reporter.emit({
      type: 'delivered',
      queue: this.queue,
      messageId: message.id,
      attempts,
      counts: { ...this.counts },
    });
  }
}
