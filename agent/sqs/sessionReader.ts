// Reads one route's SQS session shadow for its session stream (docs/providers/sqs.md). SQS has no
// push consumer: the reader long-polls, at most as many messages held as the stream has credit
// for, keeps each held message invisible (extending its visibility) until the sidecar answers,
// and only then deletes it (ack) or releases it with visibility 0 (reject: what the app's failed
// receive does — the shadow has the source's RedrivePolicy, so after maxReceiveCount receives the
// message reaches the same dead-letter queue). A message is settled once SQS answered the delete
// or the release. Stopping releases what the sidecar never answered, so a resumed stream or the
// route's drain gets it at once.
// An earlier stream's answers whose proof never came back (routeStream.ts invariant 4) are
// proven here: such a message that comes again was not deleted; none was if, after the
// earlier reader's hold has run out (one visibility timeout plus the counts' lag), the shadow
// shows nothing visible and nothing in flight but what this reader holds.
import {
  ChangeMessageVisibilityBatchCommand,
  ChangeMessageVisibilityCommand,
  DeleteMessageCommand,
  GetQueueAttributesCommand,
  ReceiveMessageCommand,
  SQSClient,
  type Message,
} from '@aws-sdk/client-sqs';
import { sqsShadowMessage } from '../../core/providers/sqs/message';
import type { SnsEnvelope } from '../../core/providers/sqs/headers';
import type { SessionReader } from '../sessionStream/reader';
import type { RouteStream } from '../sessionStream/routeStream';
import { isQueueMissing } from './errors';

/** How long a held message stays invisible between extensions; extended every third of it. */
const HOLD_SECONDS = 60;
const RECEIVE_WAIT_SECONDS = 5;
/** SQS returns at most 10 messages per receive. */
const MAX_RECEIVE = 10;
const AWAITING_CHECK_MS = 1_000;
const FAILURE_BACKOFF_MS = 1_000;

export interface SqsReaderConfig {
  /** The logical queue. */
  queue: string;
  /** The session shadow's URL. */
  shadowUrl: string;
  client: SQSClient;
  /** Whether the reader destroys the client when it stops. */
  ownsClient: boolean;
  /** How long SQS's approximate counts may trail a change (agent/sqs/config.ts countsLagMs). */
  countsLagMs: number;
  /** How the session's filter view reads SNS envelopes: as the queue declares. */
  snsEnvelope: SnsEnvelope;
}

interface Held {
  readonly receipt: string;
  /** Set once the sidecar answered: the delete or release is under way. */
  answered: boolean;
}

export class SqsSessionReader implements SessionReader {
  private stopping = false;
  private readonly abort = new AbortController();
  private starting: Promise<void> | undefined;
  private loop: Promise<void> | undefined;
  private stopped: Promise<void> | undefined;
  private extender: NodeJS.Timeout | undefined;
  private readonly held = new Map<string, Held>();
  private readonly settling = new Set<Promise<void>>();
  private order = Promise.resolve();
  private startedAt = 0;

  constructor(private readonly config: SqsReaderConfig) {}

  start(stream: RouteStream, onFailure: (err: unknown) => void): Promise<void> {
    this.starting ??= this.open(stream, onFailure);
    return this.starting;
  }

  /** The first receive proves the shadow can be read (a missing shadow rejects the start); the
   * reader then runs until stopped. */
  private async open(stream: RouteStream, onFailure: (err: unknown) => void): Promise<void> {
    this.startedAt = Date.now();
    const first = this.receive(stream.window);
    this.loop = first
      .then(async (messages) => {
        this.accept(messages, stream);
        if (this.stopping) return;
        this.extender = setInterval(() => void this.extend(), (HOLD_SECONDS * 1000) / 3);
        if (stream.awaits(this.config.queue)) void this.proveAwaiting(stream);
        await this.run(stream, onFailure);
      })
      .catch(() => undefined);
    await first;
  }

  private async run(stream: RouteStream, onFailure: (err: unknown) => void): Promise<void> {
    while (!this.stopping && !stream.isClosed) {
      const room = Math.min(MAX_RECEIVE, stream.window - this.held.size);
      if (room <= 0) {
        await sleep(100);
        continue;
      }
      let messages: Message[];
      try {
        messages = await this.receive(room);
      } catch (err) {
        if (this.stopping) return;
        if (isQueueMissing(err)) {
          onFailure(new Error(`session shadow ${this.config.shadowUrl} no longer exists`));
          return;
        }
        await sleep(FAILURE_BACKOFF_MS);
        continue;
      }
      this.accept(messages, stream);
    }
  }

  private async receive(max: number): Promise<Message[]> {
    const answer = await this.config.client.send(
      new ReceiveMessageCommand({
        QueueUrl: this.config.shadowUrl,
        MaxNumberOfMessages: Math.max(1, Math.min(MAX_RECEIVE, max)),
        WaitTimeSeconds: RECEIVE_WAIT_SECONDS,
        VisibilityTimeout: HOLD_SECONDS,
        MessageAttributeNames: ['All'],
        MessageSystemAttributeNames: ['All'],
      }),
      { abortSignal: this.abort.signal },
    );
    return answer.Messages ?? [];
  }

  private accept(messages: readonly Message[], stream: RouteStream): void {
    for (const message of messages) {
      const id = message.MessageId;
      const receipt = message.ReceiptHandle;
      if (id === undefined || receipt === undefined) continue;
      // On arrival, before any later proof looks at the shadow: this one was not deleted.
      stream.cameAgain(this.config.queue, id);
      this.held.set(id, { receipt, answered: false });
      this.order = this.order.then(() => this.forward(message, id, stream));
    }
  }

