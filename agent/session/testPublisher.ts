// Send Test Message on a developer's behalf (docs/design.md §8): the agent publishes into the
// real source with the workload's credentials, and only a message whose headers match the
// route's filter, so a developer can inject only messages that come back to themselves. The
// filter is checked against the message as it will be published (the agent sets the message id
// and content type itself; on Kafka they are headers the engine routes on), never against what
// the client asked for. Connections open on first use, one per broker URL, and stay for the
// agent's life.
import { randomUUID } from 'node:crypto';
import * as amqp from 'amqplib';
import type { Producer } from 'kafkajs';
import type { AgentQueuePlan } from '../../core/agentProtocol';
import { amqpHeaders, kafkaHeaders, matches, type HeaderFilter } from '../../core/filter';
import { kafkaClient } from '../kafka/clients';
import { defaultTiming } from '../kafka/config';
import { kafkaConnection, rabbitUrls } from '../queueAgent/connections';

export interface TestMessage {
  queue: string;
  headers: Record<string, string>;
  body: Uint8Array;
  contentType?: string;
  key?: string;
}

/** A published test message carries this id (Kafka: the `message-id` header; AMQP: message-id). */
export type PublishOutcome = { ok: true; messageId: string } | { ok: false; reason: string };

type AmqpPublishing = { connection: amqp.ChannelModel; channel: amqp.ConfirmChannel };

/** The Kafka headers of a test message as published: the agent's own keys win. */
function kafkaTestHeaders(message: TestMessage, messageId: string): Record<string, string> {
  return {
    ...message.headers,
    'message-id': messageId,
    ...(message.contentType !== undefined ? { 'content-type': message.contentType } : {}),
  };
}

/** Keys of the filter the published message lacks or carries with another value (no values: they may be secret). */
function unmatchedKeys(filter: HeaderFilter, published: ReadonlyMap<string, string>): string[] {
  return Object.keys(filter).filter((key) => published.get(key) !== filter[key]);
}

export class TestPublisher {
  private readonly kafka = new Map<string, Promise<Producer>>();
  private readonly amqp = new Map<string, Promise<AmqpPublishing>>();

  async publish(plan: AgentQueuePlan, filter: HeaderFilter, message: TestMessage): Promise<PublishOutcome> {
    const body = Buffer.from(message.body.buffer, message.body.byteOffset, message.body.byteLength);
    const messageId = `qs-test-${randomUUID()}`;
    const kafkaHeadersOut = plan.provider === 'kafka' ? kafkaTestHeaders(message, messageId) : undefined;
    // What the engine will read: Kafka routes on every header; AMQP on the headers table alone.
    const published = kafkaHeadersOut ? kafkaHeaders(kafkaHeadersOut) : amqpHeaders(message.headers);
    if (!matches(filter, published)) {
      const unmatched = unmatchedKeys(filter, published);
      const own = unmatched.filter((k) => kafkaHeadersOut && (k === 'message-id' || k === 'content-type'));
      return {
        ok: false,
        reason:
          own.length > 0
            ? `your split's filter is on ${own.join(', ')}, which the agent sets on every test message itself (message-id: a new qs-test-… id; content-type: the one you chose), so no test message can match it: a test message must come back to you`
            : `its headers do not match your split's filter (${unmatched.join(', ')}): a test message must come back to you`,
      };
    }
    try {
      if (kafkaHeadersOut) {
        const producer = await this.kafkaProducer(plan);
        await producer.send({
          topic: plan.source,
          acks: -1,
          messages: [
            {
              value: body,
              ...(message.key !== undefined ? { key: message.key } : {}),
              headers: kafkaHeadersOut,
            },
          ],
        });
      } else {
        await this.publishAmqp(plan, body, message, messageId);
      }
      return { ok: true, messageId };
    } catch (err) {
      return {
        ok: false,
        reason: `the broker refused it: ${err instanceof Error ? err.message : String(err)}`,
      };
    }
  }

  private kafkaProducer(plan: AgentQueuePlan): Promise<Producer> {
    let producer = this.kafka.get(plan.name);
    if (!producer) {
      producer = (async () => {
        const p = kafkaClient(kafkaConnection(plan), `queue-split-test-${plan.name}`, defaultTiming).producer(
          {
            allowAutoTopicCreation: false,
          },
        );
        await p.connect();
        return p;
      })();
      producer.catch(() => this.kafka.delete(plan.name));
      this.kafka.set(plan.name, producer);
    }
    return producer;
  }

  private async publishAmqp(
    plan: AgentQueuePlan,
    body: Buffer,
    message: TestMessage,
    messageId: string,
  ): Promise<void> {
    const { amqpUrl } = rabbitUrls(plan);
    let publishing = this.amqp.get(amqpUrl);
    if (!publishing) {
      publishing = (async () => {
        const connection = await amqp.connect(amqpUrl, {
          clientProperties: { connection_name: 'queue-split test messages' },
        });
        connection.on('error', () => undefined);
        connection.on('close', () => {
          if (this.amqp.get(amqpUrl) === publishing) this.amqp.delete(amqpUrl);
        });
        const channel = await connection.createConfirmChannel();
        channel.on('error', () => undefined);
        return { connection, channel };
      })();
      const mine = publishing;
      mine.catch(() => {
        if (this.amqp.get(amqpUrl) === mine) this.amqp.delete(amqpUrl);
      });
      this.amqp.set(amqpUrl, publishing);
    }
    const { channel } = await publishing;
    // A positive confirm arrives for an unroutable mandatory publish too; only basic.return says
    // so (BROKER-FACTS), and it carries the message id.
    let returned = false;
    const onReturn = (m: amqp.Message) => {
      if (m.properties.messageId === messageId) returned = true;
    };
    channel.on('return', onReturn);
    try {
      await new Promise<void>((resolve, reject) =>
        channel.sendToQueue(
          plan.source,
          body,
          {
            persistent: true,
            mandatory: true,
            messageId,
            headers: message.headers,
            ...(message.contentType !== undefined ? { contentType: message.contentType } : {}),
          },
          (err) => (err ? reject(err instanceof Error ? err : new Error(String(err))) : resolve()),
        ),
      );
    } finally {
      channel.off('return', onReturn);
    }
    if (returned) throw new Error(`queue ${plan.source} does not exist (NO_ROUTE)`);
  }

  async close(): Promise<void> {
    const producers = [...this.kafka.values()];
    this.kafka.clear();
    await Promise.all(producers.map((p) => p.then((x) => x.disconnect()).catch(() => undefined)));
    const connections = [...this.amqp.values()];
    this.amqp.clear();
    await Promise.all(connections.map((c) => c.then((x) => x.connection.close()).catch(() => undefined)));
  }
}
