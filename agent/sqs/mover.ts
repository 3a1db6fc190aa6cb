// Moves every visible message of one queue to another (a route drain, the handback, the
// rollback): receive, send each copy (body, attributes and trace header as received), then
// delete the originals. A crash between send and delete leaves the original to move again: a
// duplicate in the target only (standard queues have no deduplication; docs/providers/sqs.md).
import {
  DeleteMessageBatchCommand,
  ReceiveMessageCommand,
  SendMessageCommand,
  type SQSClient,
} from '@aws-sdk/client-sqs';
import { copyOf, RECEIVE_ALL } from './messages';

export interface MoveOptions {
  readonly client: SQSClient;
  readonly from: string;
  readonly to: string;
  readonly visibilitySeconds: number;
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
      await o.client.send(new SendMessageCommand({ QueueUrl: o.to, ...copyOf(m) }));
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
