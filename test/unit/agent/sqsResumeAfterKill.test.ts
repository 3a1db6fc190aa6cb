// A queue-agent killed (kill -9) while its SQS pump held source messages: its successor resumes
// the pump once the fence's lock timeout has passed (docs/providers/sqs.md "The fence"), not the
// minute the killed pump's receives used to keep those messages in flight. The successor cannot
// tell the killed pump's messages from another consumer's, so its quiet proof waits until they
// are back; they must be back with the lock, and every one of them is copied then.
// Against an in-memory SQS with visibility timeouts (only what the engine calls).
import assert from 'node:assert/strict';
import { randomUUID } from 'node:crypto';
import { setTimeout as sleep } from 'node:timers/promises';
import { test } from 'node:test';
import {
  ChangeMessageVisibilityBatchCommand,
  ChangeMessageVisibilityCommand,
  CreateQueueCommand,
  DeleteMessageCommand,
  DeleteQueueCommand,
  GetQueueAttributesCommand,
  ReceiveMessageCommand,
  SendMessageCommand,
  type Message,
  type SQSClient,
} from '@aws-sdk/client-sqs';
import type { Checkpoint, Outcome } from '../../../agent/engine/contract';
import type { SqsEngineConfig } from '../../../agent/sqs/config';
import { SqsEngine } from '../../../agent/sqs/engine';

const ENDPOINT = 'http://sqs.test/000000000000';
const nameOf = (url: string) => url.slice(url.lastIndexOf('/') + 1);

interface Stored {
  readonly id: string;
  readonly body: string;
  readonly attributes: Message['MessageAttributes'];
  receipt?: string;
  visibleAt: number;
}

/** Queues with visibility timeouts; each client may be cut off (its process killed). */
class MemorySqs {
  readonly queues = new Map<string, { attributes: Record<string, string>; messages: Stored[] }>();

  create(name: string, attributes: Record<string, string> = {}): void {
    if (!this.queues.has(name)) this.queues.set(name, { attributes: { ...attributes }, messages: [] });
  }

  bodies(name: string): string[] {
    return (this.queues.get(name)?.messages ?? []).map((m) => m.body);
  }

  inFlight(name: string): number {
    return (this.queues.get(name)?.messages ?? []).filter((m) => m.visibleAt > Date.now()).length;
  }

  /** A client of this SQS; `onReceive` sees what each of its receives from `watch` returned. */
  client(watch?: { queue: string; onReceive(messages: Message[]): void }) {
    const fake = {
      dead: false,
      send: async (command: unknown, options?: { abortSignal?: AbortSignal }): Promise<unknown> => {
        if (fake.dead) throw Object.assign(new Error('connect ECONNREFUSED'), { name: 'NetworkingError' });
        const answer = await this.answer(command, options?.abortSignal);
        if (
          watch &&
          command instanceof ReceiveMessageCommand &&
          nameOf(command.input.QueueUrl!) === watch.queue
        )
          watch.onReceive((answer as { Messages: Message[] }).Messages);
        return answer;
      },
    };
    // Only `send` is used by the engine.
    return fake as typeof fake & SQSClient;
  }

  private queue(url: string | undefined) {
    const q = this.queues.get(nameOf(url ?? ''));
    if (!q)
      throw Object.assign(new Error('no such queue'), {
        name: 'QueueDoesNotExist',
        $metadata: { httpStatusCode: 400 },
      });
    return q;
  }

  private held(url: string | undefined, receipt: string | undefined): Stored {
    const m = this.queue(url).messages.find((x) => x.receipt === receipt && x.visibleAt > Date.now());
    if (!m)
      throw Object.assign(new Error('receipt handle is not current'), {
        name: 'ReceiptHandleIsInvalid',
        $metadata: { httpStatusCode: 400 },
      });
    return m;
  }

