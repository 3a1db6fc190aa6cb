// The source pump (docs/providers/sqs.md "The pump: copy, then delete"): long-polls the source,
// copies each message to the one destination the route table (or the ledger) picks, and deletes
// the source message only after the copy's send succeeded. Messages it holds stay in flight:
// their visibility is extended while a copy is slow or retried, and a message whose copy fails
// is never released (every receive counts toward the source's redrive policy, fact 4), so a
// copy failure never pushes a message toward the dead-letter queue.
import {
  ChangeMessageVisibilityBatchCommand,
  DeleteMessageCommand,
  ReceiveMessageCommand,
  SendMessageCommand,
  type Message,
  type SQSClient,
} from '@aws-sdk/client-sqs';
import type { EngineHooks } from '../engine/contract';
import type { PumpSelection } from '../engine/port';
import type { PublishBarrier } from '../engine/publishBarrier';
import { Backoff, sleep } from '../engine/timing';
import type { Logger } from '../log';
import type { SqsTiming } from './config';
import { describeSqsError, errorName, isNetworkError, isQueueMissing, isReceiptInvalid } from './errors';
import { CopyLedger, type LedgerEntry } from './ledger';
import { copyOf, pumpDedupId, RECEIVE_ALL } from './messages';

export interface PumpDeps {
  readonly client: SQSClient;
  readonly sourceUrl: string;
  urlOf(queue: string): string;
  readonly timing: SqsTiming;
  readonly prefetch: number;
  /** A FIFO source: copies keep each message group's order and carry deduplication ids. */
  readonly fifo: boolean;
  readonly barrier: PublishBarrier;
  readonly hooks: EngineHooks;
  readonly log: Logger;
  /** The message attribute naming a message for hooks and logs (else its SQS MessageId). */
  readonly messageIdAttribute: string | undefined;
  select(message: Message): PumpSelection;
  /** Where a message the ledger knows goes now: its recorded destination while that still
   * stands, else where that destination's residue went. */
  recorded(entry: LedgerEntry): PumpSelection;
  onCopied(routeId: string | undefined): void;
  /** False once the fence is lost: nothing is sent, deleted or extended from then on. */
  fenceHeld(): boolean;
  /** Whether SQS answered (for `connected`). */
  onReachable(reachable: boolean): void;
}

/** A send that keeps failing, by destination: the status conditions report it. */
export interface CopyProblem {
  readonly destination: string;
  readonly missing: boolean;
  readonly reason: string;
  readonly since: string;
}

interface Held {
  readonly message: Message;
  readonly messageId: string;
  /** The newest receive's handle: a delete or an extension with an older one does nothing. */
  receiptHandle: string;
  failures: number;
}

export class SourcePump {
  readonly ledger = new CopyLedger();
  private running = false;
  private loop: Promise<void> | undefined;
  private abort: AbortController | undefined;
  private extender: NodeJS.Timeout | undefined;
  private readonly held = new Map<string, Held>();
  private readonly problemsByDestination = new Map<string, CopyProblem>();
  private sourceMissingSince: string | undefined;
  /** FIFO: the last copy of each message group, which the group's next copy waits for. */
  private readonly groupTails = new Map<string, Promise<void>>();

  constructor(private readonly deps: PumpDeps) {}

  get active(): boolean {
    return this.running;
  }

  /** Source messages held (received, not yet deleted). */
  get open(): number {
    return this.held.size;
  }

  /** Held messages whose copy failed at least once and is being retried. */
  get retrying(): number {
    let n = 0;
    for (const h of this.held.values()) if (h.failures > 0) n++;
    return n;
  }

  get problems(): CopyProblem[] {
    return [...this.problemsByDestination.values()];
  }

  get sourceLostSince(): string | undefined {
    return this.sourceMissingSince;
  }

  start(): void {
    if (this.running) return;
    this.running = true;
    this.abort = new AbortController();
    const everyMs = Math.max(200, (this.deps.timing.pumpVisibilitySeconds * 1000) / 3);
    this.extender ??= setInterval(() => void this.extend(), everyMs);
    this.loop = this.run(this.abort.signal);
  }

