// The splitter: reads the source without joining a group, copies each committed record to the
// one shadow its headers select (same partition, key, headers, timestamp), and commits the
// source offset only after the copy's transaction committed (DESIGN §5.1).
//
// Commits are pipelined: transaction N carries the copies of batch N and the splitter offsets
// of batch N-1, so a crash after N committed and before N+1 duplicates at most batch N (with
// prefetch 1: exactly the one record in flight), and nothing is lost. An idle pump flushes its
// offsets in an offsets-only transaction, and probes the fence when there is nothing to flush.
//
// A destination that is missing (deleted behind the engine, or too few partitions) parks the
// records selected for it, in order, while every other destination keeps flowing; the source
// offset of a partition is committed only up to its first parked record. Parked records are
// selected again under the table in force when they are retried.
import type { Admin, IHeaders } from 'kafkajs';
import type { EngineHooks } from '../engine/contract';
import { describeError, type Logger } from '../engine/log';
import type { PublishBarrier } from '../engine/publishBarrier';
import { Backoff } from '../engine/timing';
import { MAX_PARKED, type KafkaTiming } from './config';
import { errorName } from './kafkaErrors';
import { chunks, messageIdOf, topicMessages } from './records';
import { partitionCount } from './shadows';
import type { TxnOutcome, TxnProducer } from './txn';
import type { FetchedRecord, Offsets, Wire } from './wire';

export interface PumpSelection {
  readonly routeId: string | undefined;
  readonly destination: string;
  readonly generation: number;
}

export interface PumpDeps {
  readonly wire: Wire;
  readonly admin: Admin;
  readonly txn: TxnProducer;
  readonly sourceTopic: string;
  readonly splitterGroup: string;
  readonly maxRecordsPerTxn: number;
  readonly messageIdHeader: string;
  readonly timing: KafkaTiming;
  readonly barrier: PublishBarrier;
  readonly hooks: EngineHooks;
  readonly log: Logger;
  select(headers: IHeaders): PumpSelection;
  onPublished(routeId: string | undefined): void;
  onFenced(reason: string): void;
  /** Grows every shadow to `partitions`; a problem string keeps the new partitions unread. */
  grow(partitions: number): Promise<string | undefined>;
}

export interface PumpProblem {
  readonly kind: 'destination-missing' | 'publish-failing' | 'source-lost' | 'partition-growth';
  readonly subject: string;
  readonly reason: string;
  readonly since: string;
}

interface Work {
  readonly record: FetchedRecord;
  readonly selection: PumpSelection;
  readonly parked: boolean;
}

const now = () => new Date().toISOString();
const max = (a: bigint, b: bigint) => (a > b ? a : b);

export class Pump {
  private partitions = 0;
  /** Next offset to read, per partition. */
  private readonly positions = new Map<number, bigint>();
  /** Everything below is copied or parked. */
  private readonly handled = new Map<number, bigint>();
  /** What the splitter group holds, as far as this engine committed it. */
  private readonly committed = new Map<number, bigint>();
  private readonly parked = new Map<number, FetchedRecord[]>();
  private readonly missing = new Map<string, { since: string; reason: string }>();
  private failing: { since: string; reason: string } | undefined;
  private sourceLost: { since: string; reason: string } | undefined;
  private growth: { since: string; reason: string } | undefined;
  private running = false;
  private loop: Promise<void> | undefined;
  private wake: (() => void) | undefined;
  private lastRoundTrip = Date.now();
  private nextPartitionCheck = 0;
  private nextMissingCheck = 0;
  private readonly backoff: Backoff;

  constructor(private readonly deps: PumpDeps) {
    this.backoff = new Backoff(deps.timing.retryInitialMs, deps.timing.retryMaxMs);
  }

  get isRunning(): boolean {
    return this.running;
  }

  get parkedCount(): number {
    let n = 0;
    for (const list of this.parked.values()) n += list.length;
    return n;
  }

  /** Offsets this engine committed for the splitter group. */
  frontier(): Map<number, string> {
    return new Map([...this.committed].map(([p, o]) => [p, o.toString()]));
  }

  problems(): PumpProblem[] {
    const out: PumpProblem[] = [];
    for (const [subject, m] of this.missing) out.push({ kind: 'destination-missing', subject, ...m });
    if (this.failing) out.push({ kind: 'publish-failing', subject: 'shadows', ...this.failing });
    if (this.sourceLost)
      out.push({ kind: 'source-lost', subject: this.deps.sourceTopic, ...this.sourceLost });
    if (this.growth) out.push({ kind: 'partition-growth', subject: this.deps.sourceTopic, ...this.growth });
    return out;
  }

