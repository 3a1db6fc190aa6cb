// relay mode: republish each session message into a broker the developer runs locally, so an
// unmodified consumer on the laptop reads it from its usual topic/queue. The session message is
// acked/committed only after the local broker confirmed the publish (Kafka acks=-1 on an
// idempotent producer; RabbitMQ publisher confirm with no basic.return). Kafka relays to Kafka,
// RabbitMQ to RabbitMQ, keeping body, key/headers/properties, timestamp and (when the local
// topic has it) the partition. Not kept: the AMQP user-id (the local broker would refuse a
// foreign one) and the redelivered flag.
import { assertNever } from '../../core/providers';
import type { Provider } from '../../core/providers';
import * as amqp from 'amqplib';
import { Kafka, logLevel, Partitioners, type Producer } from 'kafkajs';
import { sendableHeaders } from '../../core/kafkaNullHeaders';
import type { ShadowMessage } from '../../core/shadowMessage';
import { kafkaLogCreator } from '../../laptop/kafka';
import { amqpConnectError, amqpReplyCode } from '../../laptop/rabbitmq';
import { SidecarError, errorChain, errorText } from '../../laptop/errors';
import type { Reporter } from '../output';
import { redactUrl } from '../../laptop/redact';
import { abortError, Outage, type AttemptResult } from './retry';
import type { Deliverer } from './types';

export interface RelayDestination {
  queue: string;
  provider: Provider;
  /** Local topic or queue. */
  name: string;
}

export interface RelayOptions {
  kafkaBrokers?: string[];
  amqpUrl?: string;
  destinations: readonly RelayDestination[];
  reporter: Reporter;
}

export class RelayDeliverer implements Deliverer {
  private producer: Producer | undefined;
  private readonly partitions = new Map<string, number>();
  private model: amqp.ChannelModel | undefined;
  private readonly channels = new Map<string, amqp.ConfirmChannel>();
  private readonly kafkaOutage: Outage;
  private readonly amqpOutage: Outage;

  constructor(private readonly options: RelayOptions) {
    const action =
      'Start your local broker (or fix --relay-kafka-brokers / --relay-amqp-url) and make sure the destination exists.';
    this.kafkaOutage = new Outage(
      options.reporter,
      'relay-down',
      `The local Kafka (${options.kafkaBrokers?.join(',') ?? '-'})`,
      action,
    );
    this.amqpOutage = new Outage(
      options.reporter,
      'relay-down',
      `The local RabbitMQ (${options.amqpUrl ? redactUrl(options.amqpUrl) : '-'})`,
      action,
    );
  }

  private destination(queue: string): RelayDestination {
    const found = this.options.destinations.find((d) => d.queue === queue);
    if (found === undefined) throw new Error(`no relay destination for queue ${queue}`);
    return found;
  }

  describe(queue: string): string {
    const d = this.destination(queue);
    switch (d.provider) {
      case 'kafka':
        return `local Kafka topic ${d.name} (${this.options.kafkaBrokers?.join(',') ?? ''})`;
      case 'rabbitmq':
        return `local RabbitMQ queue ${d.name} (${redactUrl(this.options.amqpUrl ?? '')})`;
      default:
        return assertNever(d.provider, 'provider');
    }
  }

  outage(queue: string): Outage {
    const { provider } = this.destination(queue);
    switch (provider) {
      case 'kafka':
        return this.kafkaOutage;
      case 'rabbitmq':
        return this.amqpOutage;
      default:
        return assertNever(provider, 'provider');
    }
  }

  /** Connects and checks every destination exists: a missing one is an error before consuming starts. */
  async open(): Promise<void> {
    const kafkaDestinations = this.options.destinations.filter((d) => d.provider === 'kafka');
    const amqpDestinations = this.options.destinations.filter((d) => d.provider === 'rabbitmq');
    if (kafkaDestinations.length > 0) await this.openKafka(kafkaDestinations);
    if (amqpDestinations.length > 0) await this.openAmqp(amqpDestinations);
  }

