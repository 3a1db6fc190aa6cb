// Reads one route's RabbitMQ session shadow for its session stream: one consumer with a
// prefetch of at most the stream's window, so the broker never pushes the backlog into our
// unacked set; RabbitMQ has no prefetch by bytes, so the prefetch also follows the largest
// recent message to keep what the broker pushes near the stream's byte budget (./bounds.ts);
// deliveries are sent in queue order, each acked on the broker only once the sidecar acked it
// (or rejected without requeue once the developer rejected it: the broker then dead-letters it
// by the shadow's arguments, which are the source's, as it would the app's reject), and settled
// only once the broker provably has that ack or reject. Stopping cancels the consumer before
// the channel closes, so what the sidecar never confirmed is requeued for a resumed stream or the
// route's drain; a stop that comes while the reader is still connecting waits for it and closes
// what it opened, so no consumer outlives its stream (docs/design.md §8, "Before a drain").
// An earlier stream's acks whose proof never came back (routeStream.ts invariant 4) are proven
// here: such a message that comes again was not acked; one that is no longer in the shadow at
// all (nothing ready, and no consumer but ours that could hold it unacked) was.
import * as amqp from 'amqplib';
import { amqpShadowMessage } from '../../core/providers/rabbitmq/message';
import { SESSION_BOUNDS } from '../sessionStream/bounds';
import type { SessionReader } from '../sessionStream/reader';
import type { RouteStream } from '../sessionStream/routeStream';

const INITIAL_PREFETCH = 4;
const RECENT_SIZES = 32;
/** How often the shadow is looked at while an earlier stream's acks wait for proof. */
const AWAITING_CHECK_MS = 500;

export interface RabbitReaderConfig {
  queue: string;
  amqpUrl: string;
  shadow: string;
}

export class RabbitSessionReader implements SessionReader {
  private connection: amqp.ChannelModel | undefined;
  private channel: amqp.Channel | undefined;
  private consumerTag: string | undefined;
  private stopping = false;
  private starting: Promise<void> | undefined;
  private stopped: Promise<void> | undefined;
  private order = Promise.resolve();
  /** Tags acked on the channel whose acks the broker has not yet been proven to hold. */
  private unproven: number[] = [];
  private proving: Promise<void> | undefined;
  private prefetch = 0;
  /** A consumer being replaced by one with another prefetch (follow). */
  private switching: Promise<void> | undefined;
  /** Body sizes of the latest deliveries, which the prefetch follows. */
  private readonly recentSizes: number[] = [];

  constructor(private readonly config: RabbitReaderConfig) {}

  start(stream: RouteStream, onFailure: (err: unknown) => void): Promise<void> {
    this.starting ??= this.open(stream, onFailure);
    return this.starting;
  }

  private async open(stream: RouteStream, onFailure: (err: unknown) => void): Promise<void> {
    const { queue, amqpUrl, shadow } = this.config;
    const connection = await amqp.connect(amqpUrl, {
      clientProperties: { connection_name: `queue-split session ${queue}` },
    });
    this.connection = connection;
    // Without a listener a connection-level error would crash the agent (BROKER-FACTS).
    connection.on('error', () => undefined);
    connection.on('close', () => {
      if (!this.stopping) onFailure(new Error(`the AMQP connection of session shadow ${shadow} closed`));
    });
    // A stop() that came meanwhile waits for this start and closes what it opened.
    if (this.stopping) return;
    const channel = await connection.createChannel();
    this.channel = channel;
    channel.on('error', () => undefined);
    if (this.stopping) return;
    // Small until the first sizes are seen: large messages must not arrive a window at a time.
    await this.consume(channel, stream, Math.min(stream.window, INITIAL_PREFETCH), onFailure);
    if (stream.awaits(this.config.queue)) void this.proveAwaiting(channel, stream);
  }

  /**
   * Settles the earlier stream's unproven acks once the shadow shows the broker had them: none of
   * those messages came again (each that did left the waiting set on arrival), none is ready,
   * and no consumer but ours holds any unacked (a dead connection's consumer is counted until
   * the broker has requeued what it held). Looks again while any waits: the old connection may
   * not be gone yet, or the queue not yet empty.
   */
  private async proveAwaiting(channel: amqp.Channel, stream: RouteStream): Promise<void> {
    const { queue, shadow } = this.config;
    while (!this.stopping && stream.awaits(queue)) {
      let ready: number;
      let consumers: number;
      try {
        ({ messageCount: ready, consumerCount: consumers } = await channel.checkQueue(shadow));
      } catch {
        return; // the channel closed: the next stream looks again
      }
      const ours = this.consumerTag !== undefined ? 1 : 0;
      if (ready === 0 && consumers <= ours && !this.stopping) {
        stream.resolveAwaiting(queue);
        return;
      }
      await new Promise((wake) => setTimeout(wake, AWAITING_CHECK_MS));
    }
  }

