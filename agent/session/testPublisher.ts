// Send Test Message on a developer's behalf (docs/design.md §8): the agent publishes into the
// real source with the workload's credentials, and only a message whose headers match the
// route's filter, so a developer can inject only messages that come back to themselves.
// Connections open on first use and stay for the agent's life.
import { randomUUID } from 'node:crypto';
import * as amqp from 'amqplib';
import type { Producer } from 'kafkajs';
import type { AgentQueuePlan } from '../../core/agentProtocol';
import { matches, type HeaderFilter } from '../../core/filter';
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

export class TestPublisher {
  private readonly kafka = new Map<string, Promise<Producer>>();
  private amqp: Promise<{ connection: amqp.ChannelModel; channel: amqp.ConfirmChannel }> | undefined;
  private amqpUrl: string | undefined;

  async publish(plan: AgentQueuePlan, filter: HeaderFilter, message: TestMessage): Promise<PublishOutcome> {
    if (!matches(filter, new Map(Object.entries(message.headers)))) {
      return {
        ok: false,
        reason: `its headers do not match your split's filter (${Object.keys(filter).join(', ') || 'none'}): a test message must come back to you`,
      };
    }
    const body = Buffer.from(message.body.buffer, message.body.byteOffset, message.body.byteLength);
    const messageId = `qs-test-${randomUUID()}`;
    try {
      if (plan.provider === 'kafka') {
        const producer = await this.kafkaProducer(plan);
        await producer.send({
          topic: plan.source,
          acks: -1,
          messages: [
            {
              value: body,
              ...(message.key !== undefined ? { key: message.key } : {}),
              headers: {
                ...message.headers,
                'message-id': messageId,
                ...(message.contentType !== undefined ? { 'content-type': message.contentType } : {}),
              },
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
    if (!this.amqp || this.amqpUrl !== amqpUrl) {
      this.amqpUrl = amqpUrl;
      this.amqp = (async () => {
        const connection = await amqp.connect(amqpUrl, {
          clientProperties: { connection_name: 'queue-split test messages' },
        });
        connection.on('error', () => undefined);
        connection.on('close', () => (this.amqp = undefined));
        const channel = await connection.createConfirmChannel();
        channel.on('error', () => undefined);
        return { connection, channel };
      })();
      this.amqp.catch(() => (this.amqp = undefined));
    }
    const { channel } = await this.amqp;
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
    const a = this.amqp;
    this.amqp = undefined;
    await a?.then((x) => x.connection.close()).catch(() => undefined);
  }
}
