// Reads one route's RabbitMQ session shadow for its session stream: one consumer with a
// prefetch of the stream's window, so the broker never pushes the backlog into our unacked set;
// deliveries are sent in queue order, each acked on the broker only once the sidecar acked it,
// and then settled. Stopping cancels the consumer before the channel closes, so what the
// sidecar never confirmed is requeued for a resumed stream or the route's drain.
import * as amqp from 'amqplib';
import { amqpShadowMessage } from '../../core/shadowMessage';
import type { RouteStream } from './routeStream';
import type { SessionReader } from './reader';

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
  private order = Promise.resolve();

  constructor(private readonly config: RabbitReaderConfig) {}

  async start(stream: RouteStream, onFailure: (err: unknown) => void): Promise<void> {
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
    const channel = await connection.createChannel();
    this.channel = channel;
    channel.on('error', () => undefined);
    await channel.prefetch(stream.window);
    const { consumerTag } = await channel.consume(
      shadow,
      (msg) => {
        if (msg === null) {
          if (!this.stopping) onFailure(new Error(`the broker cancelled the consumer of ${shadow}`));
          return;
        }
        this.order = this.order.then(() => this.forward(msg, stream, channel));
      },
      { noAck: false },
    );
    this.consumerTag = consumerTag;
  }

  private async forward(msg: amqp.ConsumeMessage, stream: RouteStream, channel: amqp.Channel): Promise<void> {
    if (this.stopping) return; // unacked: requeued when the channel closes
    let sent;
    try {
      sent = await stream.send(this.config.queue, amqpShadowMessage(this.config.queue, msg));
    } catch {
      return; // the stream closed first
    }
    sent.acked.then(
      () => {
        try {
          channel.ack(msg);
          stream.settle([sent.tag]);
        } catch {
          // The channel is gone: the broker requeued it, so it is not settled.
        }
      },
      () => undefined,
    );
  }

  async stop(): Promise<void> {
    this.stopping = true;
    if (this.channel && this.consumerTag) await this.channel.cancel(this.consumerTag).catch(() => undefined);
    await this.order;
    await this.channel?.close().catch(() => undefined);
    await this.connection?.close().catch(() => undefined);
  }
}
