// Consume one queue, publish each message (confirmed, mandatory, through its destination's
// exchange with its own routing key: routing.ts) to the destination `select` names, ack the
// delivery only after a positive confirm with no return (docs/design.md §5.1). The source pump
// and the residue mover are both relays. Invariants:
//
// 1. Prefetch is capped: without it the broker pushes the whole backlog into unacked.
// 2. Publishes go out synchronously in delivery order, so order is kept per destination; a
//    message whose publish is returned, nacked or lost is retried with backoff and keeps its
//    delivery unacked meanwhile (a retry may overtake later messages: ordering yields to
//    never-lose).
// 3. A retry after a definite refusal (returned, nacked, refused: the broker does not hold the
//    copy) selects its destination again under the table then in force. A retry after a publish
//    lost with its channel goes to the same destination under the same generation: the broker
//    may hold that copy, and re-selecting could put the message in two live destinations
//    (docs/design.md §5.3). The barrier tracks a delivery's generation from its selection until
//    its publish is confirmed or it is requeued, so a route that left the table is drained (and
//    its shadow deleted) only after every delivery that may still reach it is settled there.
// 4. stop() cancels the consumer first and only then lets the last confirms ack their
//    deliveries (cancel-before-final-ack: an ack on a live consumer opens the prefetch window
//    to new deliveries). Deliveries still waiting for a retry are requeued to the queue.
// 5. If the connection or channel dies, every unacked delivery goes back to the queue by the
//    broker's doing; the relay forgets them (a publish already made becomes a duplicate).
//
// Acks are batched (ackLedger.ts): one `multiple` ack per event-loop turn settles the run of
// confirmed deliveries at the head of the channel, instead of one frame per delivery.
// 6. An ack names a delivery whose copy is confirmed, and a `multiple` ack is sent only when
//    every delivery still outstanding below its tag on that channel is confirmed: the ledger of
//    a channel holds exactly its outstanding deliveries in tag order, each enters it when taken
//    and leaves it only with the frame that settles it (ack, nack) or with the channel.
// 7. A nack (requeue after a retry was given up) is sent at once, on its own, and takes the
//    delivery out of the ledger, so a later `multiple` ack passes its tag without touching it.
// 8. A confirmed delivery behind one that is retrying, or publishing for longer than
//    ACK_HOLD_MS, is acked on its own: a refused copy holds up nothing but its own delivery.
// 9. A delivery counts as open (`open`, stop()'s wait) until its ack is sent, so stop() closes
//    the channel only after the last batch is acked; `routed` and onRouted count acks sent.
import type { PumpSelection } from '../engine/port';
import type { Channel, ConsumeMessage } from 'amqplib';
import type { EngineHooks } from '../engine/contract';
import { describeError, type Logger } from '../log';
import type { PublishBarrier } from '../engine/publishBarrier';
import { Backoff, sleep } from '../engine/timing';
import type { PublishOutcome } from './publisher';
import { shadowPublishOptions } from './properties';
import { ensureRoute, type RouteNames } from './routing';
import type { Link } from './amqpConnection';
import { AckLedger } from './ackLedger';

/** How long a delivery still publishing may hold up the acks of confirmed ones behind it
 * (invariant 8): far above a healthy confirm's latency, so batching is the rule. */
export const ACK_HOLD_MS = 100;

/** Where a delivery goes, chosen under the route table of a generation (the kernel's). */
export type RelaySelection = PumpSelection;

export interface RelayOptions {
  readonly queue: string;
  /** The exchanges of the split's destinations (routing.ts), which copies are published through. */
  readonly routes: RouteNames;
  readonly prefetch: number;
  readonly consumerTag: string;
  readonly engineUser: string;
  readonly select: (msg: ConsumeMessage) => RelaySelection;
  readonly barrier?: PublishBarrier;
  readonly hooks?: EngineHooks;
  readonly onRouted?: (selection: RelaySelection) => void;
  /** The broker cancelled the consumer (queue deleted) or closed the channel. */
  readonly onLost?: (why: 'cancelled' | 'channel-closed') => void;
  readonly retryInitialMs: number;
  readonly retryMaxMs: number;
  readonly logger: Logger;
}

interface SourceChannel {
  readonly link: Link;
  readonly ch: Channel;
  open: boolean;
  /** Its outstanding deliveries, in delivery-tag order (invariant 6). */
  readonly ledger: AckLedger<Delivery>;
  flushQueued: boolean;
  holdTimer: NodeJS.Timeout | undefined;
  holdUntil: number;
}

interface Delivery {
  readonly source: SourceChannel;
  readonly msg: ConsumeMessage;
  /** Set once its copy is confirmed: where it went, for onRouted at the ack. */
  routedTo?: RelaySelection;
}

/** A destination that refused publishes, for status conditions. */
export interface RelayProblem {
  readonly destination: string;
  readonly outcome: Exclude<PublishOutcome, 'routed'>;
  readonly since: string;
}

