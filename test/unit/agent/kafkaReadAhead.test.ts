// The pump's read ahead (agent/kafka/readAhead.ts): used only at exactly the positions it was
// started at, once; anything else reads afresh. A fake read stands in for the broker (narrow
// pure logic); that the pump copies every record once with it on is the conformance suite's job.
import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import { ReadAhead, samePositions } from '../../../agent/kafka/readAhead';
import type { Offsets, PartitionRead } from '../../../agent/kafka/wire';

/** A read that answers with its call number, and remembers the positions it was asked for. */
function fakeRead(fail?: (n: number) => boolean) {
  const calls: Offsets[] = [];
  const read = (positions: Offsets): Promise<PartitionRead[]> => {
    calls.push(new Map(positions));
    const n = calls.length;
    if (fail?.(n)) return Promise.reject(new Error(`read ${n} failed`));
    return Promise.resolve([{ partition: 0, records: [], nextOffset: String(n), lastStableOffset: '0' }]);
  };
  return { calls, read };
}

const at = (...o: string[]) => new Map(o.map((x, p) => [p, x]));
const answer = (reads: PartitionRead[]) => reads[0]?.nextOffset;

describe('kafka read ahead', () => {
  test('samePositions compares every partition and the partition set', () => {
    assert.equal(samePositions(at('1', '2'), at('1', '2')), true);
    assert.equal(samePositions(at('1', '2'), at('1', '3')), false);
    assert.equal(samePositions(at('1', '2'), at('1')), false);
    assert.equal(samePositions(new Map([[1, '2']]), new Map([[0, '2']])), false);
  });

  test('a read ahead at the same positions is taken without a second read, once', async () => {
    const f = fakeRead();
    const ahead = new ReadAhead(f.read);
    ahead.start(at('5', '7'));
    assert.equal(answer(await ahead.take(at('5', '7'))), '1');
    assert.equal(f.calls.length, 1);
    assert.equal(answer(await ahead.take(at('5', '7'))), '2', 'taken once: the next take reads');
  });

  test('positions that moved since (a rewind, a refused partition) read afresh', async () => {
    const f = fakeRead();
    const ahead = new ReadAhead(f.read);
    ahead.start(at('5', '7'));
    assert.equal(answer(await ahead.take(at('3', '7'))), '2');
    assert.deepEqual(f.calls[1], at('3', '7'));
    ahead.start(at('5', '7'));
    assert.equal(answer(await ahead.take(at('5'))), '4', 'a partition left out is a mismatch');
  });

  test('the positions are copied at start: the caller moving its map later does not match', async () => {
    const f = fakeRead();
    const ahead = new ReadAhead(f.read);
    const positions = at('5');
    ahead.start(positions);
    positions.set(0, '9');
    assert.equal(answer(await ahead.take(at('9'))), '2');
  });

  test('a failed read ahead fails the take that uses it; one dropped or replaced never surfaces', async () => {
    const f = fakeRead((n) => n === 1 || n === 2);
    const ahead = new ReadAhead(f.read);
    ahead.start(at('5'));
    await assert.rejects(ahead.take(at('5')), /read 1 failed/);
    ahead.start(at('6'));
    ahead.drop();
    ahead.start(at('7'));
    assert.equal(answer(await ahead.take(at('7'))), '3');
    await new Promise((r) => setImmediate(r)); // an unhandled rejection would fail the run here
  });
});