  /** One consumer with `prefetch` (RabbitMQ applies a prefetch to the consumers started after it). */
  private async consume(
    channel: amqp.Channel,
    stream: RouteStream,
    prefetch: number,
    onFailure: (err: unknown) => void,
  ): Promise<void> {
    const { shadow } = this.config;
    this.prefetch = prefetch;
    await channel.prefetch(prefetch);
    if (this.stopping) return;
    const { consumerTag } = await channel.consume(
      shadow,
      (msg) => {
        if (msg === null) {
          if (!this.stopping) onFailure(new Error(`the broker cancelled the consumer of ${shadow}`));
          return;
        }
        // On arrival, before any later proof looks at the shadow: this one was not acked.
        const id = msg.properties.messageId as unknown;
        if (typeof id === 'string' && id !== '') stream.cameAgain(this.config.queue, id);
        this.follow(msg.content.length, msg.fields.consumerTag, stream, channel, onFailure);
        this.order = this.order.then(() => this.forward(msg, stream, channel));
      },
      { noAck: false },
    );
    this.consumerTag = consumerTag;
  }

  /**
   * Keeps the prefetch near as many of the largest recent messages as fit the byte budget. A
   * prefetch applies only to consumers started after it, so a change of 2x or more replaces the
   * consumer: deliveries the old one got stay unacked on this channel and are sent first, in
   * queue order, then the new one's.
   */
  private follow(
    size: number,
    /** The consumer that delivered it: the one to replace. */
    delivering: string,
    stream: RouteStream,
    channel: amqp.Channel,
    onFailure: (err: unknown) => void,
  ) {
    this.recentSizes.push(size);
    if (this.recentSizes.length > RECENT_SIZES) this.recentSizes.shift();
    const largest = Math.max(1, ...this.recentSizes);
    const target = Math.max(1, Math.min(stream.window, Math.floor(SESSION_BOUNDS.maxUnackedBytes / largest)));
    if (this.switching || this.stopping || (target < this.prefetch * 2 && target * 2 > this.prefetch)) return;
    // The delivering consumer, not this.consumerTag: a delivery in the same read as the
    // consume-ok comes before that is set, and replacing "no consumer" left two on the channel.
    const old = delivering;
    if (this.consumerTag !== undefined && old !== this.consumerTag) return; // one already replaced
    this.switching = (async () => {
      await channel.cancel(old);
      if (this.consumerTag === old) this.consumerTag = undefined;
      if (!this.stopping) await this.consume(channel, stream, target, onFailure);
    })()
      .catch((err: unknown) => {
        if (!this.stopping) onFailure(err);
      })
      .finally(() => (this.switching = undefined));
  }

  private async forward(msg: amqp.ConsumeMessage, stream: RouteStream, channel: amqp.Channel): Promise<void> {
    if (this.stopping) return; // unacked: requeued when the channel closes
    let sent;
    try {
      sent = await stream.send(this.config.queue, amqpShadowMessage(this.config.queue, msg));
    } catch {
      return; // the stream closed first
    }
    const { tag } = sent;
    sent.answered.then(
      (answer) => {
        try {
          // basic.reject, requeue=false: what an app's own reject does, so the queue's
          // x-dead-letter-exchange (or, without one, RabbitMQ's discard) applies unchanged.
          if (answer === 'reject') channel.reject(msg, false);
          else channel.ack(msg);
        } catch {
          return; // the channel is gone: the broker requeued it, so it is not settled
        }
        this.prove(tag, stream, channel);
      },
      () => undefined,
    );
  }

  /**
   * Settles `tag` once the broker provably has its ack (or reject). AMQP 0-9-1 never answers a
   * basic.ack or basic.reject, but the broker processes a channel's methods in order, so the
   * reply to a synchronous method sent after them proves it has them (a connection lost before would requeue the
   * messages, and one already reported delivered would be delivered again). One round trip
   * covers every ack made while the previous one was under way.
   */
  private prove(tag: number, stream: RouteStream, channel: amqp.Channel): void {
    this.unproven.push(tag);
    if (this.proving) return;
    const run = async () => {
      for (;;) {
        const batch = this.unproven;
        this.unproven = [];
        try {
          await channel.checkQueue(this.config.shadow);
        } catch {
          // The channel closed: what the broker did not get is requeued, so nothing is settled.
          this.unproven = [];
          this.proving = undefined;
          return;
        }
        stream.settle(batch);
        if (this.unproven.length === 0) {
          this.proving = undefined;
          return;
        }
      }
    };
    this.proving = run();
  }

  stop(): Promise<void> {
    this.stopped ??= this.close();
    return this.stopped;
  }

  private async close(): Promise<void> {
    this.stopping = true;
    await this.starting?.catch(() => undefined);
    await this.switching;
    if (this.channel && this.consumerTag) await this.channel.cancel(this.consumerTag).catch(() => undefined);
    await this.order;
    // The last acks proven and settled before the stream finishes (the sidecar reports them).
    while (this.proving) await this.proving;
    await this.channel?.close().catch(() => undefined);
    await this.connection?.close().catch(() => undefined);
  }
}
