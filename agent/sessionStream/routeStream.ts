// The agent's half of one authenticated session stream (core/sessionStream.ts): a credit window
// shared by the route's readers, tags for what was sent, and the answers (ack, reject) and
// settlements that come back. Readers (agent/<provider>/sessionReader.ts) call `send` in their
// shadow's order and commit/ack (or reject) on the broker only once a message's `answered`
// resolves, then `settle` it.
//
// Invariants (the window and the pending table are touched only here):
//   1. At most `window` messages, and at most `maxUnackedBytes` of frames (or one larger
//      message alone), are sent and not yet acked: what a slow reader makes the WebSocket
//      buffer is part of that.
//   2. A tag is answered (acked or rejected) at most once; an answer for an unknown tag is
//      ignored (a stale one after a resume belongs to the old stream). Either answer frees the
//      tag's credit.
//   3. After stop(), nothing more is sent and every pending `answered` rejects with StreamClosed,
//      so no reader commits what the client never confirmed; settlements still go out until
//      finish() closes the WebSocket.
//   4. What was answered but never settled when a stream finishes (its reader lost the broker
//      before the proof came back: the broker may or may not have the ack) is kept as unproven
//      in SettledMemory. The next stream's readers settle such a message by ref only on proof
//      that the broker had the answer (RabbitMQ: agent/rabbitmq/sessionReader.ts), and forget it when it comes
//      again (the broker lacked it); never on a guess, which could report a message delivered
//      and then deliver it again.
import type { WebSocket } from 'ws';
import type { ShadowMessage } from '../../core/shadowMessage';
import { encodeFrame, type AgentFrame, type MessageRef, type NOTICE_CODES } from '../../core/sessionStream';
import { toWireMessage } from '../../core/shadowMessage';
import { SESSION_BOUNDS } from './bounds';

export class StreamClosed extends Error {
  constructor(reason: string) {
    super(`session stream closed: ${reason}`);
  }
}

/** The client's answer for one message: `ack` delivered locally, `reject` the developer gave up
 * on it (settle it as the app's own reject would: core/sessionStream.ts). */
export type ClientAnswer = 'ack' | 'reject';

/** What corkTurn needs of the stream's socket. */
export interface Corkable {
  cork(): void;
  uncork(): void;
}

export interface Sent {
  tag: number;
  /** Resolves with the client's answer; rejects when the stream closes first. */
  answered: Promise<ClientAnswer>;
}

interface Pending {
  resolve: (answer: ClientAnswer) => void;
  reject: (err: Error) => void;
  bytes: number;
}

export class RouteStream {
  private credits: number;
  private unackedBytes = 0;
  private readonly waiters: Array<() => void> = [];
  private nextTag = 0;
  private readonly pending = new Map<number, Pending>();
  private toSettle: number[] = [];
  private settleScheduled = false;
  private corked = false;
  private closedReason: string | undefined;
  private finished = false;
  private resolveClosed: () => void = () => undefined;
  /** Resolves once the stream stops sending, for whatever reason. */
  readonly closed = new Promise<void>((resolve) => (this.resolveClosed = resolve));
  /** Counts for the agent's log line when the stream ends. */
  readonly counts = { sent: 0, acked: 0, rejected: 0, settled: 0 };
  /** What each tag not yet settled refers to, so a settlement is remembered by message. */
  private readonly refs = new Map<number, MessageRef>();

  /** Unproven refs of an earlier stream still waiting for proof, per queue (invariant 4). */
  private readonly awaiting = new Map<string, MessageRef>();

  constructor(
    private readonly ws: WebSocket,
    readonly routeId: string,
    readonly window: number,
    /** Settled messages of this route, kept across streams (SettledMemory). */
    private readonly memory: SettledMemory,
    /** Of the client's unsettled refs, those an earlier stream left unproven (invariant 4). */
    awaiting: readonly MessageRef[] = [],
    private readonly maxUnackedBytes = SESSION_BOUNDS.maxUnackedBytes,
    /** The stream's socket, to send a turn's frames in one write (corkTurn). */
    private readonly socket?: Corkable,
  ) {
    this.credits = window;
    for (const ref of awaiting) this.awaiting.set(refKey(ref), ref);
  }