  private async openKafka(destinations: readonly RelayDestination[]): Promise<void> {
    const brokers = this.options.kafkaBrokers ?? [];
    const kafka = new Kafka({
      clientId: 'queue-split-sidecar-relay',
      brokers,
      logLevel: logLevel.WARN,
      logCreator: kafkaLogCreator((line) => this.options.reporter.log(line)),
      connectionTimeout: 5_000,
      retry: { retries: 2, initialRetryTime: 300 },
    });
    const admin = kafka.admin();
    try {
      await admin.connect();
      for (const d of destinations) {
        try {
          const meta = await admin.fetchTopicMetadata({ topics: [d.name] });
          this.partitions.set(d.name, meta.topics[0]?.partitions.length ?? 0);
        } catch (err) {
          if (errorChain(err).some((e) => (e as { type?: unknown }).type === 'UNKNOWN_TOPIC_OR_PARTITION')) {
            throw new SidecarError(
              'relay-destination-missing',
              `The local Kafka topic ${d.name} (relay destination of queue "${d.queue}") does not exist on ${brokers.join(',')}.`,
              `Create it on your local broker, or choose another in the queueSplit.delivery.relayTo setting (sidecar: --relay-to ${d.queue}=<topic>).`,
            );
          }
          throw err;
        }
      }
    } catch (err) {
      if (err instanceof SidecarError) throw err;
      throw new SidecarError(
        'broker-unreachable',
        `Cannot reach the local Kafka ${brokers.join(',')} to relay to: ${errorText(errorChain(err).at(-1))}`,
        'Start your local Kafka, or fix the queueSplit.delivery.relayKafkaBrokers setting (sidecar: --relay-kafka-brokers).',
        '--relay-kafka-brokers',
      );
    } finally {
      await admin.disconnect().catch(() => undefined);
    }
    this.producer = kafka.producer({
      idempotent: true,
      maxInFlightRequests: 1,
      allowAutoTopicCreation: false,
      createPartitioner: Partitioners.DefaultPartitioner,
      retry: { retries: 2, initialRetryTime: 300 },
    });
    await this.producer.connect();
  }

  private async openAmqp(destinations: readonly RelayDestination[]): Promise<void> {
    const url = this.options.amqpUrl ?? '';
    const display = {
      provider: 'rabbitmq' as const,
      url,
      socketOptions: {},
      display: `local RabbitMQ ${redactUrl(url)}`,
    };
    this.model = await amqp
      .connect(url, { timeout: 10_000, clientProperties: { connection_name: 'queue-split-sidecar relay' } })
      .catch((err: unknown) => {
        const failure = amqpConnectError(err, display);
        // amqpConnectError speaks of the workload's broker; this one is the developer's own.
        throw new SidecarError(
          failure.code,
          failure.message,
          failure.code === 'broker-auth'
            ? 'Fix the user and password in the queueSplit.delivery.relayAmqpUrl setting (sidecar: --relay-amqp-url).'
            : 'Start your local RabbitMQ, or fix the queueSplit.delivery.relayAmqpUrl setting (sidecar: --relay-amqp-url).',
          '--relay-amqp-url',
        );
      });
    this.model.on('error', (err: Error) =>
      this.options.reporter.log(`relay rabbitmq: connection error: ${err.message}`),
    );
    for (const d of destinations) {
      const ch = await this.model.createChannel();
      ch.on('error', () => undefined); // the 404 below closes the channel; the rejection says it
      try {
        await ch.checkQueue(d.name);
        await ch.close();
      } catch (err) {
        if (amqpReplyCode(err) === 404) {
          throw new SidecarError(
            'relay-destination-missing',
            `The local RabbitMQ queue ${d.name} (relay destination of queue "${d.queue}") does not exist on ${redactUrl(url)}.`,
            `Start your service once so it declares its queue (or declare it), or choose another in the queueSplit.delivery.relayTo setting (sidecar: --relay-to ${d.queue}=<queue>).`,
          );
        }
        throw err;
      }
    }
  }

  attempt(message: ShadowMessage, signal: AbortSignal): Promise<AttemptResult> {
    if (signal.aborted) return Promise.reject(abortError());
    const d = this.destination(message.queue);
    switch (d.provider) {
      case 'kafka':
        return this.publishKafka(d.name, message);
      case 'rabbitmq':
        return this.publishAmqp(d, message);
      default:
        return assertNever(d.provider, 'provider');
    }
  }

