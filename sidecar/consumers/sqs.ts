// Consumes an SQS session shadow (`--transport broker`). One message at a time, received with a
// hold (visibility timeout) that is extended while its delivery runs, so order is kept and no
// backlog is held. A message is deleted only after the delivery mode reports success; one the
// developer rejected is released (visibility 0) without being deleted, as the app's failed
// receive would leave it: the shadow has the source's RedrivePolicy, so after maxReceiveCount
// receives it reaches the same dead-letter queue. On stop an unfinished delivery's message is
// released for a restart or the drain. A failing receive is not fatal: the sidecar retries with
// backoff and says so; a shadow that is gone is.
import { setTimeout as sleep } from 'node:timers/promises';
import {
  ChangeMessageVisibilityCommand,
  DeleteMessageCommand,
  GetQueueAttributesCommand,
  ReceiveMessageCommand,
  type Message,
  type SQSClient,
} from '@aws-sdk/client-sqs';
import { shadowQueueName, siblingQueueUrl } from '../../core/providers/sqs/queueUrl';
import { sqsShadowMessage } from '../../core/providers/sqs/message';
import { SidecarError, errorText } from '../../laptop/errors';
import { sqsClient, sqsError, type SqsConnection } from '../../laptop/sqs';
import type { Reporter } from '../output';
import type { Delivery, DeliveryHandler, ShadowConsumer } from './types';

const HOLD_SECONDS = 60;
const RECEIVE_WAIT_SECONDS = 5;
const RETRY_MAX_MS = 30_000;

export interface SqsShadowOptions {
  queue: string;
  /** The session shadow's name as the controller recorded it. */
  shadowQueue: string;
  connection: SqsConnection;
  reporter: Reporter;
  onFatal: (err: SidecarError) => void;
}

const isMissing = (err: unknown) =>
  /QueueDoesNotExist|NonExistentQueue/.test(String((err as { name?: unknown })?.name));

export class SqsShadowConsumer implements ShadowConsumer {
  readonly queue: string;
  private readonly shadowUrl: string;
  private client: SQSClient | undefined;
  private stopping = false;
  private readonly abort = new AbortController();
  private loop: Promise<void> = Promise.resolve();

  constructor(private readonly options: SqsShadowOptions) {
    this.queue = options.queue;
    const source = options.connection.sourceUrl;
    this.shadowUrl = siblingQueueUrl(source, shadowQueueName(source, options.shadowQueue));
  }

  async start(handler: DeliveryHandler): Promise<void> {
    const client = sqsClient(this.options.connection);
    this.client = client;
    try {
      await client.send(
        new GetQueueAttributesCommand({ QueueUrl: this.shadowUrl, AttributeNames: ['QueueArn'] }),
      );
    } catch (err) {
      client.destroy();
      this.client = undefined;
      if (isMissing(err))
        throw new SidecarError(
          'shadow-missing',
          `Session shadow queue ${this.options.shadowQueue} does not exist on ${this.options.connection.display}.`,
          'The controller reported a shadow SQS does not have: check `kubectl describe queuesplit` and the controller logs.',
        );
      throw sqsError(err, this.options.connection, this.shadowUrl);
    }
    this.loop = this.run(client, handler);
  }

  private async run(client: SQSClient, handler: DeliveryHandler): Promise<void> {
    let failures = 0;
    while (!this.stopping) {
      let messages: Message[];
      try {
        const answer = await client.send(
          new ReceiveMessageCommand({
            QueueUrl: this.shadowUrl,
            MaxNumberOfMessages: 1,
            WaitTimeSeconds: RECEIVE_WAIT_SECONDS,
            VisibilityTimeout: HOLD_SECONDS,
            MessageAttributeNames: ['All'],
            MessageSystemAttributeNames: ['All'],
          }),
          { abortSignal: this.abort.signal },
        );
        messages = answer.Messages ?? [];
        failures = 0;
      } catch (err) {
        if (this.stopping) return;
        if (isMissing(err)) {
          this.options.onFatal(
            new SidecarError(
              'shadow-missing',
              `The session shadow queue ${this.options.shadowQueue} was deleted while the sidecar consumed it.`,
              'Check the split with `kubectl describe queuesplit`; start the sidecar again for a new route.',
            ),
          );
          return;
        }
        failures++;
        if (failures === 1)
          this.options.reporter.emit({
            type: 'warning',
            code: 'broker-reconnecting',
            queue: this.queue,
            message: `Cannot receive from SQS for queue "${this.queue}" (${errorText(err)}); retrying. Messages stay in the session shadow, none are lost.`,
            suggestedAction: 'Nothing to do unless this repeats; check the endpoint and your network.',
          });
        await sleep(Math.min(RETRY_MAX_MS, 500 * 2 ** Math.min(failures, 10))).catch(() => undefined);
        continue;
      }
      for (const message of messages) await this.handle(client, handler, message);
    }
  }

  private async handle(client: SQSClient, handler: DeliveryHandler, received: Message): Promise<void> {
    const receipt = received.ReceiptHandle;
    if (receipt === undefined) return;
    const message = sqsShadowMessage(this.queue, received, this.options.connection.snsEnvelope ?? 'auto');
    // Keep it invisible while the delivery runs (a debugger may hold it for long).
    const extender = setInterval(
      () => {
        client
          .send(
            new ChangeMessageVisibilityCommand({
              QueueUrl: this.shadowUrl,
              ReceiptHandle: receipt,
              VisibilityTimeout: HOLD_SECONDS,
            }),
          )
          .catch(() => undefined);
      },
      (HOLD_SECONDS * 1000) / 3,
    );
    let delivery: Delivery | undefined;
    try {
      delivery = await handler.deliver(message);
    } catch {
      delivery = undefined; // only on stop
    } finally {
      clearInterval(extender);
    }
    try {
      if (delivery?.settle === 'ack') {
        await client.send(new DeleteMessageCommand({ QueueUrl: this.shadowUrl, ReceiptHandle: receipt }));
      } else {
        // A reject, or a stop before the delivery completed: back to the shadow at once.
        await client.send(
          new ChangeMessageVisibilityCommand({
            QueueUrl: this.shadowUrl,
            ReceiptHandle: receipt,
            VisibilityTimeout: 0,
          }),
        );
      }
      if (delivery) handler.settled(message, delivery);
    } catch (err) {
      // The hold ran out or SQS did not answer: the message comes again (a duplicate, not a loss).
      this.options.reporter.log(
        `sqs ${this.queue}: ${delivery?.settle ?? 'release'} of ${message.id} failed (${errorText(err)}); it will be received again`,
      );
    }
  }

  async stop(): Promise<void> {
    if (this.stopping) return;
    this.stopping = true;
    this.abort.abort();
    await this.loop;
    this.client?.destroy();
  }
}