  private async answer(command: unknown, signal: AbortSignal | undefined): Promise<unknown> {
    if (command instanceof CreateQueueCommand) {
      this.create(command.input.QueueName!, command.input.Attributes);
      return { QueueUrl: `${ENDPOINT}/${command.input.QueueName!}` };
    }
    if (command instanceof DeleteQueueCommand) {
      this.queue(command.input.QueueUrl);
      this.queues.delete(nameOf(command.input.QueueUrl!));
      return {};
    }
    if (command instanceof GetQueueAttributesCommand) {
      const q = this.queue(command.input.QueueUrl);
      const now = Date.now();
      return {
        Attributes: {
          VisibilityTimeout: '30',
          ...q.attributes,
          QueueArn: `arn:aws:sqs:us-east-1:000000000000:${nameOf(command.input.QueueUrl!)}`,
          ApproximateNumberOfMessages: String(q.messages.filter((m) => m.visibleAt <= now).length),
          ApproximateNumberOfMessagesNotVisible: String(q.messages.filter((m) => m.visibleAt > now).length),
          ApproximateNumberOfMessagesDelayed: '0',
        },
      };
    }
    if (command instanceof SendMessageCommand) {
      const q = this.queue(command.input.QueueUrl);
      const id = randomUUID();
      q.messages.push({
        id,
        body: command.input.MessageBody ?? '',
        attributes: command.input.MessageAttributes,
        visibleAt: 0,
      });
      return { MessageId: id };
    }
    if (command instanceof DeleteMessageCommand) {
      const q = this.queue(command.input.QueueUrl);
      const m = this.held(command.input.QueueUrl, command.input.ReceiptHandle);
      q.messages.splice(q.messages.indexOf(m), 1);
      return {};
    }
    if (command instanceof ChangeMessageVisibilityCommand) {
      const m = this.held(command.input.QueueUrl, command.input.ReceiptHandle);
      m.visibleAt = Date.now() + (command.input.VisibilityTimeout ?? 0) * 1000;
      return {};
    }
    if (command instanceof ChangeMessageVisibilityBatchCommand) {
      const failed: { Id: string; Code: string }[] = [];
      for (const e of command.input.Entries ?? []) {
        try {
          this.held(command.input.QueueUrl, e.ReceiptHandle).visibleAt =
            Date.now() + (e.VisibilityTimeout ?? 0) * 1000;
        } catch {
          failed.push({ Id: e.Id!, Code: 'ReceiptHandleIsInvalid' });
        }
      }
      return { Successful: [], Failed: failed };
    }
    if (command instanceof ReceiveMessageCommand) {
      const { QueueUrl, MaxNumberOfMessages = 1, VisibilityTimeout, WaitTimeSeconds = 0 } = command.input;
      // A long poll, cut short: an empty answer before the wait is over is one SQS may give too.
      const until = Date.now() + Math.min(WaitTimeSeconds * 1000, 200);
      for (;;) {
        if (signal?.aborted) throw Object.assign(new Error('aborted'), { name: 'AbortError' });
        const q = this.queue(QueueUrl);
        const now = Date.now();
        const got = q.messages.filter((m) => m.visibleAt <= now).slice(0, MaxNumberOfMessages);
        if (got.length > 0 || now >= until) {
          const seconds = VisibilityTimeout ?? Number(q.attributes.VisibilityTimeout ?? 30);
          return {
            Messages: got.map((m) => {
              m.receipt = randomUUID();
              m.visibleAt = now + seconds * 1000;
              return {
                MessageId: m.id,
                ReceiptHandle: m.receipt,
                Body: m.body,
                MessageAttributes: m.attributes,
              };
            }),
          };
        }
        await sleep(10);
      }
    }
    throw new Error(`the in-memory SQS does not answer ${(command as object).constructor.name}`);
  }
}

/** What the queue-agent passes the engine (agent/sqs/agentProvider.ts): the lock timeout of
 * `--sqs-lock-timeout` (its minimum here) and the counts' lag; the rest only paces the test. */