  /** Stops receiving; true once every held message was copied and deleted (or given back)
   * within `timeoutMs`. The receive under way finishes (at most the long-poll wait): what it
   * brings is copied, not left hidden in flight. */
  async stop(timeoutMs: number): Promise<boolean> {
    this.running = false;
    await this.loop;
    const deadline = Date.now() + timeoutMs;
    while (this.held.size > 0 && Date.now() < deadline) await sleep(50);
    if (this.held.size === 0 && this.extender) {
      clearInterval(this.extender);
      this.extender = undefined;
    }
    return this.held.size === 0;
  }

  /** Stops receiving at once (close): a receive under way is abandoned (what it may have taken
   * comes back after the pump's visibility timeout); copies under way may finish within
   * `settleMs`; held messages come back after their visibility timeout. */
  async halt(settleMs: number): Promise<void> {
    this.running = false;
    this.abort?.abort();
    await this.loop;
    const deadline = Date.now() + settleMs;
    while (this.held.size > 0 && Date.now() < deadline) await sleep(50);
    if (this.extender) clearInterval(this.extender);
    this.extender = undefined;
  }

  private async run(signal: AbortSignal): Promise<void> {
    const backoff = new Backoff(this.deps.timing.retryInitialMs, this.deps.timing.retryMaxMs);
    const { client, sourceUrl, timing, prefetch } = this.deps;
    while (this.running) {
      const room = Math.min(10, prefetch - this.held.size);
      if (room <= 0 || !this.deps.fenceHeld()) {
        await sleep(50);
        continue;
      }
      let messages: Message[];
      try {
        const answer = await client.send(
          new ReceiveMessageCommand({
            QueueUrl: sourceUrl,
            MaxNumberOfMessages: room,
            WaitTimeSeconds: timing.receiveWaitSeconds,
            VisibilityTimeout: timing.pumpVisibilitySeconds,
            ...RECEIVE_ALL,
          }),
          { abortSignal: signal },
        );
        messages = answer.Messages ?? [];
        this.deps.onReachable(true);
        this.sourceMissingSince = undefined;
        backoff.reset();
      } catch (err) {
        if (signal.aborted) break;
        if (isQueueMissing(err)) this.sourceMissingSince ??= new Date().toISOString();
        this.deps.onReachable(!isNetworkError(err));
        this.deps.log.warn('pump.receive-failed', { error: describeSqsError(err) });
        await sleep(backoff.next());
        continue;
      }
      for (const message of messages) {
        if (!message.MessageId || !message.ReceiptHandle) continue;
        const held: Held = {
          message,
          messageId: message.MessageId,
          receiptHandle: message.ReceiptHandle,
          failures: 0,
        };
        // A message received again while we still hold it (our hold lapsed): the newest handle.
        const known = this.held.get(held.messageId);
        if (known) {
          known.receiptHandle = held.receiptHandle;
          continue;
        }
        this.held.set(held.messageId, held);
        this.schedule(held);
      }
      this.pruneLedger();
    }
  }

  /** Standard: every copy at once. FIFO: one group's copies strictly in turn, in the order
   * received (a receive may return several of one group; SQS holds the group back from later
   * receives until they are deleted, docs/providers/sqs.md fact 6). */
  private schedule(h: Held): void {
    const group = this.deps.fifo ? h.message.Attributes?.MessageGroupId : undefined;
    if (group === undefined) {
      void this.copy(h);
      return;
    }
    const tail = (this.groupTails.get(group) ?? Promise.resolve()).then(() => this.copy(h));
    this.groupTails.set(group, tail);
    void tail.then(() => {
      if (this.groupTails.get(group) === tail) this.groupTails.delete(group);
    });
  }

