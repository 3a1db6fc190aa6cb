// Amazon SQS for the queue-agent: the engine of a queue from its desired plan (the connection
// from the agent pod's env: ./connection.ts), a reader of a route's session shadow, and the
// test-message sender (docs/providers/sqs.md).
import { SendMessageCommand, SQSClient, type MessageAttributeValue } from '@aws-sdk/client-sqs';
import type { MessageHeaders } from '../../core/filter';
import { sqsFilterHeaders } from '../../core/providers/sqs/headers';
import type { SqsQueuePlan } from '../../core/providers/sqs/plan';
import { shadowQueueName, siblingQueueUrl } from '../../core/providers/sqs/queueUrl';
import { SQS_COUNTS_LAG, SQS_LOCK_TIMEOUT } from '../../core/providers/sqs/settings';
import type { AgentProvider, TestMessage, TestMessageSender } from '../providers/contract';
import { EngineConfigError } from '../providers/podEnv';
import { defaultTiming } from './config';
import { clientOptions, sqsConnection } from './connection';
import { SqsEngine } from './engine';
import { SqsSessionReader } from './sessionReader';

const countsLagMs = (settings: Readonly<Record<string, number>>) =>
  (settings[SQS_COUNTS_LAG.flag] ?? SQS_COUNTS_LAG.default) * 1000;
const lockSeconds = (settings: Readonly<Record<string, number>>) =>
  settings[SQS_LOCK_TIMEOUT.flag] ?? SQS_LOCK_TIMEOUT.default;

export const sqsAgent: AgentProvider<'sqs'> = {
  engine(activationId, plan, logger, settings) {
    const connection = sqsConnection(plan);
    if (!plan.names.lockQueue)
      throw new EngineConfigError(`queue ${plan.name}: the plan has no lock queue name`);
    return new SqsEngine(
      {
        activationId,
        epoch: plan.epoch,
        ...connection,
        sourceQueueUrl: plan.source,
        appShadow: plan.names.appShadow,
        lockQueue: plan.names.lockQueue,
        snsEnvelope: plan.snsEnvelope ?? 'auto',
        fifoSuffix: true,
        timing: { countsLagMs: countsLagMs(settings), lockVisibilitySeconds: lockSeconds(settings) },
      },
      { logger },
    );
  },

  sessionReader(plan, _route, shadow) {
    return new SqsSessionReader({
      queue: plan.name,
      shadowUrl: siblingQueueUrl(plan.source, shadowQueueName(plan.source, shadow.shadow)),
      client: new SQSClient(clientOptions(sqsConnection(plan))),
      ownsClient: true,
      // The reader's proof of an earlier stream's answers waits the counts' lag AWS documents.
      countsLagMs: defaultTiming.countsLagMs,
      snsEnvelope: plan.snsEnvelope ?? 'auto',
    });
  },

  testMessages: () => new SqsTestMessages(),
};

/** The message attributes of a test message: its headers as String attributes (SQS refuses an
 * empty value: such a header is left out) and the agent's message id. */
function testAttributes(message: TestMessage, messageId: string): Record<string, MessageAttributeValue> {
  const attributes: Record<string, MessageAttributeValue> = {};
  for (const [name, value] of Object.entries(message.headers))
    if (value !== '') attributes[name] = { DataType: 'String', StringValue: value };
  attributes['message-id'] = { DataType: 'String', StringValue: messageId };
  if (message.contentType !== undefined && message.contentType !== '')
    attributes['content-type'] = { DataType: 'String', StringValue: message.contentType };
  return attributes;
}

/** An SQS body is text of at least one character (docs/providers/sqs.md fact 2). */
function bodyText(body: Buffer, queue: string): string {
  const text = body.toString('utf8');
  if (text === '' || !Buffer.from(text, 'utf8').equals(body))
    throw new Error(
      `queue ${queue}: an SQS message body is text of at least one character; this body is empty or not UTF-8`,
    );
  return text;
}

/** One client per connection, made on first use and kept for the agent's life. */
class SqsTestMessages implements TestMessageSender<'sqs'> {
  private readonly clients = new Map<string, SQSClient>();

  published(
    message: TestMessage,
    messageId: string,
  ): { headers: MessageHeaders; ownKeys: readonly string[] } {
    const attributes = testAttributes(message, messageId);
    // The engine routes on the attributes as sent; the body is no SNS envelope of ours.
    return {
      headers: sqsFilterHeaders(attributes, undefined, 'off'),
      ownKeys: ['message-id', 'content-type'],
    };
  }

  async send(plan: SqsQueuePlan, body: Buffer, message: TestMessage, messageId: string): Promise<void> {
    const fifo = plan.source
      .replace(/[?#].*$/, '')
      .replace(/\/+$/, '')
      .endsWith('.fifo');
    await this.client(plan).send(
      new SendMessageCommand({
        QueueUrl: plan.source,
        MessageBody: bodyText(body, plan.name),
        MessageAttributes: testAttributes(message, messageId),
        // FIFO: the key (else the message) is the group; the agent's message id deduplicates a retry.
        ...(fifo ? { MessageGroupId: message.key || messageId, MessageDeduplicationId: messageId } : {}),
      }),
    );
  }

  private client(plan: SqsQueuePlan): SQSClient {
    const connection = sqsConnection(plan);
    // Keyed without the credentials' values: by the env vars that hold them.
    const key = JSON.stringify([connection.region, connection.endpoint ?? '', plan.env]);
    let client = this.clients.get(key);
    if (!client) {
      client = new SQSClient(clientOptions(connection));
      this.clients.set(key, client);
    }
    return client;
  }

  close(): Promise<void> {
    for (const client of this.clients.values()) client.destroy();
    this.clients.clear();
    return Promise.resolve();
  }
}
