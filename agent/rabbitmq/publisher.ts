// Confirmed, mandatory publishes with basic.return correlation. A positive confirm arrives
// even for an unroutable mandatory publish; only basic.return (312 NO_ROUTE) says so, and it
// carries no delivery tag. RabbitMQ sends a publish's return before its confirm, so when the
// confirm arrives every return for that publish sequence has been seen: the outcome is
// `routed` only for a positive confirm with no return recorded.
//
// Copies go through their destination's exchange with the producer's routing key (routing.ts),
// so a return is placed on the unconfirmed publishes with the same exchange (one per
// destination), routing key, message id and body. If several identical ones are in flight all
// are marked returned: retrying a routed copy costs a duplicate, acking an unrouted one would
// lose a message.
import type { ConfirmChannel, Message, Options } from 'amqplib';
import type { Logger } from '../log';

/** Where one copy goes: the destination's exchange, the queue it delivers to (alone), the
 * producer's key. */
export interface CopyTarget {
  readonly exchange: string;
  readonly destination: string;
  readonly routingKey: string;
}

/** routed: confirmed, no return. returned: no queue took it. nacked: the broker refused it.
 * lost: the channel closed before the confirm (ambiguous: may or may not be enqueued).
 * refused: amqplib threw before sending (e.g. headers beyond its 64 KiB encoder buffer). */
export type PublishOutcome = 'routed' | 'returned' | 'nacked' | 'lost' | 'refused';

interface Unconfirmed {
  readonly exchange: string;
  readonly routingKey: string;
  readonly content: Buffer;
  readonly messageId: unknown;
  returned: boolean;
}

export class ConfirmPublisher {
  private readonly unconfirmed = new Set<Unconfirmed>();
  private closed = false;

  constructor(
    private readonly channel: ConfirmChannel,
    private readonly logger: Logger,
  ) {
    channel.on('return', (msg: Message) => this.onReturn(msg));
    channel.on('close', () => {
      this.closed = true;
    });
  }

  get open(): boolean {
    return !this.closed;
  }

  get inFlight(): number {
    return this.unconfirmed.size;
  }

  /** Sends synchronously (so publishes keep delivery order) and resolves with the outcome. */
  publish(target: CopyTarget, content: Buffer, options: Options.Publish): Promise<PublishOutcome> {
    if (this.closed) return Promise.resolve('lost');
    const { exchange, destination, routingKey } = target;
    const entry: Unconfirmed = {
      exchange,
      routingKey,
      content,
      messageId: options.messageId,
      returned: false,
    };
    return new Promise<PublishOutcome>((resolve) => {
      try {
        this.channel.publish(
          exchange,
          routingKey,
          content,
          { ...options, mandatory: true },
          (err: unknown) => {
            this.unconfirmed.delete(entry);
            if (err == null) resolve(entry.returned ? 'returned' : 'routed');
            else resolve(err instanceof Error && err.message === 'message nacked' ? 'nacked' : 'lost');
          },
        );
        this.unconfirmed.add(entry);
      } catch (err) {
        // IllegalOperationError: the channel is closing; RangeError: unencodable properties.
        this.logger.warn('publish.refused', {
          destination,
          error: err instanceof Error ? err.name : 'error',
        });
        resolve(this.closed ? 'lost' : 'refused');
      }
    });
  }

  async close(): Promise<void> {
    if (this.closed) return;
    this.closed = true;
    await this.channel.close().catch(() => undefined);
  }

  private onReturn(msg: Message): void {
    let placed = 0;
    const exchange = msg.fields.exchange;
    for (const entry of this.unconfirmed) {
      if (
        entry.exchange === exchange &&
        entry.routingKey === msg.fields.routingKey &&
        entry.messageId === msg.properties.messageId &&
        entry.content.equals(msg.content)
      ) {
        entry.returned = true;
        placed++;
      }
    }
    if (placed === 0) this.logger.error('publish.return-unplaced', { exchange });
  }
}
