// The splitter: reads the source without joining a group, copies each committed record to the
// one shadow its headers select (same partition, key, headers, timestamp), and commits the
// source offset only after the copy's transaction committed (docs/design.md §5.1).
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
//
// A record the shadows refuse (over `max.message.bytes`, a timestamp out of bounds) or the
// client cannot encode is never skipped: a failing chunk is split in halves until that record
// is alone, then its partition stops at it (nothing at or after it is copied or committed, so
// order is kept) while every other partition goes on; it is retried every `retryMaxMs` and
// reported until it goes (agent/kafka/DECISIONS.md, "Records the engine cannot copy").
import type { Admin } from 'kafkajs';
import type { EngineHooks } from '../engine/contract';
import { describeError, type Logger } from '../log';
import type { PumpSelection } from '../engine/port';
import type { PublishBarrier } from '../engine/publishBarrier';
import { Backoff } from '../engine/timing';
import { MAX_PARKED, type IsolationLevel, type KafkaTiming } from './config';
import { errorName } from './kafkaErrors';
import { KAFKAJS_TYPE } from '../../core/providers/kafka/codecs';
import { chunks, codecRuns, messageIdOf, topicMessages } from './records';
import { ReadAhead } from './readAhead';
import { partitionCount } from './shadows';
import { sendAcknowledged, type TxnOutcome, type TxnProducer } from './txn';
import type { FetchedRecord, Offsets, PartitionRead, RecordHeaders, Wire } from './wire';

export interface PumpDeps {
  readonly wire: Wire;
  readonly admin: Admin;
  readonly txn: TxnProducer;
  readonly sourceTopic: string;
  /** How the source is read: as the application reads it (README, "Kafka shadows are written
   * in transactions"). */
  readonly isolation: IsolationLevel;
  readonly splitterGroup: string;
  readonly maxRecordsPerTxn: number;
  /** Read the next records while this round's transactions commit (DECISIONS.md,
   * "Performance"); off only to measure it. */
  readonly readAhead: boolean;
  readonly messageIdHeader: string;
  readonly timing: KafkaTiming;
  readonly barrier: PublishBarrier;
  readonly hooks: EngineHooks;
  readonly log: Logger;
  select(headers: RecordHeaders, value: Buffer | null): PumpSelection;
  onPublished(routeId: string | undefined): void;
  onFenced(reason: string): void;
  /** Grows every shadow to `partitions`; a problem string keeps the new partitions unread. */
  grow(partitions: number): Promise<string | undefined>;
}

export interface PumpProblem {
  readonly kind:
    'destination-missing' | 'publish-failing' | 'source-lost' | 'partition-growth' | 'record-refused';
  readonly subject: string;
  readonly reason: string;
  readonly since: string;
}

interface Work {
  readonly record: FetchedRecord;
  readonly selection: PumpSelection;
  readonly parked: boolean;
  /** Ends its publish-barrier tracking (idempotent). */
  readonly release: () => void;
}

