// The SQS fence (docs/providers/sqs.md "The fence: a lock message held in flight") against the
// environment's SQS, one lock queue per test: when a lease starts, who may take the lock back
// after losing it, and that a superseded engine stays stopped.
import assert from 'node:assert/strict';
import { after, describe, test } from 'node:test';
import { CreateQueueCommand, DeleteQueueCommand, SQSClient } from '@aws-sdk/client-sqs';
import { LockFence } from '../../agent/sqs/fence';
import { loadServices, uniqueName } from '../support/services';
import { sleep } from '../support/poll';
import { testLogger } from './support';

const LOCK_SECONDS = 3;
const { endpoint, region } = loadServices().sqs;
const credentials = { accessKeyId: 'queuesplit-test', secretAccessKey: 'queuesplit-test' };
const admin = new SQSClient({ endpoint, region, credentials });
const clients: SQSClient[] = [admin];
const queues: string[] = [];
after(async () => {
  for (const url of queues)
    await admin.send(new DeleteQueueCommand({ QueueUrl: url })).catch(() => undefined);
  for (const c of clients) c.destroy();
});

/** A fence with its own client, whose network a test can cut. */
function contender(lockQueue: string, lockUrl: string) {
  // `beforeLongPoll`: awaited before a receive that waits (a caller's acquire, never the
  // keeper's), so a test can let the keeper's own receive go first.
  const state: { cut: boolean; beforeLongPoll?: () => Promise<void> } = { cut: false };
  const client = new SQSClient({ endpoint, region, credentials, maxAttempts: 1 });
  client.middlewareStack.add(
    (next) => async (args) => {
      if (state.cut)
        throw Object.assign(new Error('connect ECONNREFUSED (network cut by the test)'), {
          name: 'NetworkingError',
        });
      const input = args.input as { WaitTimeSeconds?: number };
      if (state.beforeLongPoll && (input.WaitTimeSeconds ?? 0) > 0) await state.beforeLongPoll();
      return next(args);
    },
    { step: 'finalizeRequest', name: 'testNetworkCut' },
  );
  clients.push(client);
  const fence = new LockFence({
    client,
    lockQueue,
    lockUrl,
    activationId: lockQueue,
    epoch: 1,
    visibilitySeconds: LOCK_SECONDS,
    log: testLogger(),
    onReachable: () => undefined,
    onChange: () => undefined,
  });
  return { fence, state };
}

async function lockQueue(visibilitySeconds = LOCK_SECONDS): Promise<{ name: string; url: string }> {
  const name = uniqueName('cf-sqs-lock');
  const { QueueUrl } = await admin.send(
    new CreateQueueCommand({
      QueueName: name,
      Attributes: { VisibilityTimeout: String(visibilitySeconds), MessageRetentionPeriod: '1209600' },
    }),
  );
  queues.push(QueueUrl!);
  return { name, url: QueueUrl! };
}

/** Samples `held` every 100 ms for `ms`: whether it was ever (or always) true. */
async function watchHeld(fence: LockFence, ms: number): Promise<{ ever: boolean; always: boolean }> {
  let ever = false;
  let always = true;
  for (const end = Date.now() + ms; Date.now() < end;) {
    ever ||= fence.held;
    always &&= fence.held;
    await sleep(100);
  }
  return { ever, always };
}