  private async publishKafka(topic: string, message: ShadowMessage): Promise<AttemptResult> {
    const producer = this.producer;
    const kafka = message.kafka;
    if (producer === undefined || kafka === undefined)
      return { ok: false, reason: 'the Kafka relay is not open' };
    const partitions = this.partitions.get(topic) ?? 0;
    try {
      await producer.send({
        topic,
        acks: -1,
        messages: [
          {
            key: kafka.key,
            value: message.body,
            headers: sendableHeaders(kafka.rawHeaders),
            timestamp: kafka.timestamp,
            ...(kafka.partition < partitions ? { partition: kafka.partition } : {}),
          },
        ],
      });
      return { ok: true };
    } catch (err) {
      return { ok: false, reason: errorText(errorChain(err).at(-1)) };
    }
  }

  private async channelFor(destination: RelayDestination): Promise<amqp.ConfirmChannel> {
    const existing = this.channels.get(destination.queue);
    if (existing !== undefined) return existing;
    if (this.model === undefined) {
      await this.openAmqp([destination]);
    }
    const model = this.model;
    if (model === undefined) throw new Error('no local RabbitMQ connection');
    // One confirm channel per logical queue: publishes on it are sequential, so a basic.return
    // on it belongs to the publish in flight.
    const ch = await model.createConfirmChannel();
    ch.on('error', (err: Error) =>
      this.options.reporter.log(`relay rabbitmq [${destination.queue}]: channel error: ${err.message}`),
    );
    ch.on('close', () => this.channels.delete(destination.queue));
    model.once('close', () => {
      this.channels.clear();
      if (this.model === model) this.model = undefined;
    });
    this.channels.set(destination.queue, ch);
    return ch;
  }

  private async publishAmqp(destination: RelayDestination, message: ShadowMessage): Promise<AttemptResult> {
    let ch: amqp.ConfirmChannel;
    try {
      ch = await this.channelFor(destination);
    } catch (err) {
      return { ok: false, reason: errorText(err) };
    }
    const p = message.amqp?.properties ?? {};
    const options: amqp.Options.Publish = {
      mandatory: true,
      deliveryMode: p.deliveryMode ?? 2,
      ...(p.contentType !== undefined ? { contentType: p.contentType } : {}),
      ...(p.contentEncoding !== undefined ? { contentEncoding: p.contentEncoding } : {}),
      ...(p.headers !== undefined ? { headers: p.headers } : {}),
      ...(p.priority !== undefined ? { priority: p.priority } : {}),
      ...(p.correlationId !== undefined ? { correlationId: p.correlationId } : {}),
      ...(p.replyTo !== undefined ? { replyTo: p.replyTo } : {}),
      ...(p.expiration !== undefined ? { expiration: p.expiration } : {}),
      ...(p.messageId !== undefined ? { messageId: p.messageId } : {}),
      ...(p.timestamp !== undefined ? { timestamp: p.timestamp } : {}),
      ...(p.type !== undefined ? { type: p.type } : {}),
      ...(p.appId !== undefined ? { appId: p.appId } : {}),
    };
    return new Promise<AttemptResult>((resolve) => {
      let returned = false;
      const onReturn = (): void => {
        returned = true;
      };
      const onClose = (): void => finish({ ok: false, reason: 'the local RabbitMQ channel closed' });
      const finish = (result: AttemptResult): void => {
        ch.off('return', onReturn);
        ch.off('close', onClose);
        resolve(result);
      };
      ch.on('return', onReturn);
      ch.once('close', onClose);
      try {
        ch.publish('', destination.name, message.body, options, (err: unknown) => {
          // A positive confirm also arrives for an unroutable mandatory publish: only the
          // basic.return (delivered before the confirm) says it went nowhere.
          if (err !== null && err !== undefined)
            finish({ ok: false, reason: 'the local RabbitMQ nacked the publish' });
          else if (returned)
            finish({
              ok: false,
              reason: `unroutable: local queue ${destination.name} is missing (NO_ROUTE)`,
            });
          else finish({ ok: true });
        });
      } catch (err) {
        finish({ ok: false, reason: errorText(err) });
      }
    });
  }

  async close(): Promise<void> {
    await this.producer?.disconnect().catch(() => undefined);
    await this.model?.close().catch(() => undefined);
  }
}