  /** Copy, then delete; the barrier entry closes when the delete settled. */
  private async copy(h: Held): Promise<void> {
    const { deps } = this;
    const recorded = this.ledger.lookup(h.messageId);
    const selection = recorded ? deps.recorded(recorded) : deps.select(h.message);
    const release = deps.barrier.track(selection.generation);
    this.ledger.open({ ...selection, messageId: h.messageId, at: Date.now() });
    const backoff = new Backoff(deps.timing.retryInitialMs, deps.timing.retryMaxMs);
    try {
      for (;;) {
        if (!deps.fenceHeld()) return; // the successor copies it again, to the same destination
        try {
          await deps.client.send(
            new SendMessageCommand({
              QueueUrl: deps.urlOf(selection.destination),
              ...copyOf(h.message, deps.fifo ? pumpDedupId(h.message) : undefined),
            }),
          );
          deps.onReachable(true);
          this.problemsByDestination.delete(selection.destination);
          break;
        } catch (err) {
          h.failures++;
          deps.onReachable(!isNetworkError(err));
          if (!this.problemsByDestination.has(selection.destination)) {
            this.problemsByDestination.set(selection.destination, {
              destination: selection.destination,
              missing: isQueueMissing(err),
              reason: describeSqsError(err),
              since: new Date().toISOString(),
            });
          }
          deps.log.warn('pump.copy-failed', { destination: selection.destination, error: errorName(err) });
          await sleep(backoff.next());
        }
      }
      h.failures = 0;
      deps.onCopied(selection.routeId);
      await deps.hooks.afterShadowConfirm?.({
        messageId: this.nameOf(h.message),
        destination: selection.destination,
      });
      await this.deleteSource(h);
    } finally {
      this.held.delete(h.messageId);
      release();
    }
  }

  private async deleteSource(h: Held): Promise<void> {
    const backoff = new Backoff(this.deps.timing.retryInitialMs, this.deps.timing.retryMaxMs);
    for (;;) {
      if (!this.deps.fenceHeld()) return;
      try {
        await this.deps.client.send(
          new DeleteMessageCommand({ QueueUrl: this.deps.sourceUrl, ReceiptHandle: h.receiptHandle }),
        );
        this.ledger.deleted(h.messageId, Date.now());
        return;
      } catch (err) {
        if (isReceiptInvalid(err) || isQueueMissing(err)) {
          // Our hold lapsed: the message comes back (or is gone with its queue); the ledger
          // sends its next copy to the same destination.
          this.deps.log.warn('pump.delete-stale', { error: errorName(err) });
          return;
        }
        this.deps.onReachable(!isNetworkError(err));
        await sleep(backoff.next());
      }
    }
  }

  /** Keeps every held message in flight while its copy runs or is retried. */
  private async extend(): Promise<void> {
    if (!this.deps.fenceHeld() || this.held.size === 0) return;
    const held = [...this.held.values()];
    for (let i = 0; i < held.length; i += 10) {
      const chunk = held.slice(i, i + 10);
      try {
        const answer = await this.deps.client.send(
          new ChangeMessageVisibilityBatchCommand({
            QueueUrl: this.deps.sourceUrl,
            Entries: chunk.map((h, n) => ({
              Id: String(n),
              ReceiptHandle: h.receiptHandle,
              VisibilityTimeout: this.deps.timing.pumpVisibilitySeconds,
            })),
          }),
        );
        // A refused extension means our hold lapsed: the message comes back (to this pump or a
        // successor) and the ledger sends its next copy to the same destination.
        for (const failed of answer.Failed ?? []) {
          this.deps.log.warn('pump.extend-refused', { code: failed.Code ?? 'unknown' });
        }
      } catch (err) {
        this.deps.onReachable(!isNetworkError(err));
      }
    }
  }

  private nameOf(message: Message): string | undefined {
    const attribute = this.deps.messageIdAttribute;
    const named = attribute ? message.MessageAttributes?.[attribute]?.StringValue : undefined;
    return named ?? message.MessageId;
  }

  private pruneLedger(): void {
    const visibilityMs = this.deps.timing.pumpVisibilitySeconds * 1000;
    // Closed: kept one visibility timeout past the delete. Open: until the source's retention
    // (at most 14 days) has surely dropped the message.
    this.ledger.prune(Date.now(), visibilityMs, 14 * 24 * 3600 * 1000);
  }
}