const now = () => new Date().toISOString();
const keyOf = (record: FetchedRecord) => `${record.partition}:${record.offset}`;
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
  /** Where a record went in a copy transaction that did not commit, by `partition:offset`: its
   * aborted copy is visible there to `read_uncommitted` readers, so it is retried to the same
   * destination, never re-routed (DECISIONS.md, "Aborted copies"). Each keeps its barrier tracking until it
   * commits, between rounds too, so the route change waits for it; released at stop. */
  private readonly sentTo = new Map<string, { selection: PumpSelection; release: () => void }>();
  private readonly missing = new Map<string, { since: string; reason: string }>();
  /** Partitions stopped at a record that cannot be copied: read again from `offset` after
   * `retryAt`, and cleared once something at or past it is copied. */
  private readonly refused = new Map<
    number,
    { offset: bigint; since: string; reason: string; retryAt: number }
  >();
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
  private readonly ahead: ReadAhead;

  constructor(private readonly deps: PumpDeps) {
    this.backoff = new Backoff(deps.timing.retryInitialMs, deps.timing.retryMaxMs);
    this.ahead = new ReadAhead((positions) =>
      deps.wire.read(deps.sourceTopic, positions, { isolation: deps.isolation }),
    );
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
    for (const [p, r] of this.refused) {
      out.push({
        kind: 'record-refused',
        subject: `${this.deps.sourceTopic}/${p}@${r.offset}`,
        since: r.since,
        reason: r.reason,
      });
    }
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
    this.refused.clear();
    this.forgetSent();
    this.ahead.drop();
    this.running = true;
    this.nextPartitionCheck = Date.now() + this.deps.timing.partitionCheckMs;
    this.loop = this.run();
  }

  /** Stops after the transaction in progress and commits what was copied. False when the
   * final commit failed: the controller retries stop, and every retry commits again while
   * offsets are pending, so the handback frontier covers everything copied. Never started: nothing is pending and no round
   * trip is made (it would fence). */
  async stop(): Promise<boolean> {
    if (this.loop) {
      this.running = false;
      this.wake?.();
      await this.loop;
      this.loop = undefined;
    }
    this.ahead.drop();
    // Nothing more is copied: the records go back with the source frontier instead.
    this.forgetSent();
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
    const positions = this.readPositions();
    const reads =
      this.parkedCount < MAX_PARKED && positions.size > 0
        ? await this.ahead.take(positions)
        : (this.ahead.drop(), await this.pause(this.deps.timing.fetchMaxWaitMs), []);
    this.sourceLost = undefined;
    const start = new Map(this.positions);
    try {
      await this.process(reads);
    } catch (err) {
      // Whatever failed, nothing read in this round is skipped: each partition goes back to
      // its first record not copied (DECISIONS.md, "Records the engine cannot copy").
      for (const read of reads) {
        const p = read.partition;
        this.rewind(p, max(start.get(p) ?? 0n, this.handled.get(p) ?? 0n));
      }
      this.fail(`copying failed: ${errorName(err) ?? describeError(err)}`);
      this.deps.log.warn('pump.round-failed', { error: errorName(err) ?? describeError(err) });
      if (this.running) await this.pause(this.backoff.next());
    }
  }

  private async process(reads: readonly PartitionRead[]): Promise<void> {
    const work: Work[] = [];
    try {
      await this.copyAll(reads, work);
    } finally {
      for (const w of work) w.release(); // not copied: selected again under the newest table
    }
  }

  /** Every record is tracked by the publish barrier from its selection to its commit, across
   * all the chunks of the round: a route removed meanwhile passes its barrier only once the
   * copies selected for it are committed (DECISIONS.md, "The publish barrier spans the round"). Selection and tracking happen in
   * the same tick, so no table change falls between them. */
  private async copyAll(reads: readonly PartitionRead[], work: Work[]): Promise<void> {
    const selected = (record: FetchedRecord, parked: boolean): Work => {
      const key = keyOf(record);
      const sent = this.sentTo.get(key);
      if (sent && !this.missing.has(sent.selection.destination))
        return { record, selection: sent.selection, parked, release: () => undefined };
      // A destination gone since holds no copy anyone reads: select afresh then.
      sent?.release();
      this.sentTo.delete(key);
      const selection = this.deps.select(record.headers, record.value);
      return { record, selection, parked, release: this.deps.barrier.track(selection.generation) };
    };
    // Parked records go first: they are older than anything read now for their destination.
    for (const list of this.parked.values()) {
      for (const record of list) {
        const w = selected(record, true);
        if (!this.missing.has(w.selection.destination)) work.push(w);
        else w.release();
      }
    }
    const readEnds = new Map<number, bigint>();
    for (const read of reads) {
      if (read.undecodable) this.refuseAt(read.partition, BigInt(read.nextOffset), read.undecodable);
      for (const record of read.records) {
        const w = selected(record, false);
        if (this.missing.has(w.selection.destination)) {
          w.release();
          this.park(record);
        } else work.push(w);
      }
      readEnds.set(read.partition, BigInt(read.nextOffset));
      this.positions.set(read.partition, BigInt(read.nextOffset));
    }
    // The next read overlaps this round's transactions; the next round uses it only if it
    // reads from exactly these positions (nothing was rewound or refused meanwhile).
    if (this.deps.readAhead && work.length > 0 && this.running && this.parkedCount < MAX_PARKED) {
      this.ahead.start(this.readPositions());
    }
    if (work.length === 0) {
      this.markRead(readEnds);
      await this.flush();
      return;
    }
    const items = work.map((w) => ({ ...w, destination: w.selection.destination }));
    const queue = chunks(items, this.deps.maxRecordsPerTxn);
    for (let chunk = queue.shift(); chunk; chunk = queue.shift()) {
      const outcome = await this.copy(chunk);
      if (outcome === 'copied') continue;
      if (outcome === 'failed') {
        await this.recover([...chunk, ...queue.flat()], readEnds);
        return;
      }
      // Refused: halve until the record at fault is alone, then stop its partition at it.
      if (chunk.length > 1) {
        const half = Math.ceil(chunk.length / 2);
        queue.unshift(chunk.slice(0, half), chunk.slice(half));
        continue;
      }
      const p = this.refuse(chunk[0]!, outcome.reason);
      readEnds.delete(p);
      const at = this.refused.get(p)?.offset ?? 0n;
      for (let i = 0; i < queue.length; i++) {
        queue[i] = queue[i]!.filter((w) => {
          if (w.record.partition !== p || BigInt(w.record.offset) < at) return true;
          w.release(); // read again after the refused record
          return false;
        });
      }
      for (let i = queue.length - 1; i >= 0; i--) if (queue[i]!.length === 0) queue.splice(i, 1);
    }
    this.markRead(readEnds);
  }

  /** One transaction: the chunk's copies plus the offsets of what earlier transactions copied. */
  private async copy(
    chunk: readonly Work[],
  ): Promise<'copied' | 'failed' | { refused: true; reason: string }> {
    const offsets = this.pendingCommit();
    const outcome = await this.deps.txn.run(async (txn) => {
      // One request per run of records with the same codec, in order (DECISIONS.md, "Compression").
      const copies = chunk.map((w) => ({ destination: w.selection.destination, record: w.record }));
      for (const run of codecRuns(copies)) {
        await sendAcknowledged(txn, {
          acks: -1,
          compression: KAFKAJS_TYPE[run.codec],
          topicMessages: topicMessages(run.items),
        });
      }
      if (offsets.size > 0) await txn.sendOffsets(this.offsetsRequest(offsets));
    }, 'copy');
    for (const w of chunk) w.release(); // acknowledged, or retried (to the same destination)
    // A refused chunk wrote nothing of the refused partition, and its other records are
    // retried within this round under their selection: only other failures pin.
    if (!outcome.ok && outcome.kind !== 'refused') {
      for (const w of chunk) {
        const key = keyOf(w.record);
        if (this.sentTo.has(key)) continue;
        this.sentTo.set(key, {
          selection: w.selection,
          release: this.deps.barrier.track(w.selection.generation),
        });
      }
    }
    if (!outcome.ok && outcome.kind === 'refused') return { refused: true, reason: outcome.reason };
    if (!outcome.ok) return this.transactionFailed(outcome, chunk);
    this.committedNow(offsets);
    for (const w of chunk) {
      const p = w.record.partition;
      if (w.parked) this.unpark(w.record);
      else this.handled.set(p, max(this.handled.get(p) ?? 0n, BigInt(w.record.offset) + 1n));
      this.sentTo.get(keyOf(w.record))?.release();
      this.sentTo.delete(keyOf(w.record));
      const refused = this.refused.get(p);
      if (refused && BigInt(w.record.offset) >= refused.offset) {
        this.refused.delete(p);
        this.deps.log.info('pump.record-copied-after-refusal', { partition: p });
      }
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
    return 'copied';
  }

  /** Stops `w`'s partition at its record (read again from there after `retryMaxMs`). Returns
   * the partition. A parked record refused moves the partition back to it: records after it
   * already copied for other destinations are copied again (duplicates, never a loss). */
  private refuse(w: Work, reason: string): number {
    if (w.parked) this.unpark(w.record);
    return this.refuseAt(w.record.partition, BigInt(w.record.offset), reason);
  }

  /** Stops partition `p` at `offset`: a record refused, or a batch that cannot be decompressed
   * (DECISIONS.md, "Compression"). Retried after `retryMaxMs`, reported until something there is copied. */
  private refuseAt(p: number, offset: bigint, reason: string): number {
    const known = this.refused.get(p);
    const since = known?.offset === offset ? known.since : now();
    this.refused.set(p, { offset, since, reason, retryAt: Date.now() + this.deps.timing.retryMaxMs });
    this.rewind(p, offset);
    if (known?.offset !== offset) {
      this.deps.log.warn('pump.record-refused', { partition: p, offset: offset.toString(), error: reason });
    }
    return p;
  }

  /** Reads partition `p` again from `offset`; records parked at or after it are dropped (they
   * are read again). */
  private rewind(p: number, offset: bigint): void {
    this.positions.set(p, offset);
    const kept = (this.parked.get(p) ?? []).filter((r) => BigInt(r.offset) < offset);
    if (kept.length > 0) this.parked.set(p, kept);
    else this.parked.delete(p);
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
      this.rewind(p, o);
      readEnds.delete(p);
    }
    this.markRead(readEnds);
    if (this.running && this.missing.size === 0) await this.pause(this.backoff.next());
  }

  private async transactionFailed(
    outcome: Exclude<TxnOutcome, { ok: true }>,
    chunk: readonly Work[],
  ): Promise<'failed'> {
    if (outcome.kind === 'fenced') {
      this.running = false;
      this.deps.onFenced(outcome.reason);
      return 'failed';
    }
    const found = await this.findMissing([...new Set(chunk.map((w) => w.selection.destination))]);
    if (!found) {
      this.fail(outcome.reason);
      this.deps.log.warn('pump.copy-failed', { records: chunk.length, error: outcome.reason });
    }
    return 'failed';
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
      if (outcome.ok) {
        // A round trip went through with nothing left to copy or commit: whatever failed
        // before is over (an idle split stayed DEGRADED after an outage otherwise).
        this.lastRoundTrip = Date.now();
        this.failing = undefined;
        this.backoff.reset();
      }
    }
    if (outcome && !outcome.ok) {
      if (outcome.kind === 'fenced') {
        this.running = false;
        this.deps.onFenced(outcome.reason);
      } else {
        this.fail(outcome.reason);
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
      this.fail(`reading the source failed: ${name ?? describeError(err)}`);
    }
    this.deps.log.warn('pump.read-failed', { error: name ?? describeError(err) });
    await this.deps.wire.refresh().catch(() => undefined);
    if (this.running) await this.pause(this.backoff.next());
  }

  /** Copies or reads keep failing: the reason is the newest failure (what fails now, e.g. a copy
   * below min.insync after a read error earlier in the same outage), `since` the first one's. */
  private fail(reason: string): void {
    this.failing = { since: this.failing?.since ?? now(), reason };
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

  /** Every partition, except one stopped at a refused record until its retry is due. */
  private readPositions(): Map<number, string> {
    const out = new Map<number, string>();
    for (let p = 0; p < this.partitions; p++) {
      if ((this.refused.get(p)?.retryAt ?? 0) > Date.now()) continue;
      out.set(p, (this.positions.get(p) ?? 0n).toString());
    }
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

  private forgetSent(): void {
    for (const sent of this.sentTo.values()) sent.release();
    this.sentTo.clear();
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
