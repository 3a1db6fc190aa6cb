// The fence (docs/providers/sqs.md "The fence: a lock message held in flight"): one message in
// the activation's lock queue. The holder receives it and keeps it in flight by extending its
// visibility well before each timeout; a successor can receive it only once the holder stopped
// extending and the timeout passed. A holder whose last successful extension is older than the
// timeout's safe part has lost the fence: it stops before any step or copy that deletes, moves or
// sends, and tries to win the lock back (it gets it only if nobody else took it).
import {
  ChangeMessageVisibilityCommand,
  CreateQueueCommand,
  GetQueueAttributesCommand,
  ReceiveMessageCommand,
  SendMessageCommand,
  type SQSClient,
} from '@aws-sdk/client-sqs';
import { sleep } from '../engine/timing';
import type { Logger } from '../log';
import { describeSqsError, isNetworkError, isQueueMissing } from './errors';

/** The longest retention SQS allows: the lock message must outlive the split (14 days). */
const LOCK_RETENTION_SECONDS = 1_209_600;

export interface FenceOptions {
  readonly client: SQSClient;
  readonly lockQueue: string;
  readonly lockUrl: string;
  readonly activationId: string;
  readonly epoch: number;
  readonly visibilitySeconds: number;
  readonly log: Logger;
  onReachable(reachable: boolean): void;
  /** The fence was lost (its lease ran out) or won back. */
  onChange(held: boolean): void;
}

export type Acquired = { kind: 'held' } | { kind: 'taken'; reason: string } | { kind: 'missing' };

export class LockFence {
  private receipt: string | undefined;
  /** When the last extension (or the receive) succeeded: the lease runs from there. */
  private leaseFrom = 0;
  private keeper: NodeJS.Timeout | undefined;
  private lostAt: string | undefined;
  private wanted = false;
  private closed = false;

  constructor(private readonly o: FenceOptions) {}

  /** Held, and the lease is younger than half the lock's timeout: safe to act. */
  get held(): boolean {
    return this.receipt !== undefined && Date.now() - this.leaseFrom < this.safeMs;
  }

  /** Why this engine does not hold the fence it wants, and since when. */
  get lost(): { reason: string; since: string } | undefined {
    if (!this.wanted || this.held || !this.lostAt) return undefined;
    return {
      reason: `the lock message in ${this.o.lockQueue} is held by another queue-agent (or this one could not extend it in time)`,
      since: this.lostAt,
    };
  }

  private get safeMs(): number {
    return (this.o.visibilitySeconds * 1000) / 2;
  }

  /** Creates the lock queue and its one lock message, unless a lock message exists already
   * (a repeated prepare of this activation). Only the first prepare of an activation seeds. */
  async seed(): Promise<void> {
    await this.o.client.send(
      new CreateQueueCommand({
        QueueName: this.o.lockQueue,
        Attributes: {
          VisibilityTimeout: String(this.o.visibilitySeconds),
          MessageRetentionPeriod: String(LOCK_RETENTION_SECONDS),
        },
      }),
    );
    if ((await this.acquire(1_000)).kind === 'held') return;
    const { Attributes: a = {} } = await this.o.client.send(
      new GetQueueAttributesCommand({
        QueueUrl: this.o.lockUrl,
        AttributeNames: ['ApproximateNumberOfMessages', 'ApproximateNumberOfMessagesNotVisible'],
      }),
    );
    if (Number(a.ApproximateNumberOfMessages ?? 0) + Number(a.ApproximateNumberOfMessagesNotVisible ?? 0) > 0)
      return; // someone holds it: acquire says so
    await this.o.client.send(
      new SendMessageCommand({
        QueueUrl: this.o.lockUrl,
        MessageBody: JSON.stringify({ lock: this.o.lockQueue, activation: this.o.activationId }),
      }),
    );
  }

