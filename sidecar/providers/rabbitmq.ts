// RabbitMQ to the sidecar (sidecar/providers/contract.ts): the session queue's consumer, the
// relay into a local RabbitMQ — a publisher confirm with no basic.return, keeping body and basic
// properties (not kept: the AMQP user-id, which the local broker would refuse, and the
// redelivered flag) — and what a message adds to its CloudEvent (http delivery).
import * as amqp from 'amqplib';
import type { ShadowMessage } from '../../core/shadowMessage';
import { SidecarError, errorText, usageError } from '../../laptop/errors';
import { amqpConnectError, amqpReplyCode } from '../../laptop/rabbitmq';
import { redactUrl } from '../../laptop/redact';
import { RabbitShadowConsumer } from '../consumers/rabbitmq';
import type { AttemptResult } from '../delivery/retry';
import type { Reporter } from '../output';
import type { RelayDestination, RelayPublisher, SidecarProvider } from './contract';

class RabbitRelay implements RelayPublisher {
  private model: amqp.ChannelModel | undefined;
  private readonly channels = new Map<string, amqp.ConfirmChannel>();
  readonly subject: string;

  constructor(
    private readonly url: string | undefined,
    private readonly reporter: Reporter,
  ) {
    this.subject = `The local RabbitMQ (${url ? redactUrl(url) : '-'})`;
  }

  describe(d: RelayDestination): string {
    return `local RabbitMQ queue ${d.name} (${redactUrl(this.url ?? '')})`;
  }

  async open(destinations: readonly RelayDestination[]): Promise<void> {
    const url = this.url ?? '';
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
            ? 'Fix the user and password: the user in the queueSplit.delivery.relayAmqpUrl setting, its password with Queue Split: Set Broker Password… (sidecar: --relay-amqp-url).'
            : 'Start your local RabbitMQ, or fix the queueSplit.delivery.relayAmqpUrl setting (sidecar: --relay-amqp-url).',
          '--relay-amqp-url',
        );
      });
    this.model.on('error', (err: Error) =>
      this.reporter.log(`relay rabbitmq: connection error: ${err.message}`),
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

  private async channelFor(destination: RelayDestination): Promise<amqp.ConfirmChannel> {
    const existing = this.channels.get(destination.queue);
    if (existing !== undefined) return existing;
    if (this.model === undefined) {
      await this.open([destination]);
    }
    const model = this.model;
    if (model === undefined) throw new Error('no local RabbitMQ connection');
    // One confirm channel per logical queue: publishes on it are sequential, so a basic.return
    // on it belongs to the publish in flight.
    const ch = await model.createConfirmChannel();
    ch.on('error', (err: Error) =>
      this.reporter.log(`relay rabbitmq [${destination.queue}]: channel error: ${err.message}`),
    );
    ch.on('close', () => this.channels.delete(destination.queue));
    model.once('close', () => {
      this.channels.clear();
      if (this.model === model) this.model = undefined;
    });
    this.channels.set(destination.queue, ch);
    return ch;
  }

  async publish(destination: RelayDestination, message: ShadowMessage): Promise<AttemptResult> {
    let ch: amqp.ConfirmChannel;
    try {
      ch = await this.channelFor(destination);
    } catch (err) {
      return { ok: false, reason: errorText(err) };
    }
    const p = message.broker.provider === 'rabbitmq' ? message.broker.properties : {};
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
    await this.model?.close().catch(() => undefined);
  }
}

// ---- CloudEvents (sidecar/README.md, "CloudEvents mapping (http)"): the basic properties the
// event has no attribute for go as x-amqp-<property>; header values of the AMQP field-table
// types JavaScript has no value for, as text:
//   T timestamp   RFC 3339 UTC, seconds precision (2026-01-02T03:04:05Z), the CloudEvents
//                 Timestamp form; outside JS Date range: the seconds
//   D decimal     plain decimal text (-123.45); the 32-bit value is read signed, as RabbitMQ and
//                 the Java/pika clients write it
// (the other types are JavaScript values already: strings, numbers, booleans, bytes, tables.)