  private async forward(message: Message, id: string, stream: RouteStream): Promise<void> {
    if (this.stopping) return; // released on stop
    let sent;
    try {
      sent = await stream.send(
        this.config.queue,
        sqsShadowMessage(this.config.queue, message, this.config.snsEnvelope),
      );
    } catch {
      return; // the stream closed first: released on stop
    }
    const { tag } = sent;
    sent.answered.then(
      (answer) => {
        const held = this.held.get(id);
        if (!held) return;
        held.answered = true;
        const done = this.settle(id, held.receipt, answer)
          .then((ok) => {
            if (ok) stream.settle([tag]);
          })
          .finally(() => this.settling.delete(done));
        this.settling.add(done);
      },
      () => undefined,
    );
  }

  /** Deletes (ack) or releases (reject) a held message; true once SQS answered it. A refused
   * receipt handle means the hold ran out: the message comes again, so nothing is settled. */
  private async settle(id: string, receipt: string, answer: 'ack' | 'reject'): Promise<boolean> {
    try {
      const { client, shadowUrl } = this.config;
      if (answer === 'ack')
        await client.send(new DeleteMessageCommand({ QueueUrl: shadowUrl, ReceiptHandle: receipt }));
      else
        await client.send(
          new ChangeMessageVisibilityCommand({
            QueueUrl: shadowUrl,
            ReceiptHandle: receipt,
            VisibilityTimeout: 0,
          }),
        );
      return true;
    } catch {
      return false;
    } finally {
      this.held.delete(id);
    }
  }

  /** Keeps every unanswered held message invisible for another hold. */
  private async extend(): Promise<void> {
    const entries = [...this.held.entries()].filter(([, h]) => !h.answered);
    for (let i = 0; i < entries.length; i += MAX_RECEIVE) {
      const batch = entries.slice(i, i + MAX_RECEIVE);
      try {
        const answer = await this.config.client.send(
          new ChangeMessageVisibilityBatchCommand({
            QueueUrl: this.config.shadowUrl,
            Entries: batch.map(([, h], n) => ({
              Id: String(n),
              ReceiptHandle: h.receipt,
              VisibilityTimeout: HOLD_SECONDS,
            })),
          }),
        );
        // A refused extension: the hold ran out and the message comes again (a new receipt).
        for (const failed of answer.Failed ?? []) {
          const entry = batch[Number(failed.Id)];
          if (entry && !entry[1].answered) this.held.delete(entry[0]);
        }
      } catch {
        // Unreachable: the next tick tries again; a hold that ran out comes back as a new receive.
      }
    }
  }

  /**
   * Settles the earlier stream's unproven answers once the shadow shows SQS had them: that
   * reader's holds have run out (so what it did not delete is visible again and came here, which
   * took it off the waiting set), and the shadow has nothing visible or delayed and nothing in
   * flight but what this reader holds.
   */
  private async proveAwaiting(stream: RouteStream): Promise<void> {
    const { queue, shadowUrl, client, countsLagMs } = this.config;
    const earliest = this.startedAt + HOLD_SECONDS * 1000 + countsLagMs;
    while (!this.stopping && stream.awaits(queue)) {
      if (Date.now() >= earliest) {
        try {
          const { Attributes: a = {} } = await client.send(
            new GetQueueAttributesCommand({
              QueueUrl: shadowUrl,
              AttributeNames: [
                'ApproximateNumberOfMessages',
                'ApproximateNumberOfMessagesNotVisible',
                'ApproximateNumberOfMessagesDelayed',
              ],
            }),
          );
          const visible = Number(a.ApproximateNumberOfMessages ?? NaN);
          const inFlight = Number(a.ApproximateNumberOfMessagesNotVisible ?? NaN);
          const delayed = Number(a.ApproximateNumberOfMessagesDelayed ?? NaN);
          if (visible === 0 && delayed === 0 && inFlight <= this.held.size && !this.stopping) {
            stream.resolveAwaiting(queue);
            return;
          }
        } catch {
          return; // the next stream looks again
        }
      }
      await sleep(AWAITING_CHECK_MS);
    }
  }

  stop(): Promise<void> {
    this.stopped ??= this.close();
    return this.stopped;
  }

  private async close(): Promise<void> {
    this.stopping = true;
    this.abort.abort();
    await this.starting?.catch(() => undefined);
    await this.loop;
    if (this.extender) clearInterval(this.extender);
    await this.order;
    // The last deletes and releases answered and settled before the stream finishes.
    while (this.settling.size > 0) await Promise.all([...this.settling]);
    // What the sidecar never answered goes back to the shadow at once (visibility 0).
    const unanswered = [...this.held.values()].filter((h) => !h.answered);
    this.held.clear();
    await Promise.all(
      unanswered.map((h) =>
        this.config.client
          .send(
            new ChangeMessageVisibilityCommand({
              QueueUrl: this.config.shadowUrl,
              ReceiptHandle: h.receipt,
              VisibilityTimeout: 0,
            }),
          )
          .catch(() => undefined),
      ),
    );
    if (this.config.ownsClient) this.config.client.destroy();
  }
}

const sleep = (ms: number) => new Promise((wake) => setTimeout(wake, ms));