  /** Starts reading at `from` (one entry per partition of the source). */
  start(from: Offsets, partitions: number): void {
    if (this.running) return;
    this.partitions = partitions;
    for (let p = 0; p < partitions; p++) {
      const at = BigInt(from.get(p) ?? '0');
      this.positions.set(p, at);
      this.handled.set(p, at);
      this.committed.set(p, at);
    }
    this.parked.clear();
    this.running = true;
    this.nextPartitionCheck = Date.now() + this.deps.timing.partitionCheckMs;
    this.loop = this.run();
  }

  /** Stops after the transaction in progress and commits what was copied. False when the
   * final commit failed (the controller retries stop). */
  async stop(): Promise<boolean> {
    if (!this.loop) return true; // never started: nothing to commit, and no round trip (it would fence)
    this.running = false;
    this.wake?.();
    await this.loop;
    this.loop = undefined;
    const flushed = await this.flush(false);
    return flushed === undefined || flushed.ok;
  }

  private async run(): Promise<void> {
    while (this.running) {
      try {
        await this.round();
      } catch (err) {
        await this.readFailed(err);
      }
    }
  }

  private async round(): Promise<void> {
    await this.checkPartitions();
    await this.checkMissing();
    const reads =
      this.parkedCount < MAX_PARKED
        ? await this.deps.wire.read(this.deps.sourceTopic, this.readPositions())
        : (await this.pause(this.deps.timing.fetchMaxWaitMs), []);
    this.sourceLost = undefined;
    const work: Work[] = [];
    // Parked records go first: they are older than anything read now for their destination.
    for (const list of this.parked.values()) {
      for (const record of list) {
        const selection = this.deps.select(record.headers);
        if (!this.missing.has(selection.destination)) work.push({ record, selection, parked: true });
      }
    }
    const readEnds = new Map<number, bigint>();
    for (const read of reads) {
      for (const record of read.records) {
        const selection = this.deps.select(record.headers);
        if (this.missing.has(selection.destination)) this.park(record);
        else work.push({ record, selection, parked: false });
      }
      readEnds.set(read.partition, BigInt(read.nextOffset));
      this.positions.set(read.partition, BigInt(read.nextOffset));
    }
    if (work.length === 0) {
      this.markRead(readEnds);
      await this.flush();
      return;
    }
    let done = 0;
    const items = work.map((w) => ({ ...w, destination: w.selection.destination }));
    for (const chunk of chunks(items, this.deps.maxRecordsPerTxn)) {
      if (!(await this.copy(chunk))) {
        await this.recover(work.slice(done), readEnds);
        return;
      }
      done += chunk.length;
    }
    this.markRead(readEnds);
  }

  /** One transaction: the chunk's copies plus the offsets of what earlier transactions copied. */
  private async copy(chunk: readonly Work[]): Promise<boolean> {
    const releases = chunk.map((w) => this.deps.barrier.track(w.selection.generation));
    const offsets = this.pendingCommit();
    const outcome = await this.deps.txn.run(async (txn) => {
      await txn.sendBatch({
        acks: -1,
        topicMessages: topicMessages(
          chunk.map((w) => ({ destination: w.selection.destination, record: w.record })),
        ),
      });
      if (offsets.size > 0) await txn.sendOffsets(this.offsetsRequest(offsets));
    }, 'copy');
    for (const release of releases) release(); // acknowledged, or retried under the newest table
    if (!outcome.ok) return this.transactionFailed(outcome, chunk);
    this.committedNow(offsets);
    for (const w of chunk) {
      const p = w.record.partition;
      if (w.parked) this.unpark(w.record);
      else this.handled.set(p, max(this.handled.get(p) ?? 0n, BigInt(w.record.offset) + 1n));
      this.deps.onPublished(w.selection.routeId);
    }
    for (const w of chunk) {
      try {
        await this.deps.hooks.afterShadowConfirm?.({
          messageId: messageIdOf(w.record.headers, this.deps.messageIdHeader),
          destination: w.selection.destination,
        });
      } catch (err) {
        this.deps.log.warn('pump.hook-failed', { error: describeError(err) });
      }
    }
    return true;
  }

