// The relay's ack ledger (agent/rabbitmq/ackLedger.ts) against a model of one AMQP channel's
// outstanding delivery tags, where a `multiple` ack settles every outstanding tag up to the one
// it names. Narrow pure logic; that the relay loses nothing with it on a real broker is
// test/conformance/rabbitmq-relay-acks.test.ts's job.
import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import fc from 'fast-check';
import { AckLedger, type AckState } from '../../../agent/rabbitmq/ackLedger';

const HOLD = 100;

/** One channel: the tags the broker holds unacked, and the state the relay gave each. */
class Channel {
  readonly outstanding = new Set<number>();
  readonly state = new Map<number, AckState>();
  readonly acked: number[] = [];
  readonly ledger = new AckLedger<number>(HOLD);
  private next = 1;

  deliver(now: number): number {
    const tag = this.next++;
    this.outstanding.add(tag);
    this.state.set(tag, 'publishing');
    this.ledger.add(tag, now);
    return tag;
  }

  mark(tag: number, state: AckState, now: number): void {
    if (!this.outstanding.has(tag)) return;
    this.state.set(tag, state);
    this.ledger.mark(tag, state, now);
  }

  nack(tag: number): void {
    if (!this.outstanding.has(tag) || this.state.get(tag) === 'confirmed') return;
    this.outstanding.delete(tag);
    this.ledger.remove(tag);
  }

  /** Applies a plan as the broker would, failing on any ack that settles an unconfirmed tag. */
  flush(now: number): number | undefined {
    const plan = this.ledger.take(now);
    if (plan.upTo !== undefined) {
      for (const tag of [...this.outstanding].filter((t) => t <= plan.upTo!)) this.settle(tag, 'multiple');
    }
    for (const tag of plan.singles) {
      assert.ok(this.outstanding.has(tag), `single ack of ${tag}, which is not outstanding`);
      this.settle(tag, 'single');
    }
    assert.deepEqual(
      [...plan.acked].sort((a, b) => a - b),
      this.acked.slice(this.acked.length - plan.acked.length).sort((a, b) => a - b),
      'acked lists what the acks settled',
    );
    const first = Math.min(...this.outstanding);
    const confirmedLeft = [...this.outstanding].filter((t) => this.state.get(t) === 'confirmed');
    if (this.state.get(first) === 'confirmed' || this.state.get(first) === 'retrying')
      assert.deepEqual(confirmedLeft, [], `confirmed deliveries held up behind ${first}`);
    return plan.wakeAt;
  }

  private settle(tag: number, how: string): void {
    assert.equal(this.state.get(tag), 'confirmed', `${how} ack settled ${tag} while ${this.state.get(tag)}`);
    this.outstanding.delete(tag);
    this.acked.push(tag);
  }
}

describe('relay ack ledger', () => {
  test('a confirmed run at the head is one multiple ack on its last tag', () => {
    const ledger = new AckLedger<string>(HOLD);
    for (const d of ['a', 'b', 'c', 'd']) ledger.add(d, 0);
    for (const d of ['a', 'b', 'd']) ledger.mark(d, 'confirmed', 1);
    const plan = ledger.take(2);
    assert.equal(plan.upTo, 'b');
    assert.deepEqual(plan.singles, []);
    assert.deepEqual(plan.acked, ['a', 'b']);
    assert.equal(plan.wakeAt, HOLD, 'd waits for c until c has published for HOLD ms');
    assert.equal(ledger.size, 2);
  });

  test('confirmed deliveries behind a retrying one are acked one by one, the retrying one never', () => {
    const ledger = new AckLedger<string>(HOLD);
    for (const d of ['a', 'b', 'c', 'd']) ledger.add(d, 0);
    ledger.mark('a', 'confirmed', 1);
    ledger.mark('b', 'retrying', 1);
    ledger.mark('c', 'confirmed', 1);
    ledger.mark('d', 'confirmed', 1);
    const plan = ledger.take(2);
    assert.equal(plan.upTo, 'a');
    assert.deepEqual(plan.singles, ['c', 'd']);
    assert.equal(ledger.size, 1);
    ledger.remove('b'); // nacked
    assert.deepEqual(ledger.take(3).acked, []);
    assert.equal(ledger.size, 0);
  });

  test('a head publishing for HOLD ms no longer holds up the confirmed ones behind it', () => {
    const ledger = new AckLedger<string>(HOLD);
    for (const d of ['a', 'b']) ledger.add(d, 0);
    ledger.mark('b', 'confirmed', 5);
    assert.deepEqual(ledger.take(HOLD - 1).acked, []);
    const plan = ledger.take(HOLD);
    assert.equal(plan.upTo, undefined);
    assert.deepEqual(plan.singles, ['b']);
  });

  test('a nacked delivery between confirmed ones is passed by the multiple ack, not settled by it', () => {
    const ledger = new AckLedger<string>(HOLD);
    for (const d of ['a', 'b', 'c']) ledger.add(d, 0);
    ledger.mark('a', 'confirmed', 1);
    ledger.mark('b', 'retrying', 1);
    ledger.mark('c', 'confirmed', 1);
    ledger.remove('b');
    const plan = ledger.take(2);
    assert.equal(plan.upTo, 'c');
    assert.deepEqual(plan.acked, ['a', 'c']);
  });

  test('no ack ever settles an unconfirmed delivery, and every confirmed one is acked in the end', () => {
    type Op =
      | { kind: 'deliver' }
      | { kind: 'confirm' | 'retry' | 'republish' | 'nack'; pick: number }
      | { kind: 'flush' }
      | { kind: 'tick'; ms: number };
    const op: fc.Arbitrary<Op> = fc.oneof(
      fc.constant({ kind: 'deliver' as const }),
      fc.record({
        kind: fc.constantFrom('confirm' as const, 'retry' as const, 'republish' as const, 'nack' as const),
        pick: fc.nat(),
      }),
      fc.constant({ kind: 'flush' as const }),
      fc.record({ kind: fc.constant('tick' as const), ms: fc.integer({ min: 1, max: 2 * HOLD }) }),
    );
    fc.assert(
      fc.property(fc.array(op, { maxLength: 200 }), (ops) => {
        const ch = new Channel();
        let now = 0;
        for (const o of ops) {
          const open = [...ch.outstanding];
          const tag = 'pick' in o && open.length > 0 ? open[o.pick % open.length]! : undefined;
          if (o.kind === 'deliver') ch.deliver(now);
          else if (o.kind === 'tick') now += o.ms;
          else if (o.kind === 'flush') ch.flush(now);
          else if (tag === undefined || ch.state.get(tag) === 'confirmed') continue;
          else if (o.kind === 'confirm') ch.mark(tag, 'confirmed', now);
          else if (o.kind === 'retry') ch.mark(tag, 'retrying', now);
          else if (o.kind === 'republish') ch.mark(tag, 'publishing', now);
          else ch.nack(tag);
        }
        // Every delivery reaches an end (confirmed or nacked); flushes then ack all of them.
        for (const tag of ch.outstanding) ch.mark(tag, 'confirmed', now);
        ch.flush(now);
        assert.deepEqual([...ch.outstanding], [], 'confirmed deliveries left unacked');
        assert.equal(ch.ledger.size, 0);
      }),
      { numRuns: 500 },
    );
  });
});
