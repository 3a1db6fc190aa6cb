// Consumes a RabbitMQ session shadow queue. Prefetch 1 and one delivery at a time: order is kept
// and the broker never pushes the backlog into our unacked set. A message is acked only after
// the delivery mode reports success; on stop the consumer is cancelled first and the connection
// closed, so an unfinished delivery is requeued by the broker (for a restart or the drain).
// A message the developer rejected is rejected without requeue, as the app's own reject would
// be: the broker dead-letters it by the shadow's arguments (the source's), or discards it.
// A lost connection is not fatal: the sidecar reconnects with backoff and says so.
import { setTimeout as sleep } from 'node:timers/promises';
import * as amqp from 'amqplib';
import { amqpShadowMessage } from '../../core/providers/rabbitmq/message';
import { SidecarError, errorText } from '../../laptop/errors';
import { amqpConnectError, amqpReplyCode, connectAmqp, type RabbitConnection } from '../../laptop/rabbitmq';
import type { Reporter } from '../output';
import type { Delivery, DeliveryHandler, ShadowConsumer } from './types';

const RECONNECT_MAX_MS = 30_000;

export interface RabbitShadowOptions {
  queue: string;
  shadowQueue: string;
  connection: RabbitConnection;
  reporter: Reporter;
  /** Shown in the management UI: tells operators whose connection this is. */
  connectionName: string;
  onFatal: (err: SidecarError) => void;
}

export class RabbitShadowConsumer implements ShadowConsumer {
  readonly queue: string;
  private model: amqp.ChannelModel | undefined;
  private channel: amqp.Channel | undefined;
  private consumerTag: string | undefined;
  private stopping = false;
  private inFlight: Promise<void> = Promise.resolve();
  private handler: DeliveryHandler | undefined;

  constructor(private readonly options: RabbitShadowOptions) {
    this.queue = options.queue;
  }

  async start(handler: DeliveryHandler): Promise<void> {
    this.handler = handler;
    await this.open();
  }

  /** One connection incarnation: connect, check the shadow, consume. */
  private async open(): Promise<void> {
    const { connection, shadowQueue, reporter } = this.options;
    const model = await connectAmqp(connection, this.options.connectionName);
    model.on('error', (err: Error) =>
      reporter.log(`rabbitmq ${this.queue}: connection error: ${err.message}`),
    );
    let channel: amqp.Channel;
    try {
      channel = await model.createChannel();
      channel.on('error', (err: Error) =>
        reporter.log(`rabbitmq ${this.queue}: channel error: ${err.message}`),
      );
      await channel.checkQueue(shadowQueue);
      await channel.prefetch(1);
      this.model = model;
      this.channel = channel;
      const { consumerTag } = await channel.consume(shadowQueue, (msg) => this.onMessage(channel, msg), {
        noAck: false,
      });
      this.consumerTag = consumerTag;
    } catch (err) {
      await model.close().catch(() => undefined);
      if (amqpReplyCode(err) === 404) {
        throw new SidecarError(
          'shadow-missing',
          `Session shadow queue ${shadowQueue} does not exist on ${connection.display}.`,
          'The controller reported a shadow the broker does not have: check `kubectl describe queuesplit` and the controller logs.',
        );
      }
      throw amqpConnectError(err, connection);
    }
    model.once('close', () => {
      if (!this.stopping) void this.reconnect();
    });
  }

  private onMessage(channel: amqp.Channel, msg: amqp.ConsumeMessage | null): void {
    if (msg === null) {
      // The broker cancelled us: the shadow queue was deleted under us.
      if (!this.stopping) {
        this.options.onFatal(
          new SidecarError(
            'shadow-missing',
            `The session shadow queue ${this.options.shadowQueue} was deleted while the sidecar consumed it.`,
            'Check the split with `kubectl describe queuesplit`; start the sidecar again for a new route.',
          ),
        );
      }
      return;
    }
    const handler = this.handler;
    if (handler === undefined) return;
    const message = amqpShadowMessage(this.queue, msg);
    this.inFlight = this.inFlight.then(async () => {
      if (this.stopping) return; // not acked: the broker requeues it when we close
      let delivery: Delivery;
      try {
        delivery = await handler.deliver(message);
      } catch {
        return; // only on stop
      }
      try {
        if (delivery.settle === 'reject') channel.reject(msg, false);
        else channel.ack(msg);
        handler.settled(message, delivery);
      } catch (err) {
        // Channel gone: the broker requeues the message; it will come again (a duplicate, not a loss).
        this.options.reporter.log(
          `rabbitmq ${this.queue}: ${delivery.settle} of ${message.id} failed (${errorText(err)}); it will be redelivered`,
        );
      }
    });
  }

  private async reconnect(): Promise<void> {
    const { reporter } = this.options;
    reporter.emit({
      type: 'warning',
      code: 'broker-reconnecting',
      queue: this.queue,
      message: `Lost the RabbitMQ connection for queue "${this.queue}"; reconnecting. Unacked messages are redelivered, none are lost.`,
      suggestedAction: 'Nothing to do unless this repeats; check the broker and your network.',
    });
    for (let attempt = 1; !this.stopping; attempt++) {
      await sleep(Math.min(RECONNECT_MAX_MS, 500 * 2 ** Math.min(attempt, 10)));
      if (this.stopping) return;
      try {
        await this.open();
        reporter.emit({
          type: 'progress',
          stage: 'consuming',
          queue: this.queue,
          message: `Reconnected; consuming ${this.options.shadowQueue} again.`,
        });
        return;
      } catch (err) {
        if (err instanceof SidecarError && err.code === 'shadow-missing') {
          this.options.onFatal(err);
          return;
        }
        reporter.log(`rabbitmq ${this.queue}: reconnect attempt ${attempt} failed: ${errorText(err)}`);
      }
    }
  }

  async stop(): Promise<void> {
    if (this.stopping) return;
    this.stopping = true;
    // Cancel first, so nothing new arrives while the last delivery finishes or aborts.
    if (this.channel !== undefined && this.consumerTag !== undefined) {
      await this.channel.cancel(this.consumerTag).catch(() => undefined);
    }
    await this.inFlight;
    await this.model?.close().catch(() => undefined);
  }
}
