// The environment's SQS (ElasticMQ, test/env/elasticmq.ts) as the suites use it: one client, and
// queues made for one test and deleted after.
import {
  CreateQueueCommand,
  DeleteQueueCommand,
  GetQueueAttributesCommand,
  ReceiveMessageCommand,
  SQSClient,
  type Message,
  type QueueAttributeName,
} from '@aws-sdk/client-sqs';
import { loadServices, uniqueName } from './services';

/** ElasticMQ takes any credentials; these are placeholders. */
export const sqsTestCredentials = { accessKeyId: 'queuesplit-test', secretAccessKey: 'queuesplit-test' };

/** A client of the environment's SQS. */
export function sqsClient(): SQSClient {
  const { endpoint, region } = loadServices().sqs;
  return new SQSClient({ endpoint, region, credentials: sqsTestCredentials });
}

export class SqsQueues {
  private readonly urls: string[] = [];

  constructor(readonly client: SQSClient) {}

  /** A queue no earlier run used (FIFO names end in `.fifo`, as SQS requires). */
  async create(
    prefix: string,
    attributes: Partial<Record<QueueAttributeName, string>> = {},
  ): Promise<string> {
    const fifo = attributes.FifoQueue === 'true';
    const name = `${uniqueName(prefix)}${fifo ? '.fifo' : ''}`;
    const { QueueUrl } = await this.client.send(
      new CreateQueueCommand({ QueueName: name, Attributes: attributes }),
    );
    if (!QueueUrl) throw new Error(`CreateQueue ${name} answered no QueueUrl`);
    this.urls.push(QueueUrl);
    return QueueUrl;
  }

  async arn(url: string): Promise<string> {
    const arn = (await this.attributes(url, ['QueueArn'])).QueueArn;
    if (!arn) throw new Error(`${url} has no QueueArn`);
    return arn;
  }

  async attributes(url: string, names: QueueAttributeName[] = ['All']): Promise<Record<string, string>> {
    const { Attributes } = await this.client.send(
      new GetQueueAttributesCommand({ QueueUrl: url, AttributeNames: names }),
    );
    return Attributes ?? {};
  }

  /**
   * One receive with every attribute: up to `max` messages, hidden for `visibility` seconds when
   * given (else the queue's timeout), waiting up to `waitSeconds` for one to arrive.
   */
  async receive(
    url: string,
    {
      max = 10,
      visibility,
      waitSeconds = 1,
    }: { max?: number; visibility?: number; waitSeconds?: number } = {},
  ): Promise<Message[]> {
    const { Messages } = await this.client.send(
      new ReceiveMessageCommand({
        QueueUrl: url,
        MaxNumberOfMessages: max,
        MessageAttributeNames: ['All'],
        MessageSystemAttributeNames: ['All'],
        VisibilityTimeout: visibility,
        WaitTimeSeconds: waitSeconds,
      }),
    );
    return Messages ?? [];
  }

  async deleteAll(): Promise<void> {
    for (const url of this.urls.splice(0)) await this.client.send(new DeleteQueueCommand({ QueueUrl: url }));
  }
}