const LOCK_SECONDS = 3;
const SOURCE_VISIBILITY_SECONDS = 1;
const config: SqsEngineConfig = {
  activationId: 'inst/uid-1',
  epoch: 1,
  region: 'us-east-1',
  sourceQueueUrl: `${ENDPOINT}/payments`,
  appShadow: 'qs-sapp-payments-x',
  lockQueue: 'qs-slock-payments-x',
  timing: {
    lockVisibilitySeconds: LOCK_SECONDS,
    countsLagMs: 0,
    pollIntervalMs: 100,
    receiveWaitSeconds: 1,
    retryInitialMs: 50,
    retryMaxMs: 200,
  },
};

function done<T>(outcome: Outcome<T>, what: string): Extract<Outcome<T>, { kind: 'done' }> {
  assert.equal(outcome.kind, 'done', `${what}: ${JSON.stringify(outcome)}`);
  return outcome as Extract<Outcome<T>, { kind: 'done' }>;
}

test("a queue-agent killed while its SQS pump held messages: the successor's pump resumes once the lock timeout passed, and copies every one", async () => {
  const sqs = new MemorySqs();
  sqs.create('payments', { VisibilityTimeout: String(SOURCE_VISIBILITY_SECONDS) });
  let killedAt = 0;
  // The first agent dies the moment a receive handed its pump messages: they stay in flight,
  // held by nobody, as after kill -9 (or a long poll the dead process never read).
  const first = sqs.client({
    queue: 'payments',
    onReceive: (messages) => {
      if (messages.length === 0 || first.dead) return;
      first.dead = true;
      killedAt = Date.now();
    },
  });
  const killed = new SqsEngine(config, { client: first });
  const successor = new SqsEngine(config, { client: sqs.client() });
  try {
    done(await killed.prepare(), 'prepare');
    const started = done(await killed.start(), 'start');
    const checkpoint: Checkpoint = started.checkpoint;

    const sent = ['p-1', 'p-2', 'p-3', 'p-4', 'p-5'];
    for (const body of sent)
      await sqs.client().send(new SendMessageCommand({ QueueUrl: config.sourceQueueUrl, MessageBody: body }));
    for (let i = 0; killedAt === 0 && i < 100; i++) await sleep(20);
    assert.ok(killedAt > 0, 'the first pump received messages and its queue-agent was killed');
    assert.ok(sqs.inFlight('payments') > 0, 'the killed pump left source messages in flight');

    // The restarted queue-agent recovers the engine each pass until it is done (agent/queueAgent/stepRunner.ts).
    const budgetMs = (LOCK_SECONDS + SOURCE_VISIBILITY_SECONDS) * 1000 + 3_000;
    let recovered: Outcome<unknown> = await successor.recover(checkpoint, { generation: 0, routes: [] });
    while (recovered.kind === 'pending' && Date.now() - killedAt < budgetMs + 20_000) {
      await sleep(100);
      recovered = await successor.recover(checkpoint, { generation: 0, routes: [] });
    }
    const waited = Date.now() - killedAt;
    done(recovered, 'recover');
    assert.ok(
      waited <= budgetMs,
      `the successor's pump resumed ${waited} ms after the kill: more than the lock timeout (${LOCK_SECONDS} s) and one quiet window (${SOURCE_VISIBILITY_SECONDS} s) allow`,
    );

    // Nothing lost: what the killed pump held came back and was copied to the application shadow.
    const copied = () =>
      sent.every((b) => sqs.bodies(config.appShadow).includes(b)) && sqs.bodies('payments').length === 0;
    for (let i = 0; i < 200 && !copied(); i++) await sleep(20);
    assert.deepEqual([...new Set(sqs.bodies(config.appShadow))].sort(), sent);
    assert.deepEqual(sqs.bodies('payments'), [], 'the source is empty: every message was copied and deleted');
  } finally {
    await successor.close();
    await killed.close();
  }
});
