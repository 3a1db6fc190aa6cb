// The engine's one transactional producer, shared by the pump and the route drains (one
// transaction at a time). Its deterministic transactional id is the fence: a replacement
// engine's producer bumps the epoch and every later round trip of this one fails with
// INVALID_PRODUCER_EPOCH / PRODUCER_FENCED. A transaction *begin* is local to kafkajs and
// succeeds even when fenced, so only produce/offset/commit results count.
import type { Kafka, Producer, ProducerBatch, Transaction } from 'kafkajs';
import { describeError, type Logger } from '../log';
import { Serial } from '../engine/serial';
import { errorName, isFenced, isRecordRefused, isUnknownTopic } from './kafkaErrors';
import { watchProduces } from './produceWatch';

/** `refused`: the broker refused records of the transaction for what they are (size,
 * timestamp, format), or the client could not encode one; retrying the same records fails. */
export type TxnOutcome =
  | { readonly ok: true }
  | {
      readonly ok: false;
      readonly kind: 'fenced' | 'unknown-topic' | 'refused' | 'failed';
      readonly reason: string;
    };

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
      // A failure once EndTxn(commit) is sent leaves the outcome unknown: the coordinator may
      // have committed. The records are copied again, so they may arrive twice in their shadow
      // (docs/design.md §5 item 2); the log says so, for whoever counts the duplicates.
      let committing = false;
      try {
        this.producer ??= await this.connect();
        txn = await this.producer.transaction();
        await work(txn);
        committing = true;
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
        this.log.debug('producer.transaction-failed', {
          what,
          error: errorName(err) ?? describeError(err),
          outcomeUnknown: committing,
        });
        const kind = isUnknownTopic(err) ? 'unknown-topic' : isRecordRefused(err) ? 'refused' : 'failed';
        return { ok: false, kind, reason };
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

/** Sends `batch` in `txn`, and fails (so the transaction aborts and its records are retried)
 * unless the brokers acknowledged exactly one write to every partition it holds. kafkajs 2.2.4
 * retries a failed produce only to brokers that have not answered within the same call: a
 * partition that moved (a broker outage) to a broker which already answered is never written,
 * and the call still succeeds. Committing then would commit source offsets past records in no
 * destination. The same retry sends again to a broker whose first request was still in flight,
 * or to a partition's new leader after its old one answered, and the records are written twice
 * in this transaction (produceWatch.ts); committing would show them twice to read_committed
 * readers (agent/kafka/DECISIONS.md, "Shadows on a replicated cluster, and broker outages"). */
export async function sendAcknowledged(txn: Transaction, batch: ProducerBatch): Promise<void> {
  const { value: metadata, written: writes } = await watchProduces(() => txn.sendBatch(batch));
  const acknowledged = new Set(metadata.map((m) => `${m.topicName}/${m.partition}`));
  const written = new Set<string>();
  for (const { topic, messages } of batch.topicMessages ?? []) {
    for (const m of messages) {
      // Every copy names its partition (records.ts copyOf); one without could go anywhere.
      if (m.partition === undefined) throw new Error(`a record for ${topic} has no partition`);
      written.add(`${topic}/${m.partition}`);
    }
  }
  const missing = [...written].filter((tp) => !acknowledged.has(tp));
  if (missing.length > 0) {
    throw new Error(
      `no broker acknowledged the write to ${missing.join(', ')} (a produce retried after a leader move skipped it)`,
    );
  }
  const twice = [...writes].filter(([, n]) => n > 1).map(([tp]) => tp);
  if (twice.length > 0) {
    throw new Error(
      `${twice.join(', ')} written twice in one transaction (a produce retried while its first request was answered); the transaction is aborted`,
    );
  }
}
