// The agent's half of one authenticated session stream (core/sessionStream.ts): a credit window
// shared by the route's readers, tags for what was sent, and the answers (ack, reject) and
// settlements that come back. Readers (./kafkaReader.ts, ./rabbitReader.ts) call `send` in their
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
  private closedReason: string | undefined;
  private finished = false;
  private resolveClosed: () => void = () => undefined;
  /** Resolves once the stream stops sending, for whatever reason. */
  readonly closed = new Promise<void>((resolve) => (this.resolveClosed = resolve));
  /** Counts for the agent's log line when the stream ends. */
  readonly counts = { sent: 0, acked: 0, rejected: 0, settled: 0 };
  /** What each tag not yet settled refers to, so a settlement is remembered by message. */
  private readonly refs = new Map<number, MessageRef>();

  constructor(
    private readonly ws: WebSocket,
    readonly routeId: string,
    readonly window: number,
    /** Settled messages of this route, kept across streams (SettledMemory). */
    private readonly memory: SettledMemory,
    private readonly maxUnackedBytes = SESSION_BOUNDS.maxUnackedBytes,
  ) {
    this.credits = window;
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
    if (this.ws.readyState === this.ws.OPEN) this.ws.send(bytes);
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

  constructor(private readonly capacity = 4096) {}

  remember(ref: MessageRef): void {
    const key = `${ref.queue}\u0000${ref.id}`;
    this.keys.delete(key);
    this.keys.add(key);
    if (this.keys.size > this.capacity) this.keys.delete(this.keys.values().next().value!);
  }

  settled(refs: readonly MessageRef[]): MessageRef[] {
    return refs.filter((r) => this.keys.has(`${r.queue}\u0000${r.id}`));
  }
}