const AMQP_PROPERTY_HEADERS = [
  ['correlationId', 'x-amqp-correlation-id'],
  ['replyTo', 'x-amqp-reply-to'],
  ['type', 'x-amqp-type'],
  ['appId', 'x-amqp-app-id'],
  ['userId', 'x-amqp-user-id'],
  ['priority', 'x-amqp-priority'],
  ['contentEncoding', 'x-amqp-content-encoding'],
  ['expiration', 'x-amqp-expiration'],
] as const;

/** amqplib decodes the AMQP types JavaScript has no value for as `{'!': type, value}`. */
interface AmqpTypedValue {
  '!': string;
  value: unknown;
}

function isTyped(value: unknown): value is AmqpTypedValue {
  return typeof value === 'object' && value !== null && Object.hasOwn(value, '!');
}

/** AMQP timestamp (seconds since the epoch) as RFC 3339 UTC, seconds precision. */
export function amqpTimestampText(seconds: number): string {
  const date = new Date(seconds * 1000);
  return Number.isNaN(date.getTime()) ? String(seconds) : date.toISOString().replace(/\.\d{3}Z$/, 'Z');
}

/** AMQP decimal (scale, 32-bit value) as plain decimal text: {places: 2, digits: 12345} → 123.45. */
export function amqpDecimalText(places: number, digits: number): string {
  // amqplib reads the value unsigned; RabbitMQ and the Java/pika clients write it signed.
  const signed = digits > 0x7fffffff ? digits - 0x1_0000_0000 : digits;
  const magnitude = String(Math.abs(signed)).padStart(places + 1, '0');
  const whole = places === 0 ? magnitude : `${magnitude.slice(0, -places)}.${magnitude.slice(-places)}`;
  return signed < 0 ? `-${whole}` : whole;
}

/** The documented text of an amqplib typed value; undefined for any other value, and for a type
 * amqplib does not decode. */
export function amqpValueText(value: unknown): string | undefined {
  if (!isTyped(value)) return undefined;
  const typed = value.value;
  if (value['!'] === 'timestamp' && typeof typed === 'number') return amqpTimestampText(typed);
  if (value['!'] === 'decimal' && typeof typed === 'object' && typed !== null) {
    const { places, digits } = typed as { places?: unknown; digits?: unknown };
    if (typeof places === 'number' && typeof digits === 'number') return amqpDecimalText(places, digits);
  }
  return undefined;
}

export const rabbitSidecar: SidecarProvider<'rabbitmq'> = {
  provider: 'rabbitmq',
  consumer: ({ queue, shadow, connection, reporter, splitName, onFatal }) =>
    new RabbitShadowConsumer({
      queue,
      shadowQueue: shadow.source,
      connection,
      reporter,
      connectionName: `queue-split-sidecar ${splitName} ${queue}`,
      onFatal,
    }),
  relay: {
    flag: '--relay-amqp-url',
    arg: '<url>',
    help: 'relay: local RabbitMQ to republish RabbitMQ queues into',
    example: 'amqp://guest:guest@127.0.0.1:5672',
    check: (text) => {
      if (!/^amqps?:\/\//.test(text))
        throw usageError(
          '--relay-amqp-url',
          'is not an amqp:// or amqps:// URL.',
          'e.g. --relay-amqp-url amqp://guest:guest@127.0.0.1:5672',
        );
    },
    redact: (text, redactor) => redactor.addUrl(text),
    publisher: (text, reporter) => new RabbitRelay(text, reporter),
  },
  cloudEvents: {
    valueText: amqpValueText,
    headers: (part) =>
      AMQP_PROPERTY_HEADERS.flatMap(([property, name]): [string, string][] => {
        const value = part.properties[property];
        return value !== undefined ? [[name, String(value)]] : [];
      }),
  },
};
