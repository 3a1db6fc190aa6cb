// Moves every visible message of one queue to another (a route drain, the handback, the
// rollback): receive, send each copy (body, attributes and trace header as received), then
// delete the originals. A crash between send and delete leaves the original to move again: a
// duplicate in the target only on standard queues; FIFO moves carry deduplication ids derived
// from the moved message's id, so a retried move within 5 minutes is dropped
// (docs/providers/sqs.md "Handback moves residue with new deduplication ids").
import {
  DeleteMessageBatchCommand,
  ReceiveMessageCommand,
  SendMessageCommand,
  type Message,
  type SQSClient,
} from '@aws-sdk/client-sqs';
import { copyOf, RECEIVE_ALL } from './messages';

export interface MoveOptions {
  readonly client: SQSClient;
  readonly from: string;
  readonly to: string;
  readonly visibilitySeconds: number;
  /** FIFO: each moved message's deduplication id (its group is kept). */
  readonly dedupId?: (message: Message) => string;
  /** Checked before every send and delete: a lost fence stops the move. */
  fenceHeld(): boolean;
  /** Called once per message moved (sent and deleted). */
  onMoved(): void;
}

/** Moves until a receive finds nothing visible; false when the fence was lost midway. */
export async function moveAll(o: MoveOptions): Promise<boolean> {
  for (;;) {
    if (!o.fenceHeld()) return false;
    const { Messages = [] } = await o.client.send(
      new ReceiveMessageCommand({
        QueueUrl: o.from,
        MaxNumberOfMessages: 10,
        WaitTimeSeconds: 0,
        VisibilityTimeout: o.visibilitySeconds,
        ...RECEIVE_ALL,
      }),
    );
    if (Messages.length === 0) return true;
    for (const m of Messages) {
      if (!o.fenceHeld()) return false;
      // One at a time, in the order received: a FIFO group's messages keep their order.
      await o.client.send(new SendMessageCommand({ QueueUrl: o.to, ...copyOf(m, o.dedupId?.(m)) }));
    }
    if (!o.fenceHeld()) return false;
    const answer = await o.client.send(
      new DeleteMessageBatchCommand({
        QueueUrl: o.from,
        Entries: Messages.map((m, i) => ({ Id: String(i), ReceiptHandle: m.ReceiptHandle })),
      }),
    );
    for (let i = 0; i < (answer.Successful ?? []).length; i++) o.onMoved();
  }
}