  /** Whether `queue` has refs waiting for proof (a reader checks only then). */
  awaits(queue: string): boolean {
    for (const ref of this.awaiting.values()) if (ref.queue === queue) return true;
    return false;
  }

  /** The message came again: the broker lacked the answer, so it flows as any other. */
  cameAgain(queue: string, id: string): void {
    this.awaiting.delete(refKey({ queue, id }));
  }

  /**
   * The broker provably had the answers for every ref of `queue` still waiting (the reader's
   * proof: agent/rabbitmq/sessionReader.ts): settled by ref, so the client reports them now.
   */
  resolveAwaiting(queue: string): void {
    const refs = [...this.awaiting.values()].filter((r) => r.queue === queue);
    if (refs.length === 0) return;
    for (const ref of refs) {
      this.awaiting.delete(refKey(ref));
      this.memory.remember(ref);
    }
    this.counts.settled += refs.length;
    this.frame({ type: 'settled', tags: [], refs });
  }

  get isClosed(): boolean {
    return this.closedReason !== undefined;
  }

  /** Waits for a credit, then sends the message; throws StreamClosed once the stream is closed. */
  async send(queue: string, message: ShadowMessage): Promise<Sent> {
    // The body is what makes a message large; the exact frame size is counted once it is encoded.
    const size = message.body.byteLength;
    const full = () =>
      this.credits === 0 || (this.unackedBytes > 0 && this.unackedBytes + size > this.maxUnackedBytes);
    while (full() && !this.isClosed) await new Promise<void>((wake) => this.waiters.push(wake));
    if (this.closedReason !== undefined) throw new StreamClosed(this.closedReason);
    const tag = this.nextTag++;
    const bytes = encodeFrame({ type: 'message', tag, queue, message: toWireMessage(message) });
    this.credits--;
    this.unackedBytes += bytes.length;
    const answered = new Promise<ClientAnswer>((resolve, reject) =>
      this.pending.set(tag, { resolve, reject, bytes: bytes.length }),
    );
    answered.catch(() => undefined); // a reader that stopped waiting must not leave it unhandled
    this.refs.set(tag, { queue, id: message.id });
    this.sendBytes(bytes);
    this.counts.sent++;
    return { tag, answered };
  }

  onAck(tags: readonly number[]): void {
    this.answer(tags, 'ack');
  }

  /** The developer rejected these: the readers settle them as the app's reject would. */
  onReject(tags: readonly number[]): void {
    this.answer(tags, 'reject');
  }

  private answer(tags: readonly number[], answer: ClientAnswer): void {
    for (const tag of tags) {
      const p = this.pending.get(tag);
      if (!p) continue;
      this.pending.delete(tag);
      this.credits++;
      this.unackedBytes -= p.bytes;
      if (answer === 'ack') this.counts.acked++;
      else this.counts.rejected++;
      p.resolve(answer);
    }
    // Every waiter looks again: a byte budget freed by one ack may let several small ones go.
    for (const wake of this.waiters.splice(0)) wake();
  }

  /** Committed/acked on the broker: the client may now report them delivered. Batched per tick. */
  settle(tags: readonly number[]): void {
    for (const tag of tags) {
      const ref = this.refs.get(tag);
      this.refs.delete(tag);
      if (ref) this.memory.remember(ref);
    }
    if (tags.length === 0 || this.finished) return;
    this.toSettle.push(...tags);
    this.counts.settled += tags.length;
    if (this.settleScheduled) return;
    this.settleScheduled = true;
    setImmediate(() => {
      this.settleScheduled = false;
      this.flushSettled();
    });
  }

  private flushSettled(): void {
    const batch = this.toSettle;
    this.toSettle = [];
    if (batch.length > 0) this.frame({ type: 'settled', tags: batch });
  }

  notice(code: (typeof NOTICE_CODES)[number], message: string, queue?: string): void {
    this.frame({ type: 'notice', code, message, ...(queue !== undefined ? { queue } : {}) });
  }

