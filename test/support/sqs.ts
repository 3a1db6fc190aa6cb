// The environment's SQS (ElasticMQ, test/env/elasticmq.ts) as the suites use it: one client, and
// queues made for one test and deleted after.
import {
  CreateQueueCommand,
  DeleteQueueCommand,
  GetQueueAttributesCommand,
  DeleteMessageCommand,
  ReceiveMessageCommand,
  SendMessageCommand,
  SQSClient,
  type Message,
  type QueueAttributeName,
} from '@aws-sdk/client-sqs';
import { messageBody, messageHeaders } from './secrets';
import { loadServices, uniqueName, type Services } from './services';

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

/** ElasticMQ's one account: queue URLs are `<endpoint>/<account>/<name>`. */
const ACCOUNT = '000000000000';

/** Queue `name` as the tests (on the host) and the pods (through the gateway) name it. */
export interface SqsQueueUrls {
  name: string;
  hostUrl: string;
  podUrl: string;
}

export function sqsQueueUrls(sqs: Services['sqs'], name: string): SqsQueueUrls {
  return {
    name,
    hostUrl: `${sqs.endpoint}/${ACCOUNT}/${name}`,
    podUrl: `${sqs.podEndpoint}/${ACCOUNT}/${name}`,
  };
}

/** Sends each id as a message the fixture app records: its `message-id` attribute, the split
 * header when `user` is set, and the secret markers (test/support/secrets.ts). */
export async function sendSqsIds(
  client: SQSClient,
  url: string,
  ids: readonly string[],
  user?: string,
): Promise<void> {
  for (const id of ids) {
    const attributes = { ...messageHeaders(user), 'message-id': id };
    await client.send(
      new SendMessageCommand({
        QueueUrl: url,
        MessageBody: messageBody(id),
        MessageAttributes: Object.fromEntries(
          Object.entries(attributes).map(([k, v]) => [k, { DataType: 'String', StringValue: v }]),
        ),
      }),
    );
  }
}

/** A developer's consumer of an SQS queue: records each message's id in `sink`, then deletes it.
 * The returned function stops it (what it has not deleted comes back after its visibility). */
export function consumeSqsIds(client: SQSClient, url: string, sink: string[]): () => Promise<void> {
  const abort = new AbortController();
  const done = (async () => {
    while (!abort.signal.aborted) {
      let messages: Message[] = [];
      try {
        ({ Messages: messages = [] } = await client.send(
          new ReceiveMessageCommand({
            QueueUrl: url,
            MaxNumberOfMessages: 10,
            WaitTimeSeconds: 2,
            MessageAttributeNames: ['All'],
          }),
          { abortSignal: abort.signal },
        ));
      } catch {
        if (abort.signal.aborted) return;
        await new Promise((r) => setTimeout(r, 500)); // the session queue may not exist yet
        continue;
      }
      for (const m of messages) {
        sink.push(m.MessageAttributes?.['message-id']?.StringValue ?? m.MessageId ?? '');
        await client.send(new DeleteMessageCommand({ QueueUrl: url, ReceiptHandle: m.ReceiptHandle }));
      }
    }
  })();
  return async () => {
    abort.abort();
    await done;
  };
}