export class Relay {
  private source: SourceChannel | undefined;
  private consuming = false;
  private stopping = false;
  private readonly active = new Set<Delivery>();
  private retrying = 0;
  private wakeups: (() => void)[] = [];
  private readonly problemsByDestination = new Map<string, RelayProblem>();
  /** Deliveries acked since the relay was made. */
  routed = 0;

  constructor(private readonly options: RelayOptions) {}

  get isConsuming(): boolean {
    return this.consuming;
  }

  /** Deliveries taken and not yet acked or requeued. */
  get open(): number {
    return this.active.size;
  }

  get retryingCount(): number {
    return this.retrying;
  }

  problems(): RelayProblem[] {
    return [...this.problemsByDestination.values()];
  }

  /** Opens a channel on `link` and consumes (exclusive: enforced on classic queues, ignored
   * on quorum queues). Throws the broker's refusal (e.g. 403 ACCESS_REFUSED). */
  async start(link: Link): Promise<void> {
    if (this.consuming) return;
    this.stopping = false;
    const ch = await link.channel(`relay ${this.options.queue}`);
    const source: SourceChannel = {
      link,
      ch,
      open: true,
      ledger: new AckLedger<Delivery>(ACK_HOLD_MS),
      flushQueued: false,
      holdTimer: undefined,
      holdUntil: 0,
    };
    ch.on('close', () => {
      source.open = false;
      this.forget(source);
      if (this.source === source) {
        this.source = undefined;
        const wasConsuming = this.consuming;
        this.consuming = false;
        this.wake();
        if (wasConsuming && link.alive && !this.stopping) this.options.onLost?.('channel-closed');
      }
    });
    try {
      await ch.prefetch(this.options.prefetch);
      await link.publisher();
      this.source = source;
      await ch.consume(this.options.queue, (msg) => (msg ? this.take(source, msg) : this.cancelled(source)), {
        consumerTag: this.options.consumerTag,
        exclusive: true,
        noAck: false,
      });
      this.consuming = true;
    } catch (err) {
      if (this.source === source) this.source = undefined;
      await ch.close().catch(() => undefined);
      throw err;
    }
  }

  /** Cancel, then settle: resolves true once every taken delivery is acked or requeued. */
  async stop(timeoutMs: number): Promise<boolean> {
    this.stopping = true;
    const source = this.source;
    if (source && this.consuming) {
      this.consuming = false;
      await source.ch.cancel(this.options.consumerTag).catch((err: unknown) => {
        this.options.logger.warn('relay.cancel-failed', {
          queue: this.options.queue,
          error: describeError(err),
        });
      });
    }
    this.wake();
    const deadline = Date.now() + timeoutMs;
    while (this.active.size > 0 && Date.now() < deadline) await sleep(20);
    if (this.active.size > 0) return false;
    if (source && this.source === source) {
      this.source = undefined;
      await source.ch.close().catch(() => undefined);
    }
    return true;
  }

  /** The connection died: the broker requeued everything we held. */
  linkLost(): void {
    this.consuming = false;
    if (this.source) this.forget(this.source);
    this.source = undefined;
    this.wake();
  }

  /** The channel is gone and the broker requeued its unacked deliveries (invariant 5): drop
   * its ledger; confirmed deliveries waiting there for their ack are no longer open. */
  private forget(source: SourceChannel): void {
    source.open = false;
    clearTimeout(source.holdTimer);
    source.holdTimer = undefined;
    for (const d of source.ledger.clear()) if (d.routedTo) this.active.delete(d);
  }

  private cancelled(source: SourceChannel): void {
    if (this.source !== source) return;
    this.consuming = false;
    this.options.logger.warn('relay.consumer-cancelled-by-broker', { queue: this.options.queue });
    this.options.onLost?.('cancelled');
  }

  private take(source: SourceChannel, msg: ConsumeMessage): void {
    const delivery: Delivery = { source, msg };
    this.active.add(delivery);
    source.ledger.add(delivery, Date.now());
    void this.deliver(delivery).then((confirmed) => {
      // A confirmed delivery stays open in the ledger until flush() acks it (invariant 9).
      if (confirmed) return;
      source.ledger.remove(delivery);
      this.active.delete(delivery);
      this.scheduleFlush(source); // a nack may have unblocked the head (invariant 7)
    });
  }

  /** One flush per event-loop turn: every confirm that arrived in it joins one ack. */
  private scheduleFlush(source: SourceChannel): void {
    if (source.flushQueued || !source.open) return;
    source.flushQueued = true;
    setImmediate(() => this.flush(source));
  }

