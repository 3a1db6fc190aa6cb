// The engine's one transactional producer, shared by the pump and the route drains (one
// transaction at a time). Its deterministic transactional id is the fence: a replacement
// engine's producer bumps the epoch and every later round trip of this one fails with
// INVALID_PRODUCER_EPOCH / PRODUCER_FENCED. A transaction *begin* is local to kafkajs and
// succeeds even when fenced, so only produce/offset/commit results count.
import type { Kafka, Producer, Transaction } from 'kafkajs';
import { describeError, type Logger } from '../engine/log';
import { Serial } from '../engine/serial';
import { errorName, isFenced, isUnknownTopic } from './kafkaErrors';

export type TxnOutcome =
  | { readonly ok: true }
  | { readonly ok: false; readonly kind: 'fenced' | 'unknown-topic' | 'failed'; readonly reason: string };

export class TxnProducer {
  private producer: Producer | undefined;
  private readonly serial = new Serial();
  private fencedReason: string | undefined;
  private closed = false;

  constructor(
    private readonly kafka: Kafka,
    private readonly transactionalId: string,
    private readonly log: Logger,
  ) {}

  get fenced(): string | undefined {
    return this.fencedReason;
  }

  get connected(): boolean {
    return this.producer !== undefined && this.fencedReason === undefined && !this.closed;
  }

  /** Initialises the producer id: from here on any older engine with this transactional id
   * is fenced. Idempotent; a failure comes back as an outcome. */
  takeFence(): Promise<TxnOutcome> {
    return this.run(async () => undefined, 'fence');
  }

  /** Runs `work` in one transaction and commits it. Any failure aborts, and the producer is
   * rebuilt (kafkajs leaves a producer unusable after a failed commit, and a deleted topic in
   * its metadata fails every later send). */
  run(work: (txn: Transaction) => Promise<void>, what = 'transaction'): Promise<TxnOutcome> {
    return this.serial.run(async () => {
      if (this.fencedReason) return { ok: false, kind: 'fenced', reason: this.fencedReason };
      if (this.closed) return { ok: false, kind: 'failed', reason: 'the producer is closed' };
      let txn: Transaction | undefined;
      try {
        this.producer ??= await this.connect();
        txn = await this.producer.transaction();
        await work(txn);
        await txn.commit();
        return { ok: true };
      } catch (err) {
        await txn?.abort().catch(() => undefined);
        await this.reset();
        const reason = `${what} failed: ${errorName(err) ?? describeError(err)}`;
        if (isFenced(err)) {
          this.fencedReason = `a newer producer holds transactional id ${this.transactionalId} (${errorName(err) ?? 'fenced'})`;
          this.log.warn('producer.fenced', { transactionalId: this.transactionalId, error: errorName(err) });
          return { ok: false, kind: 'fenced', reason: this.fencedReason };
        }
        this.log.debug('producer.transaction-failed', { what, error: errorName(err) ?? describeError(err) });
        return { ok: false, kind: isUnknownTopic(err) ? 'unknown-topic' : 'failed', reason };
      }
    });
  }

  /** A round trip that fails once fenced (AddOffsetsToTxn + EndTxn), for an idle pump. */
  probe(groupId: string): Promise<TxnOutcome> {
    return this.run((txn) => txn.sendOffsets({ consumerGroupId: groupId, topics: [] }), 'fence probe');
  }

  async close(): Promise<void> {
    await this.serial.run(async () => {
      this.closed = true;
      await this.reset();
    });
  }

  private async connect(): Promise<Producer> {
    const producer = this.kafka.producer({
      transactionalId: this.transactionalId,
      idempotent: true,
      maxInFlightRequests: 1, // keeps produces to one partition in order across retries
      allowAutoTopicCreation: false,
    });
    await producer.connect();
    return producer;
  }

  private async reset(): Promise<void> {
    const old = this.producer;
    this.producer = undefined;
    await old?.disconnect().catch(() => undefined);
  }
}