  /** Receives the lock message, waiting up to `waitMs` for it to become visible. */
  async acquire(waitMs: number): Promise<Acquired> {
    this.wanted = true;
    if (this.held) return { kind: 'held' };
    const deadline = Date.now() + waitMs;
    for (;;) {
      const left = deadline - Date.now();
      const started = Date.now();
      try {
        const { Messages } = await this.o.client.send(
          new ReceiveMessageCommand({
            QueueUrl: this.o.lockUrl,
            MaxNumberOfMessages: 1,
            VisibilityTimeout: this.o.visibilitySeconds,
            WaitTimeSeconds: Math.max(0, Math.min(20, Math.floor(left / 1000))),
          }),
        );
        this.o.onReachable(true);
        const lock = Messages?.[0];
        if (lock?.ReceiptHandle) {
          this.receipt = lock.ReceiptHandle;
          this.leaseFrom = started;
          this.lostAt = undefined;
          this.startKeeper();
          this.o.log.info('fence.taken', { lockQueue: this.o.lockQueue, epoch: this.o.epoch });
          this.o.onChange(true);
          return { kind: 'held' };
        }
      } catch (err) {
        this.o.onReachable(!isNetworkError(err));
        if (isQueueMissing(err)) return { kind: 'missing' };
        this.o.log.warn('fence.receive-failed', { error: describeSqsError(err) });
      }
      if (Date.now() >= deadline) break;
      await sleep(Math.min(500, Math.max(0, deadline - Date.now())));
    }
    this.lostAt ??= new Date().toISOString();
    return {
      kind: 'taken',
      reason: `the lock message in ${this.o.lockQueue} stayed in flight for ${Math.round(waitMs / 1000)} s: another queue-agent holds this split's fence`,
    };
  }

  /** Lets the lock go (close): a successor takes it at once. */
  async release(): Promise<void> {
    this.closed = true;
    this.wanted = false;
    this.stopKeeper();
    const receipt = this.receipt;
    this.receipt = undefined;
    if (!receipt) return;
    await this.o.client
      .send(
        new ChangeMessageVisibilityCommand({
          QueueUrl: this.o.lockUrl,
          ReceiptHandle: receipt,
          VisibilityTimeout: 0,
        }),
      )
      .catch(() => undefined);
  }

  /** Forgets the lock without a call (its queue is being deleted). */
  drop(): void {
    this.wanted = false;
    this.stopKeeper();
    this.receipt = undefined;
  }

  private startKeeper(): void {
    this.stopKeeper();
    const everyMs = Math.max(200, (this.o.visibilitySeconds * 1000) / 6);
    this.keeper = setInterval(() => void this.tick(), everyMs);
  }

  private stopKeeper(): void {
    if (this.keeper) clearInterval(this.keeper);
    this.keeper = undefined;
  }

  private async tick(): Promise<void> {
    if (this.closed) return;
    const receipt = this.receipt;
    if (receipt && Date.now() - this.leaseFrom < this.o.visibilitySeconds * 1000) {
      const started = Date.now();
      try {
        await this.o.client.send(
          new ChangeMessageVisibilityCommand({
            QueueUrl: this.o.lockUrl,
            ReceiptHandle: receipt,
            VisibilityTimeout: this.o.visibilitySeconds,
          }),
        );
        this.o.onReachable(true);
        if (this.receipt === receipt) this.leaseFrom = started;
        return;
      } catch (err) {
        this.o.onReachable(!isNetworkError(err));
        this.o.log.warn('fence.extend-failed', { error: describeSqsError(err) });
        if (!isNetworkError(err)) this.loseLock(); // the handle is not current: someone else may hold it
      }
    }
    if (this.receipt && !this.held) this.loseLock();
    // Lost: try to win it back, without waiting (it comes back only if nobody took it).
    if (!this.receipt && this.wanted) {
      const again = await this.acquire(0);
      if (again.kind !== 'held') this.o.onChange(false);
    }
  }

  private loseLock(): void {
    if (!this.receipt) return;
    this.receipt = undefined;
    this.lostAt = new Date().toISOString();
    this.o.log.warn('fence.lost', { lockQueue: this.o.lockQueue });
    this.o.onChange(false);
  }
}
