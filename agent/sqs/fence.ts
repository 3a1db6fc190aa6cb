// The fence (docs/providers/sqs.md "The fence: a lock message held in flight"): one message in
// the activation's lock queue, naming its holder. The holder receives it and keeps it in flight by
// extending its visibility well before each timeout; a successor can receive it only once the
// holder stopped extending and the timeout passed.
//
// Invariants:
//  1. An engine acts only while its lease is fresh: its last successful extension (or the one
//     right after its receive; a long poll's start says nothing about when the server handed the
//     message out) is younger than half the timeout.
//  2. An engine holds only a lock message that names it. A successor that receives another's
//     lock replaces it (deletes it while its own lease is fresh, then sends one naming itself), so
//     the lock names whoever last took it over.
//  3. An engine that held the lock and then receives one naming another was superseded: it puts
//     the lock back at once and never takes it again (its state is older than its successor's; a
//     restarted queue-agent recovers from the checkpoint). One that lapsed while nobody came
//     receives its own lock back and goes on.
//  4. One receive of the lock at a time per engine: a caller's acquire waits for one under way
//     (the keeper's, winning a lapsed lock back), and the keeper does not start one beside a
//     caller's. Two at once would have the long poll wait out its time while the other already
//     holds the lock, then answer "taken".
import { randomUUID } from 'node:crypto';
import {
  ChangeMessageVisibilityCommand,
  CreateQueueCommand,
  GetQueueAttributesCommand,
  DeleteMessageCommand,
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

/** What the lock message says: the lock, its activation and the engine that last took it. */
interface LockBody {
  readonly lock: string;
  readonly activation: string;
  readonly holder?: string;
}

function holderOf(body: string | undefined): string | undefined {
  try {
    return (JSON.parse(body ?? '') as Partial<LockBody>).holder;
  } catch {
    return undefined; // not a lock this code wrote: someone else's, as far as taking it goes
  }
}

export class LockFence {
  /** This engine's name in the lock message (invariant 2). */
  private readonly self = randomUUID();
  private receipt: string | undefined;
  /** When the last extension (or the receive) succeeded: the lease runs from there. */
  private leaseFrom = 0;
  private keeper: NodeJS.Timeout | undefined;
  private lostAt: string | undefined;
  private wanted = false;
  private closed = false;
  /** This engine held the lock once: another's lock now means it was superseded (invariant 3). */
  private everHeld = false;
  private supersededAt: string | undefined;
  /** A takeover deleted the old lock but could not yet send its own: sent before the next receive. */
  private owesLock = false;
  private ticking = false;
  /** The acquire under way (invariant 4). */
  private acquiring: Promise<Acquired> | undefined;

  constructor(private readonly o: FenceOptions) {}

  /** Held, and the lease is younger than half the lock's timeout: safe to act. */
  get held(): boolean {
    return this.receipt !== undefined && Date.now() - this.leaseFrom < this.safeMs;
  }

  /** Set once another engine took the fence over (invariant 3): this one never acts again. */
  get superseded(): { reason: string; since: string } | undefined {
    return this.supersededAt ? this.lost : undefined;
  }

  /** Why this engine does not hold the fence it wants, and since when. */
  get lost(): { reason: string; since: string } | undefined {
    if (this.supersededAt)
      return {
        reason: `another queue-agent took this split's fence over (the lock message in ${this.o.lockQueue} names it); this engine stays stopped for good, and a restarted queue-agent recovers from the checkpoint`,
        since: this.supersededAt,
      };
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
    await this.o.client
      .send(
        new CreateQueueCommand({
          QueueName: this.o.lockQueue,
          Attributes: {
            VisibilityTimeout: String(this.o.visibilitySeconds),
            MessageRetentionPeriod: String(LOCK_RETENTION_SECONDS),
          },
        }),
      )
      .catch((err: unknown) => {
        // It exists with another timeout (the lock timeout setting changed since): every receive
        // and extension names its own timeout, so the queue's default does not matter.
        if (!/QueueNameExists|QueueAlreadyExists/.test(String((err as { name?: unknown })?.name))) throw err;
      });
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
        MessageBody: this.lockBody(),
      }),
    );
  }

  private lockBody(): string {
    const body: LockBody = { lock: this.o.lockQueue, activation: this.o.activationId, holder: this.self };
    return JSON.stringify(body);
  }

  /** Receives the lock message, waiting up to `waitMs` for it to become visible. */
  async acquire(waitMs: number): Promise<Acquired> {
    this.wanted = true;
    const deadline = Date.now() + waitMs;
    // Invariant 4: wait for the receive under way; it may have won the lock.
    while (this.acquiring) await this.acquiring.catch(() => undefined);
    const run = this.receiveLock(Math.max(0, deadline - Date.now()));
    this.acquiring = run;
    try {
      return await run;
    } finally {
      if (this.acquiring === run) this.acquiring = undefined;
    }
  }

  private async receiveLock(waitMs: number): Promise<Acquired> {
    if (this.held) return { kind: 'held' };
    if (this.supersededAt) return { kind: 'taken', reason: this.lost!.reason };
    const deadline = Date.now() + waitMs;
    for (;;) {
      if (this.held) return { kind: 'held' }; // a keeper tick took it meanwhile
      const left = deadline - Date.now();
      try {
        if (this.owesLock) await this.sendOwnLock();
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
          const outcome = await this.received(lock.ReceiptHandle, holderOf(lock.Body));
          if (outcome) return outcome;
          continue; // took another's lock over: receive the one naming this engine
        }
      } catch (err) {
        this.o.onReachable(!isNetworkError(err));
        if (isQueueMissing(err)) return { kind: 'missing' };
        this.o.log.warn('fence.receive-failed', { error: describeSqsError(err) });
      }
      if (Date.now() >= deadline) break;
      await sleep(Math.min(500, Math.max(0, deadline - Date.now())));
    }
    if (this.held) return { kind: 'held' };
    this.lostAt ??= new Date().toISOString();
    if (this.supersededAt) return { kind: 'taken', reason: this.lost!.reason };
    return {
      kind: 'taken',
      reason: `the lock message in ${this.o.lockQueue} stayed in flight for ${Math.round(waitMs / 1000)} s: another queue-agent holds this split's fence`,
    };
  }

  /** A lock message was received: hold it, give it back (superseded) or take it over.
   * Undefined when taken over: the caller receives again. */
  private async received(receipt: string, holder: string | undefined): Promise<Acquired | undefined> {
    if (holder === this.self) {
      // Invariant 1: the lease runs from an extension made now, not from the receive's start.
      const started = Date.now();
      await this.extend(receipt);
      this.receipt = receipt;
      this.leaseFrom = started;
      this.lostAt = undefined;
      this.everHeld = true;
      this.startKeeper();
      this.o.log.info('fence.taken', { lockQueue: this.o.lockQueue, epoch: this.o.epoch });
      this.o.onChange(true);
      return { kind: 'held' };
    }
    if (this.everHeld) {
      this.supersededAt = new Date().toISOString();
      this.receipt = undefined;
      this.stopKeeper();
      await this.putBack(receipt);
      this.o.log.warn('fence.superseded', { lockQueue: this.o.lockQueue, epoch: this.o.epoch });
      this.o.onChange(false);
      return { kind: 'taken', reason: this.lost!.reason };
    }
    // Invariant 2: replace the lock with one naming this engine, deleting only while the lease
    // on the old one is fresh (an extension made now), then sending its own.
    const started = Date.now();
    await this.extend(receipt);
    if (Date.now() - started >= this.safeMs) {
      await this.putBack(receipt);
      return undefined;
    }
    await this.o.client.send(new DeleteMessageCommand({ QueueUrl: this.o.lockUrl, ReceiptHandle: receipt }));
    this.owesLock = true;
    this.o.log.info('fence.take-over', { lockQueue: this.o.lockQueue, epoch: this.o.epoch });
    await this.sendOwnLock();
    return undefined;
  }

  private async sendOwnLock(): Promise<void> {
    await this.o.client.send(
      new SendMessageCommand({ QueueUrl: this.o.lockUrl, MessageBody: this.lockBody() }),
    );
    this.owesLock = false;
  }

  private async extend(receipt: string): Promise<void> {
    await this.o.client.send(
      new ChangeMessageVisibilityCommand({
        QueueUrl: this.o.lockUrl,
        ReceiptHandle: receipt,
        VisibilityTimeout: this.o.visibilitySeconds,
      }),
    );
  }

  /** Makes a received lock visible again at once (best effort: it comes back by its timeout). */
  private async putBack(receipt: string): Promise<void> {
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

  /** Lets the lock go (close): a successor takes it at once. */
  async release(): Promise<void> {
    this.closed = true;
    this.wanted = false;
    this.stopKeeper();
    const receipt = this.receipt;
    this.receipt = undefined;
    if (receipt) await this.putBack(receipt);
    // A takeover cut short between its delete and its send: leave a lock for the next engine.
    if (this.owesLock) await this.sendOwnLock().catch(() => undefined);
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
    if (this.closed || this.ticking) return;
    this.ticking = true;
    try {
      await this.keep();
    } finally {
      this.ticking = false;
    }
  }

  private async keep(): Promise<void> {
    const receipt = this.receipt;
    if (receipt && Date.now() - this.leaseFrom < this.o.visibilitySeconds * 1000) {
      const started = Date.now();
      try {
        await this.extend(receipt);
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
    // Lost: try to win it back, without waiting (invariant 3 says when that is allowed), unless
    // a caller's acquire is receiving already (invariant 4).
    if (!this.receipt && this.wanted && !this.supersededAt && !this.acquiring) {
      await this.acquire(0);
      if (!this.held) this.o.onChange(false);
    }
    if (this.supersededAt) this.stopKeeper();
  }

  private loseLock(): void {
    if (!this.receipt) return;
    this.receipt = undefined;
    this.lostAt = new Date().toISOString();
    this.o.log.warn('fence.lost', { lockQueue: this.o.lockQueue });
    this.o.onChange(false);
  }
}