  frame(frame: AgentFrame): void {
    this.sendBytes(encodeFrame(frame));
  }

  private sendBytes(bytes: Uint8Array): void {
    if (this.finished) return;
    if (this.ws.readyState !== this.ws.OPEN) return;
    this.corkTurn();
    this.ws.send(bytes);
  }

  /**
   * The frames one turn of the event loop sends leave in one write: an ack batch frees credits
   * for several messages at once, and a broker read hands over several. Each write crosses the
   * port-forward as a chunk (the kubelet's and the API server's relays, the sidecar's loopback
   * hop), so a turn's frames cost the path one crossing instead of one each (docs/design.md
   * "The developer's path under load"). Released before the next turn's I/O: no frame waits
   * for another.
   */
  private corkTurn(): void {
    const socket = this.socket;
    if (this.corked || socket === undefined) return;
    this.corked = true;
    socket.cork();
    setImmediate(() => {
      this.corked = false;
      socket.uncork();
    });
  }

  /**
   * First half of an end: nothing more is sent, and what was sent but not acked never will be
   * (its readers leave it in the shadow). Settlements still go out, so the readers can commit
   * what was acked and tell the client before finish().
   */
  stop(reason: string): void {
    if (this.isClosed) return;
    this.closedReason = reason;
    for (const [tag, p] of this.pending) {
      this.refs.delete(tag);
      p.reject(new StreamClosed(reason));
    }
    this.pending.clear();
    this.unackedBytes = 0;
    for (const wake of this.waiters.splice(0)) wake();
    this.resolveClosed();
  }

  /** Second half: the last settlements, then the refusal if any (why the stream ends for good),
   * then the WebSocket close. */
  finish(reason: string, wsCode = 1000, refusal?: Extract<AgentFrame, { type: 'refused' }>): void {
    this.stop(reason);
    if (this.finished) return;
    // Answered, never proven (stop() already dropped what was never answered): invariant 4.
    for (const ref of this.refs.values()) this.memory.markUnproven(ref);
    this.refs.clear();
    // Still unproven: a later stream may prove them.
    for (const ref of this.awaiting.values()) this.memory.markUnproven(ref);
    this.flushSettled();
    if (refusal) this.frame(refusal);
    this.finished = true;
    if (this.ws.readyState === this.ws.OPEN || this.ws.readyState === this.ws.CONNECTING)
      this.ws.close(wsCode, reason.slice(0, 120));
  }
}

/**
 * The messages of one route settled lately (bounded), across its streams: a sidecar that acked
 * a message on a stream that dropped before the settlement reached it asks on resuming, and is
 * told it was committed, so it reports it delivered instead of waiting for it forever. Lost with
 * the agent: after an agent restart such a message is simply not reported.
 */
export class SettledMemory {
  private readonly keys = new Set<string>();
  /** Answered on a stream that ended before the broker's proof came back (invariant 4). */
  private readonly unprovenKeys = new Set<string>();

  constructor(private readonly capacity = 4096) {}

  remember(ref: MessageRef): void {
    const key = refKey(ref);
    this.unprovenKeys.delete(key);
    bounded(this.keys, key, this.capacity);
  }

  markUnproven(ref: MessageRef): void {
    const key = refKey(ref);
    if (!this.keys.has(key)) bounded(this.unprovenKeys, key, this.capacity);
  }

  settled(refs: readonly MessageRef[]): MessageRef[] {
    return refs.filter((r) => this.keys.has(refKey(r)));
  }

  /** Of `refs`, those answered on an earlier stream and not yet proven either way. */
  unproven(refs: readonly MessageRef[]): MessageRef[] {
    return refs.filter((r) => this.unprovenKeys.has(refKey(r)));
  }
}

const refKey = (ref: MessageRef) => `${ref.queue}\u0000${ref.id}`;

/** Adds `key` as the newest of `set`, dropping the oldest beyond `capacity`. */
function bounded(set: Set<string>, key: string, capacity: number): void {
  set.delete(key);
  set.add(key);
  if (set.size > capacity) set.delete(set.values().next().value!);
}