  /** A failed copy: rewind every partition to its first record not copied, so the next round
   * reads it again (records parked in this round after that point are dropped with it). */
  private async recover(rest: readonly Work[], readEnds: Map<number, bigint>): Promise<void> {
    const rewind = new Map<number, bigint>();
    for (const w of rest) {
      if (w.parked) continue;
      const p = w.record.partition;
      const o = BigInt(w.record.offset);
      if (!rewind.has(p) || o < (rewind.get(p) ?? o)) rewind.set(p, o);
    }
    for (const [p, o] of rewind) {
      this.positions.set(p, o);
      readEnds.delete(p);
      this.parked.set(
        p,
        (this.parked.get(p) ?? []).filter((r) => BigInt(r.offset) < o),
      );
    }
    this.markRead(readEnds);
    if (this.running && this.missing.size === 0) await this.pause(this.backoff.next());
  }

  private async transactionFailed(
    outcome: Exclude<TxnOutcome, { ok: true }>,
    chunk: readonly Work[],
  ): Promise<false> {
    if (outcome.kind === 'fenced') {
      this.running = false;
      this.deps.onFenced(outcome.reason);
      return false;
    }
    const found = await this.findMissing([...new Set(chunk.map((w) => w.selection.destination))]);
    if (!found) {
      this.failing ??= { since: now(), reason: outcome.reason };
      this.deps.log.warn('pump.copy-failed', { records: chunk.length, error: outcome.reason });
    }
    return false;
  }

  /** Marks every destination that does not exist (or lacks partitions) as missing. */
  private async findMissing(destinations: readonly string[]): Promise<boolean> {
    let found = false;
    for (const destination of destinations) {
      const count = await partitionCount(this.deps.admin, destination).catch(() => -1);
      if (count === -1 || (count !== undefined && count >= this.partitions)) continue;
      found = true;
      const reason =
        count === undefined
          ? `${destination} does not exist (deleted behind the engine?)`
          : `${destination} has ${count} partitions, the source ${this.partitions}`;
      if (!this.missing.has(destination)) {
        this.missing.set(destination, { since: now(), reason });
        this.deps.log.warn('pump.destination-missing', { destination, partitions: count ?? 0 });
      }
    }
    return found;
  }

  private async checkMissing(): Promise<void> {
    if (this.missing.size === 0 || Date.now() < this.nextMissingCheck) return;
    this.nextMissingCheck = Date.now() + this.deps.timing.retryInitialMs * 5;
    for (const destination of [...this.missing.keys()]) {
      const count = await partitionCount(this.deps.admin, destination).catch(() => undefined);
      if (count !== undefined && count >= this.partitions) {
        this.missing.delete(destination);
        this.deps.log.info('pump.destination-back', { destination });
      }
    }
  }

  /** Partition growth: grow every shadow first, then read the new partitions; if the shadows
   * cannot grow, the new partitions stay unread (their records wait on the source). */
  private async checkPartitions(): Promise<void> {
    if (Date.now() < this.nextPartitionCheck) return;
    this.nextPartitionCheck = Date.now() + this.deps.timing.partitionCheckMs;
    const count = await partitionCount(this.deps.admin, this.deps.sourceTopic);
    if (count === undefined) {
      this.sourceLost ??= { since: now(), reason: `${this.deps.sourceTopic} does not exist` };
      return;
    }
    if (count <= this.partitions) return;
    const problem = await this.deps.grow(count).catch((err: unknown) => describeError(err));
    if (problem) {
      this.growth ??= { since: now(), reason: problem };
      this.deps.log.warn('pump.growth-blocked', { partitions: count, problem });
      return;
    }
    await this.deps.wire.refresh(); // the reader's metadata must know the new partitions
    this.deps.log.info('pump.partitions-grown', { from: this.partitions, to: count });
    for (let p = this.partitions; p < count; p++) {
      this.positions.set(p, 0n);
      this.handled.set(p, 0n);
      this.committed.set(p, 0n);
    }
    this.partitions = count;
    this.growth = undefined;
  }