describe('SQS fence', { concurrency: 3 }, () => {
  test('a lock received at the end of a long poll is held from then on, not lost at once', async () => {
    const q = await lockQueue();
    const first = contender(q.name, q.url);
    const second = contender(q.name, q.url);
    try {
      await first.fence.seed();
      assert.equal((await first.fence.acquire(5_000)).kind, 'held');
      first.fence.drop(); // stops extending without letting go: the lock comes back after its timeout
      // The second's receive waits in a long poll until the lock times out.
      assert.equal((await second.fence.acquire((LOCK_SECONDS + 3) * 1000)).kind, 'held');
      const held = await watchHeld(second.fence, 2 * LOCK_SECONDS * 1000);
      assert.ok(held.always, 'the successor holds the lock it received, and keeps extending it');
    } finally {
      await Promise.all([first.fence.release(), second.fence.release()]);
    }
  });

  test('an engine superseded by a successor never takes the lock back, even while the successor’s lease lapses', async () => {
    const q = await lockQueue();
    const first = contender(q.name, q.url);
    const second = contender(q.name, q.url);
    try {
      await first.fence.seed();
      assert.equal((await first.fence.acquire(5_000)).kind, 'held');
      first.state.cut = true; // the first is partitioned: its lease lapses, the successor takes over
      assert.equal((await second.fence.acquire((LOCK_SECONDS + 3) * 1000)).kind, 'held');
      assert.equal(first.fence.held, false);
      second.state.cut = true; // now the successor stalls past its lease
      first.state.cut = false; // and the first is back, trying to win the lock back
      const firstHeld = await watchHeld(first.fence, 3 * LOCK_SECONDS * 1000);
      assert.equal(firstHeld.ever, false, 'the superseded engine never held the lock again');
      assert.equal((await first.fence.acquire(2 * LOCK_SECONDS * 1000)).kind, 'taken');
      assert.match(first.fence.lost?.reason ?? '', /took this split's fence over/);
      second.state.cut = false;
      assert.equal(
        (await second.fence.acquire((LOCK_SECONDS + 3) * 1000)).kind,
        'held',
        'the successor wins its own lock back',
      );
      assert.equal(first.fence.held, false);
    } finally {
      first.state.cut = second.state.cut = false;
      await Promise.all([first.fence.release(), second.fence.release()]);
    }
  });

  test('a sole holder whose lease lapsed (nobody else came) wins its own lock back', async () => {
    const q = await lockQueue();
    const only = contender(q.name, q.url);
    try {
      await only.fence.seed();
      assert.equal((await only.fence.acquire(5_000)).kind, 'held');
      only.state.cut = true;
      await sleep((LOCK_SECONDS + 1) * 1000);
      assert.equal(only.fence.held, false);
      only.state.cut = false;
      assert.equal((await only.fence.acquire((LOCK_SECONDS + 3) * 1000)).kind, 'held');
      assert.equal(only.fence.lost, undefined);
    } finally {
      only.state.cut = false;
      await only.fence.release();
    }
  });

  test('an acquire whose long poll the keeper’s own receive beat answers held, not taken', async () => {
    const q = await lockQueue();
    const only = contender(q.name, q.url);
    try {
      await only.fence.seed();
      assert.equal((await only.fence.acquire(5_000)).kind, 'held');
      only.state.cut = true;
      await sleep((LOCK_SECONDS + 1) * 1000); // the lease lapsed and the lock is visible again
      assert.equal(only.fence.held, false);
      // The caller's long poll goes out only once the keeper could have won the lock back (or
      // after one lock timeout, six keeper ticks: then it receives the lock itself).
      only.state.beforeLongPoll = async () => {
        for (const end = Date.now() + LOCK_SECONDS * 1000; !only.fence.held && Date.now() < end;)
          await sleep(50);
      };
      only.state.cut = false;
      const got = await only.fence.acquire((LOCK_SECONDS + 3) * 1000);
      assert.equal(got.kind, 'held', `acquire answered ${JSON.stringify(got)} while held=${only.fence.held}`);
      assert.equal(only.fence.held, true);
      assert.equal(only.fence.lost, undefined);
    } finally {
      only.state.cut = false;
      only.state.beforeLongPoll = undefined;
      await only.fence.release();
    }
  });

  test('a lock queue made with another timeout (the setting changed since) is used as it is', async () => {
    const q = await lockQueue(4 * LOCK_SECONDS);
    const only = contender(q.name, q.url);
    try {
      await only.fence.seed();
      assert.equal((await only.fence.acquire(5_000)).kind, 'held');
      assert.ok((await watchHeld(only.fence, 2 * LOCK_SECONDS * 1000)).always);
    } finally {
      await only.fence.release();
    }
  });
});
