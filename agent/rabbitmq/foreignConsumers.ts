// Source ownership on quorum queues. RabbitMQ enforces an exclusive consumer only on classic
// queues; a quorum queue admits a second consumer silently. So while the pump runs on a quorum
// source the engine watches the queue's consumers through the management API and reports
// DEGRADED when one it does not own appears (it would take messages past the split).
// Statistics lag, so a stranger must be seen on two consecutive polls.
import { describeError, type Logger } from '../log';
import type { ManagementClient } from './management';

export interface ForeignConsumers {
  readonly tags: readonly string[];
  readonly since: string;
}

export class OwnershipMonitor {
  private timer: NodeJS.Timeout | undefined;
  private previous = new Set<string>();
  private foreign: ForeignConsumers | undefined;

  constructor(
    private readonly management: ManagementClient,
    private readonly queue: string,
    private readonly ownTags: () => readonly string[],
    private readonly intervalMs: number,
    private readonly logger: Logger,
  ) {}

  get current(): ForeignConsumers | undefined {
    return this.foreign;
  }

  start(): void {
    if (this.timer) return;
    const tick = async () => {
      await this.poll();
      if (this.timer) this.timer = setTimeout(() => void tick(), this.intervalMs);
    };
    this.timer = setTimeout(() => void tick(), this.intervalMs);
  }

  stop(): void {
    clearTimeout(this.timer);
    this.timer = undefined;
    this.previous = new Set();
    this.foreign = undefined;
  }

  private async poll(): Promise<void> {
    try {
      const info = await this.management.getQueue(this.queue);
      const own = new Set(this.ownTags());
      const strangers = new Set(
        (info?.consumer_details ?? []).map((c) => c.consumer_tag).filter((t) => !own.has(t)),
      );
      const confirmed = [...strangers].filter((t) => this.previous.has(t));
      this.previous = strangers;
      if (confirmed.length > 0 && !this.foreign) {
        this.foreign = { tags: confirmed, since: new Date().toISOString() };
        this.logger.warn('source.foreign-consumer', { queue: this.queue, count: confirmed.length });
      } else if (confirmed.length === 0 && this.foreign) {
        this.logger.info('source.foreign-consumer-gone', { queue: this.queue });
        this.foreign = undefined;
      }
    } catch (err) {
      this.logger.debug('source.ownership-poll-failed', { error: describeError(err) });
    }
  }
}
