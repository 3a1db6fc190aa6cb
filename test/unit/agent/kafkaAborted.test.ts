// Aborted-transaction filtering of a read_committed fetch (agent/kafka/aborted.ts), on record
// batches laid out as kafkajs decodes them. That the broker's lists and a Java read_committed
// reader agree with it is the conformance test's job
// (test/conformance/kafka-aborted-transactions.test.ts).
import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import {
  batchesOf,
  dropAborted,
  type AbortedTransaction,
  type BatchedRecord,
} from '../../../agent/kafka/aborted';

interface Rec extends BatchedRecord {
  readonly label: string;
}

const ABORT = Buffer.from([0, 0, 0, 0]);
const COMMIT = Buffer.from([0, 0, 0, 1]);

/** A log: each entry one batch of `count` records from `first` (one record for a marker). */
type Entry =
  | { at: number; pid: number; txn?: boolean; count?: number; tail?: number }
  | { at: number; pid: number; marker: 'abort' | 'commit' };

function log(entries: readonly Entry[]): Rec[] {
  const out: Rec[] = [];
  for (const e of entries) {
    const marker = 'marker' in e ? e.marker : undefined;
    const count = marker ? 1 : (('count' in e ? e.count : undefined) ?? 1);
    const tail = !marker && 'tail' in e ? (e.tail ?? 0) : 0;
    const context = {
      producerId: String(e.pid),
      inTransaction: marker !== undefined || !('txn' in e) || e.txn !== false,
      firstOffset: String(e.at),
      lastOffsetDelta: count - 1 + tail,
    };
    for (let i = 0; i < count; i++) {
      out.push({
        label: marker ? `${marker}:p${e.pid}@${e.at}` : `p${e.pid}@${e.at + i}`,
        offset: String(e.at + i),
        key: marker === 'abort' ? ABORT : marker === 'commit' ? COMMIT : Buffer.from('k'),
        isControlRecord: marker !== undefined,
        batchContext: context,
      });
    }
  }
  return out;
}

const aborted = (...xs: [pid: number, first: number][]): AbortedTransaction[] =>
  xs.map(([pid, first]) => ({ producerId: String(pid), firstOffset: String(first) }));

const kept = (records: Rec[], list: AbortedTransaction[] | null) =>
  dropAborted(batchesOf(records), list).flatMap((b) => b.records.map((r) => r.label));

describe('dropping aborted transactions of a read_committed fetch', () => {
  test('layout (a): a transaction that began first and ended last is dropped although the broker lists it second', () => {
    const records = log([
      { at: 46, pid: 1, count: 3 },
      { at: 49, pid: 9, txn: false },
      { at: 50, pid: 2, count: 2 },
      { at: 52, pid: 2, marker: 'abort' },
      { at: 53, pid: 1, marker: 'abort' },
      { at: 54, pid: 3 },
      { at: 55, pid: 3, marker: 'commit' },
    ]);
    // The broker's order: by the end of each transaction.
    assert.deepEqual(kept(records, aborted([2, 50], [1, 46])), [
      'p9@49',
      'abort:p2@52',
      'abort:p1@53',
      'p3@54',
      'commit:p3@55',
    ]);
  });

  test('layout (b): a fetch that starts inside the log takes every range that began before its first batch', () => {
    // p1 wrote 0-2 and aborted at 4; p2 began at 3 and aborted at 6; the fetch starts at 3.
    const records = log([
      { at: 3, pid: 2 },
      { at: 4, pid: 1, marker: 'abort' },
      { at: 5, pid: 2 },
      { at: 6, pid: 2, marker: 'abort' },
      { at: 7, pid: 3 },
    ]);
    assert.deepEqual(kept(records, aborted([1, 0], [2, 3])), ['abort:p1@4', 'abort:p2@6', 'p3@7']);
  });

  test('a producer whose transaction aborted has its next, committed transaction kept', () => {
    const records = log([
      { at: 0, pid: 1, count: 2 },
      { at: 2, pid: 1, marker: 'abort' },
      { at: 3, pid: 1 },
      { at: 4, pid: 1, marker: 'commit' },
      { at: 5, pid: 1 },
      { at: 6, pid: 1, marker: 'abort' },
    ]);
    assert.deepEqual(kept(records, aborted([1, 0], [1, 5])), [
      'abort:p1@2',
      'p1@3',
      'commit:p1@4',
      'abort:p1@6',
    ]);
  });

  test('a range with no marker in the fetch (it spans the fetch boundary) drops everything of it', () => {
    const records = log([
      { at: 10, pid: 1, count: 3 },
      { at: 13, pid: 2 },
      { at: 14, pid: 1, count: 2 },
    ]);
    assert.deepEqual(kept(records, aborted([1, 4])), ['p2@13']);
  });

  test('a batch that begins before the range counts by its last offset', () => {
    // One batch of p1 at 0-4; the range listed starts inside it (a fetch never splits a batch).
    const records = log([
      { at: 0, pid: 1, count: 5 },
      { at: 5, pid: 1, marker: 'abort' },
    ]);
    assert.deepEqual(kept(records, aborted([1, 3])), ['abort:p1@5']);
  });

  test('non-transactional batches are never dropped, whatever the producer id', () => {
    const records = log([
      { at: 0, pid: 1, txn: false },
      { at: 1, pid: 1 },
      { at: 2, pid: -1, txn: false },
      { at: 3, pid: 1, marker: 'abort' },
    ]);
    assert.deepEqual(kept(records, aborted([1, 0])), ['p1@0', 'p-1@2', 'abort:p1@3']);
  });

  test('no aborted transactions (or a null list): everything is kept', () => {
    const records = log([
      { at: 0, pid: 1, count: 2 },
      { at: 2, pid: 1, marker: 'commit' },
    ]);
    assert.deepEqual(kept(records, null), ['p1@0', 'p1@1', 'commit:p1@2']);
    assert.deepEqual(kept(records, []), ['p1@0', 'p1@1', 'commit:p1@2']);
  });

  test('batches are regrouped by their shared context, and end where the batch header says', () => {
    // The second batch lost its last two records to compaction: it still ends at 6.
    const batches = batchesOf(
      log([
        { at: 0, pid: 1, count: 2 },
        { at: 2, pid: 1, count: 3, tail: 2 },
      ]),
    );
    assert.deepEqual(
      batches.map((b) => [b.records.map((r) => r.offset), b.lastOffset]),
      [
        [['0', '1'], 1n],
        [['2', '3', '4'], 6n],
      ],
    );
  });
});