  /** Sends the acks the ledger allows now (invariants 6 and 8). */
  private flush(source: SourceChannel): void {
    source.flushQueued = false;
    if (!source.open || !source.link.alive) return;
    const now = Date.now();
    const plan = source.ledger.take(now);
    try {
      if (plan.upTo) source.ch.ack(plan.upTo.msg, true);
      for (const d of plan.singles) source.ch.ack(d.msg);
    } catch (err) {
      // The channel closed under us: the broker requeued them (a duplicate, not a loss).
      this.options.logger.warn('relay.ack-failed', { queue: this.options.queue, error: describeError(err) });
      for (const d of plan.acked) this.active.delete(d);
      return;
    }
    for (const d of plan.acked) {
      this.active.delete(d);
      this.routed++;
      if (d.routedTo) {
        this.problemsByDestination.delete(d.routedTo.destination);
        this.options.onRouted?.(d.routedTo);
      }
    }
    if (plan.wakeAt !== undefined && (!source.holdTimer || plan.wakeAt < source.holdUntil)) {
      clearTimeout(source.holdTimer);
      source.holdUntil = plan.wakeAt;
      source.holdTimer = setTimeout(
        () => {
          source.holdTimer = undefined;
          this.flush(source);
        },
        Math.max(0, plan.wakeAt - now),
      );
    }
  }

  private owns(d: Delivery): boolean {
    return d.source.open && d.source.link.alive;
  }

  /** Never throws; true when the copy is confirmed and the delivery waits in the ledger for
   * its ack, false when it is settled otherwise (nacked, or its channel is gone). The code up to
   * the first `await` runs inside the delivery callback, so first attempts are published in
   * delivery order. */
  private async deliver(d: Delivery): Promise<boolean> {
    const { options } = this;
    const publishOptions = shadowPublishOptions(d.msg, options.engineUser);
    let backoff: Backoff | undefined;
    let selection: RelaySelection | undefined;
    let release: (() => void) | undefined;
    let ambiguous = false;
    try {
      for (;;) {
        if (!this.owns(d)) return false;
        if (!selection || !ambiguous) {
          release?.();
          selection = options.select(d.msg);
          release = options.barrier?.track(selection.generation);
        }
        const publisher =
          d.source.link.currentPublisher() ?? (await d.source.link.publisher().catch(() => undefined));
        let outcome: PublishOutcome = 'lost';
        if (backoff) d.source.ledger.mark(d, 'publishing', Date.now());
        if (publisher)
          outcome = await publisher.publish(
            {
              exchange: options.routes.exchangeFor(selection.destination),
              destination: selection.destination,
              routingKey: d.msg.fields.routingKey,
            },
            d.msg.content,
            publishOptions,
          );
        // Only a publish that reached a channel can be held by the broker.
        ambiguous = outcome === 'lost' && publisher !== undefined;
        if (outcome === 'routed') {
          await options.hooks?.afterShadowConfirm?.({
            messageId:
              typeof d.msg.properties.messageId === 'string' ? d.msg.properties.messageId : undefined,
            destination: selection.destination,
          });
          if (!this.owns(d)) return false; // too late to ack: the broker requeued it (a duplicate, not a loss)
          d.routedTo = selection;
          d.source.ledger.mark(d, 'confirmed', Date.now());
          this.scheduleFlush(d.source);
          return true;
        }
        if (!this.owns(d)) return false;
        d.source.ledger.mark(d, 'retrying', Date.now());
        this.scheduleFlush(d.source); // confirmed deliveries behind it are acked alone now (invariant 8)
        if (!this.problemsByDestination.has(selection.destination)) {
          this.problemsByDestination.set(selection.destination, {
            destination: selection.destination,
            outcome,
            since: new Date().toISOString(),
          });
          options.logger.warn('relay.publish-not-routed', { destination: selection.destination, outcome });
        }
        // Returned: no binding routes it (a queue deleted and declared again lost its binding
        // with it); lost: possibly the destination's exchange is gone (the broker closes the
        // channel of a publish to a missing exchange). Declare and bind again (idempotent) so the
        // retry can be routed; a queue still missing makes the bind fail, and the retry fails again.
        if (outcome === 'returned' || outcome === 'lost') {
          await ensureRoute(d.source.link, options.routes, selection.destination).catch(() => undefined);
        }
        backoff ??= new Backoff(options.retryInitialMs, options.retryMaxMs);
        if (!(await this.pause(backoff.next()))) {
          // Back to the queue, not lost; alone, never `multiple` (invariant 7).
          if (this.owns(d)) d.source.ch.nack(d.msg, false, true);
          return false;
        }
      }
    } catch (err) {
      // A nack on a channel that closed under us: the broker requeued the delivery.
      options.logger.warn('relay.delivery-abandoned', { queue: options.queue, error: describeError(err) });
      return false;
    } finally {
      release?.();
    }
  }

  /** Waits before a retry; false when the relay is stopping (the caller requeues). */
  private async pause(ms: number): Promise<boolean> {
    if (this.stopping) return false;
    this.retrying++;
    try {
      await new Promise<void>((resolve) => {
        const timer = setTimeout(resolve, ms);
        this.wakeups.push(() => {
          clearTimeout(timer);
          resolve();
        });
      });
    } finally {
      this.retrying--;
    }
    return !this.stopping;
  }

  private wake(): void {
    const wakeups = this.wakeups;
    this.wakeups = [];
    for (const w of wakeups) w();
  }
}
