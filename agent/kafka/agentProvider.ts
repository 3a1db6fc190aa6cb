// Kafka for the queue-agent: the engine of a queue from its desired plan, its connection from the
// agent pod's env, a reader of a route's session topic, and the test-message producer.
import type { Producer, SASLOptions } from 'kafkajs';
import type { KafkaQueuePlan } from '../../core/providers/kafka/plan';
import { kafkaHeaders } from '../../core/providers/kafka/message';
import { caFilePath } from '../../core/tlsMount';
import type { AgentProvider, TestMessage, TestMessageSender } from '../providers/contract';
import { EngineConfigError, envValue, readCa } from '../providers/podEnv';
import { kafkaClient } from './clients';
import { defaultTiming, type KafkaConnection } from './config';
import { KafkaEngine } from './engine';
import { KafkaSessionReader } from './sessionReader';

export const kafkaAgent: AgentProvider<'kafka'> = {
  engine(activationId, plan, logger) {
    const { appShadowGroup, splitterGroup, transactionalId } = plan.names;
    if (!plan.group || !appShadowGroup || !splitterGroup || !transactionalId) {
      throw new EngineConfigError(`queue ${plan.name}: the plan lacks the Kafka group or resource names`);
    }
    return new KafkaEngine(
      {
        activationId,
        epoch: plan.epoch,
        connection: kafkaConnection(plan),
        sourceTopic: plan.source,
        appGroup: plan.group,
        offsetReset: plan.offsetReset ?? 'earliest',
        isolationLevel: plan.isolationLevel ?? 'read_committed',
        appShadow: plan.names.appShadow,
        appShadowGroup,
        splitterGroup,
        transactionalId,
        clientLabel: plan.name,
      },
      { logger },
    );
  },

  sessionReader(plan, route, shadow) {
    if (!shadow.sessionGroup)
      throw new Error(`route ${route.routeId} has no session group for queue ${plan.name}`);
    return new KafkaSessionReader({
      queue: plan.name,
      connection: kafkaConnection(plan),
      topic: shadow.shadow,
      group: shadow.sessionGroup,
    });
  },

  testMessages: () => new KafkaTestMessages(),
};

export function kafkaConnection(plan: KafkaQueuePlan): KafkaConnection {
  const brokers = envValue(plan.env.brokers, 'brokers', plan.name);
  const credentials = sasl(plan);
  const caFile = caFilePath(plan.tls);
  return {
    brokers: brokers
      .split(',')
      .map((b) => b.trim())
      .filter(Boolean),
    // A private CA is the Secret key the controller mounted (core/tlsMount.ts); without one
    // the system CAs are trusted.
    ...(plan.tls ? { ssl: caFile ? { ca: readCa(caFile, plan.name) } : true } : {}),
    ...(credentials ? { sasl: credentials } : {}),
  };
}

function sasl(plan: KafkaQueuePlan): SASLOptions | undefined {
  if (!plan.saslMechanism) return undefined;
  const username = process.env[plan.env.username ?? ''];
  const password = process.env[plan.env.password ?? ''];
  if (!username || !password) {
    throw new EngineConfigError(
      `queue ${plan.name}: SASL ${plan.saslMechanism} needs its username and password env vars`,
    );
  }
  const mechanism = plan.saslMechanism.toLowerCase();
  if (mechanism === 'plain') return { mechanism: 'plain', username, password };
  if (mechanism === 'scram-sha-256') return { mechanism: 'scram-sha-256', username, password };
  return { mechanism: 'scram-sha-512', username, password };
}

/** The Kafka headers of a test message as published: the agent's own keys win. */
function testHeaders(message: TestMessage, messageId: string): Record<string, string> {
  return {
    ...message.headers,
    'message-id': messageId,
    ...(message.contentType !== undefined ? { 'content-type': message.contentType } : {}),
  };
}

/** One producer per queue, opened on first use and kept for the agent's life. */
class KafkaTestMessages implements TestMessageSender<'kafka'> {
  private readonly producers = new Map<string, Promise<Producer>>();

  published(message: TestMessage, messageId: string) {
    // The engine routes on every header, the agent's own included.
    return {
      headers: kafkaHeaders(testHeaders(message, messageId)),
      ownKeys: ['message-id', 'content-type'],
    };
  }

  async send(plan: KafkaQueuePlan, body: Buffer, message: TestMessage, messageId: string): Promise<void> {
    const producer = await this.producer(plan);
    await producer.send({
      topic: plan.source,
      acks: -1,
      messages: [
        {
          value: body,
          ...(message.key !== undefined ? { key: message.key } : {}),
          headers: testHeaders(message, messageId),
        },
      ],
    });
  }

  private producer(plan: KafkaQueuePlan): Promise<Producer> {
    let producer = this.producers.get(plan.name);
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
      producer.catch(() => this.producers.delete(plan.name));
      this.producers.set(plan.name, producer);
    }
    return producer;
  }

  async close(): Promise<void> {
    const producers = [...this.producers.values()];
    this.producers.clear();
    await Promise.all(producers.map((p) => p.then((x) => x.disconnect()).catch(() => undefined)));
  }
}
