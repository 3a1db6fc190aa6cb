// SQS proofs (agent/sqs/proofs.ts, docs/providers/sqs.md "Proofs without an exclusive
// consumer"): a fact holds only when every sample over the whole window shows it; the first
// sample that does not ends the proof with the counts it saw.
import assert from 'node:assert/strict';
import { test } from 'node:test';
import type { SQSClient } from '@aws-sdk/client-sqs';
import { isEmpty, proveStable, readCounts } from '../../../agent/sqs/proofs';

/** A client whose GetQueueAttributes answers the given counts in turn (the last one repeats). */
function countsClient(answers: readonly (readonly [number, number, number] | 'missing')[]) {
  let i = 0;
  const client = {
    reads: 0,
    send: async () => {
      client.reads++;
      const a = answers[Math.min(i++, answers.length - 1)]!;
      if (a === 'missing') throw Object.assign(new Error('gone'), { name: 'QueueDoesNotExist' });
      return {
        Attributes: {
          ApproximateNumberOfMessages: String(a[0]),
          ApproximateNumberOfMessagesNotVisible: String(a[1]),
          ApproximateNumberOfMessagesDelayed: String(a[2]),
        },
      };
    },
  };
  // Only `send` is used by the code under test.
  return client as typeof client & SQSClient;
}

test('a queue proves empty only over the whole window', async () => {
  const client = countsClient([[0, 0, 0]]);
  const started = Date.now();
  const proof = await proveStable(client, 'url', isEmpty, 120, 20);
  assert.deepEqual(proof, { ok: true, missing: false });
  assert.ok(Date.now() - started >= 120, 'the window was waited out');
  assert.ok(client.reads >= 3, 'sampled across it');
});

test('one sample with a message in flight (or delayed) ends the proof with what it saw', async () => {
  for (const late of [
    [0, 1, 0],
    [0, 0, 2],
    [3, 0, 0],
  ] as const) {
    const proof = await proveStable(countsClient([[0, 0, 0], [0, 0, 0], late]), 'url', isEmpty, 10_000, 1);
    assert.deepEqual(proof, { ok: false, counts: { visible: late[0], inFlight: late[1], delayed: late[2] } });
  }
});

test('a queue that does not exist proves empty, and says so', async () => {
  assert.deepEqual(await proveStable(countsClient(['missing']), 'url', isEmpty, 1_000, 10), {
    ok: true,
    missing: true,
  });
  assert.equal(await readCounts(countsClient(['missing']), 'url'), 'missing');
});

test('other errors are not proofs: they reach the step, which answers pending', async () => {
  const client = {
    send: async () => {
      throw Object.assign(new Error('slow down'), {
        name: 'RequestThrottled',
        $metadata: { httpStatusCode: 400 },
      });
    },
  } as unknown as SQSClient; // only `send` is used
  await assert.rejects(proveStable(client, 'url', isEmpty, 100, 10), /slow down/);
});