  /** Commits pending offsets, or (when `probe`) probes the fence when idle for long enough. */
  private async flush(probe = true): Promise<TxnOutcome | undefined> {
    const offsets = this.pendingCommit();
    let outcome: TxnOutcome | undefined;
    if (offsets.size > 0) {
      outcome = await this.deps.txn.run(
        (txn) => txn.sendOffsets(this.offsetsRequest(offsets)),
        'offset commit',
      );
      if (outcome.ok) this.committedNow(offsets);
    } else if (probe && Date.now() - this.lastRoundTrip >= this.deps.timing.fenceProbeMs) {
      outcome = await this.deps.txn.probe(this.deps.splitterGroup);
      if (outcome.ok) this.lastRoundTrip = Date.now();
    }
    if (outcome && !outcome.ok) {
      if (outcome.kind === 'fenced') {
        this.running = false;
        this.deps.onFenced(outcome.reason);
      } else {
        this.failing ??= { since: now(), reason: outcome.reason };
        if (this.running) await this.pause(this.backoff.next());
      }
    }
    return outcome;
  }

  private async readFailed(err: unknown): Promise<void> {
    const name = errorName(err);
    const partition = (err as { partition?: unknown }).partition;
    if ((err as { name?: unknown }).name === 'KafkaJSOffsetOutOfRange' && typeof partition === 'number') {
      // The source expired records the split had not read yet: they are gone for everyone.
      const offsets = await this.deps.admin.fetchTopicOffsets(this.deps.sourceTopic);
      const low = BigInt(offsets.find((o) => o.partition === partition)?.low ?? '0');
      const at = this.positions.get(partition) ?? 0n;
      this.deps.log.warn('pump.source-records-expired', { partition, skipped: Number(low - at) });
      this.positions.set(partition, max(at, low));
      this.handled.set(partition, max(this.handled.get(partition) ?? 0n, low));
      return;
    }
    if (name === 'UNKNOWN_TOPIC_OR_PARTITION') {
      this.sourceLost ??= { since: now(), reason: `reading ${this.deps.sourceTopic} fails: ${name}` };
    } else {
      this.failing ??= { since: now(), reason: `reading the source failed: ${name ?? describeError(err)}` };
    }
    this.deps.log.warn('pump.read-failed', { error: name ?? describeError(err) });
    await this.deps.wire.refresh().catch(() => undefined);
    if (this.running) await this.pause(this.backoff.next());
  }

  private committedNow(offsets: ReadonlyMap<number, bigint>): void {
    for (const [p, o] of offsets) this.committed.set(p, o);
    this.lastRoundTrip = Date.now();
    this.failing = undefined;
    this.backoff.reset();
  }

  /** Per partition: the first parked record, else everything handled; where it moved. */
  private pendingCommit(): Map<number, bigint> {
    const out = new Map<number, bigint>();
    for (let p = 0; p < this.partitions; p++) {
      const first = this.parked.get(p)?.[0];
      const at = first ? BigInt(first.offset) : (this.handled.get(p) ?? 0n);
      if (at !== this.committed.get(p)) out.set(p, at);
    }
    return out;
  }

  private offsetsRequest(offsets: ReadonlyMap<number, bigint>) {
    return {
      consumerGroupId: this.deps.splitterGroup,
      topics: [
        {
          topic: this.deps.sourceTopic,
          partitions: [...offsets].map(([partition, o]) => ({ partition, offset: o.toString() })),
        },
      ],
    };
  }

  private readPositions(): Map<number, string> {
    const out = new Map<number, string>();
    for (let p = 0; p < this.partitions; p++) out.set(p, (this.positions.get(p) ?? 0n).toString());
    return out;
  }

  private markRead(readEnds: ReadonlyMap<number, bigint>): void {
    for (const [p, end] of readEnds) this.handled.set(p, max(this.handled.get(p) ?? 0n, end));
  }

  private park(record: FetchedRecord): void {
    const list = this.parked.get(record.partition) ?? [];
    list.push(record);
    this.parked.set(record.partition, list);
  }

  private unpark(record: FetchedRecord): void {
    const list = this.parked.get(record.partition) ?? [];
    const i = list.indexOf(record);
    if (i >= 0) list.splice(i, 1);
    if (list.length === 0) this.parked.delete(record.partition);
  }

  /** Sleeps, but wakes at once when the pump is stopped. */
  private pause(ms: number): Promise<void> {
    return new Promise((resolve) => {
      const timer = setTimeout(() => {
        this.wake = undefined;
        resolve();
      }, ms);
      this.wake = () => {
        clearTimeout(timer);
        this.wake = undefined;
        resolve();
      };
    });
  }
}
