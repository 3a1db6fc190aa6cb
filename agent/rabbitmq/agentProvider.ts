// RabbitMQ for the queue-agent: the engine of a queue from its desired plan, its URLs from the
// agent pod's env, a reader of a route's session queue, and the test-message publisher.
import * as amqp from 'amqplib';
import type { RabbitQueuePlan } from '../../core/providers/rabbitmq/plan';
import { amqpHeaders } from '../../core/providers/rabbitmq/message';
import {
  plainHttpManagement,
  plainHttpManagementError,
} from '../../core/providers/rabbitmq/managementTransport';
import { formatFieldError } from '../../core/result';
import { RABBIT_STATISTICS_INTERVAL as STATISTICS_INTERVAL } from '../../core/providers/rabbitmq/settings';
import type { AgentProvider, TestMessage, TestMessageSender } from '../providers/contract';
import { EngineConfigError, envValue, withCredentials } from '../providers/podEnv';
import { statisticsTiming } from './config';
import { RabbitEngine } from './engine';
import { RabbitSessionReader } from './sessionReader';

export const rabbitAgent: AgentProvider<'rabbitmq'> = {
  engine(activationId, plan, logger, settings) {
    const { amqpUrl, managementUrl } = rabbitUrls(plan);
    if (!plan.names.lockQueue)
      throw new EngineConfigError(`queue ${plan.name}: the plan has no lock queue name`);
    const interval = settings[STATISTICS_INTERVAL.flag];
    return new RabbitEngine(
      {
        activationId,
        epoch: plan.epoch,
        amqpUrl,
        managementUrl,
        sourceQueue: plan.source,
        appShadow: plan.names.appShadow,
        lockQueue: plan.names.lockQueue,
        connectionLabel: plan.name,
        ...(interval !== undefined ? { timing: statisticsTiming(interval) } : {}),
      },
      { logger },
    );
  },

  sessionReader(plan, _route, shadow) {
    return new RabbitSessionReader({
      queue: plan.name,
      amqpUrl: rabbitUrls(plan).amqpUrl,
      shadow: shadow.shadow,
    });
  },

  testMessages: () => new RabbitTestMessages(),
};

export interface RabbitUrls {
  amqpUrl: string;
  managementUrl: string;
}

export function rabbitUrls(plan: RabbitQueuePlan): RabbitUrls {
  const amqpUrl = withCredentials(envValue(plan.env.url, 'AMQP URL', plan.name), plan);
  const managementUrl = envValue(plan.env.managementUrl, 'management URL', plan.name);
  if (!plan.allowPlainHttpManagement && plainHttpManagement({ amqpUrl, managementUrl, tls: !!plan.tls })) {
    // The same rule as the controller's config check, on the values a Secret may have hidden from it.
    throw new EngineConfigError(
      `queue ${plan.name}: ${formatFieldError(plainHttpManagementError('rabbitmq', plan.env.url!, plan.env.managementUrl!))}`,
    );
  }
  return { amqpUrl, managementUrl };
}

type Publishing = { connection: amqp.ChannelModel; channel: amqp.ConfirmChannel };

/** One confirm channel per broker URL, opened on first use and kept for the agent's life. */
class RabbitTestMessages implements TestMessageSender<'rabbitmq'> {
  private readonly channels = new Map<string, Promise<Publishing>>();

  published(message: TestMessage) {
    // The engine routes on the headers table alone; the message id is a property.
    return { headers: amqpHeaders(message.headers), ownKeys: [] };
  }

  async send(plan: RabbitQueuePlan, body: Buffer, message: TestMessage, messageId: string): Promise<void> {
    const { channel } = await this.publishing(rabbitUrls(plan).amqpUrl);
    // A positive confirm arrives for an unroutable mandatory publish too; only basic.return says
    // so (docs/design.md §7), and it carries the message id.
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

  private publishing(amqpUrl: string): Promise<Publishing> {
    let publishing = this.channels.get(amqpUrl);
    if (!publishing) {
      publishing = (async () => {
        const connection = await amqp.connect(amqpUrl, {
          clientProperties: { connection_name: 'queue-split test messages' },
        });
        connection.on('error', () => undefined);
        connection.on('close', () => {
          if (this.channels.get(amqpUrl) === publishing) this.channels.delete(amqpUrl);
        });
        const channel = await connection.createConfirmChannel();
        channel.on('error', () => undefined);
        return { connection, channel };
      })();
      const mine = publishing;
      mine.catch(() => {
        if (this.channels.get(amqpUrl) === mine) this.channels.delete(amqpUrl);
      });
      this.channels.set(amqpUrl, publishing);
    }
    return publishing;
  }

  async close(): Promise<void> {
    const connections = [...this.channels.values()];
    this.channels.clear();
    await Promise.all(connections.map((c) => c.then((x) => x.connection.close()).catch(() => undefined)));
  }
}
