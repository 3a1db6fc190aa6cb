// The sidecar's half of the session stream (core/sessionStream.ts): the queue-agent reads the
// route's session shadows in the cluster and streams them here; each message is delivered by
// its queue's pipeline (http or relay), acked back (or rejected, when the developer gave up on
// it), and reported `delivered` (`rejected`) only once the agent says the broker has that answer
// (`settled`). Order is kept per lane (a queue, or the part of one its broker settles apart:
// core/providers/contract.ts MessageLane); a dropped stream is resumed with backoff, and what
// was sent but not settled comes again (at-least-once, to the same handler).
//
// Invariants:
//   1. A message is acked (or rejected) to the agent only after its delivery resolved, and only
//      on the stream that sent it (a message of a dropped stream is never answered: it comes
//      again). A reject goes only to an agent whose welcome lists it (core/sessionStream.ts
//      SESSION_FEATURES); to any other, the message is parked (invariant 4) instead.
//   2. A message is reported delivered (rejected) only after `settled` for its tag on that stream.
//   3. Messages of one lane (a queue, or its part where it has lanes) are delivered one at a
//      time in stream order, across reconnects too (a resumed stream's messages wait behind the
//      old in-flight one).
//   4. A message this sidecar cannot carry (its delivery failed other than by the sidecar
//      stopping, or its frame is unreadable) is parked: never acked, so it stays in the shadow
//      and goes to the app when the split ends, and reported once (`message-parked`, naming
//      queue and message id). The stream goes on: where its queue has lanes, what follows it in
//      its lane waits, since a lane is settled only a prefix at a time (docs/design.md §5.7);
//      elsewhere the queue's other messages flow. Never a reconnect, which would bring it first
//      again, forever.
//   5. A refusal after the welcome (another sidecar took the route over) ends the stream for
//      good: no resume, which would take the route back and start a replace loop.
import { setTimeout as sleep } from 'node:timers/promises';
import WebSocket from 'ws';
import { ANSWER_DELAY_MS, AnswerBatch, type Answers } from './answerBatch';
import type { MessageLane } from '../core/providers/contract';
import { fromWireMessage, messageLane, type ShadowMessage } from '../core/shadowMessage';
import {
  DEFAULT_SESSION_WINDOW,
  MAX_SESSION_WINDOW,
  SESSION_SUBPROTOCOL,
  decodeAgentFrame,
  encodeFrame,
  type AgentFrame,
  type ClientFrame,
  unreadableMessage,
} from '../core/sessionStream';
import type { AgentEndpoint } from './agentPortForward';
import type { Delivery, DeliveryHandler } from './consumers/types';
import { sessionProof } from '../core/sessionSecret';
import { SidecarError, errorText, isAbort } from '../laptop/errors';
import type { Reporter } from './output';

/** Agent frames carry message bodies: as large as the brokers allow. */
const MAX_AGENT_FRAME_BYTES = 256 * 1024 * 1024;
const PING_MS = 15_000;
const RECONNECT_MAX_MS = 10_000;
const BYE_WAIT_MS = 10_000;
const PUBLISH_TIMEOUT_MS = 30_000;
/** From open to welcome: the agent's own hello timeout and a margin for its reader start. */
const WELCOME_TIMEOUT_MS = 40_000;

export interface AgentStreamOptions {
  routeId: string;
  secret: string;
  endpoint: AgentEndpoint;
  /** Per queue of the split: its delivery pipeline. */
  handlers: ReadonlyMap<string, DeliveryHandler>;
  reporter: Reporter;
  /** A failure resuming cannot fix (the agent refused the secret, another sidecar took over). */
  onFatal: (err: SidecarError) => void;
  window?: number;
  /** How long the first connection may take (the agent may still be starting). */
  startTimeoutMs: number;
}

interface Unsettled {
  message: ShadowMessage;
  delivery: Delivery;
  handler: DeliveryHandler;
}

const refKey = (queue: string, id: string) => `${queue}\u0000${id}`;

interface Connection {
  ws: WebSocket;
  close(): void;
  /** Acked or rejected, awaiting `settled`. */
  unsettled: Map<number, Unsettled>;
  /** Answers not yet sent (./answerBatch.ts). */
  answers: AnswerBatch;
  /** What the agent's welcome announced it takes (SESSION_FEATURES). */
  features: ReadonlySet<string>;
  draining: boolean;
  /** Lanes behind a parked message: what follows it waits in the shadow (invariant 4). */
  parkedLanes: Set<string>;
}

type Welcome = Extract<AgentFrame, { type: 'welcome' }>;
export type PublishOutcome = { published: true; messageId: string } | { published: false; reason: string };

export class AgentStream {
  private current: Connection | undefined;
  private stopping = false;
  private readonly lanes = new Map<string, Promise<void>>();
  private readonly publishes = new Map<string, (outcome: PublishOutcome) => void>();
  private loop: Promise<void> | undefined;
  /** Acked on a stream that dropped before their settlement arrived: asked about on resuming. */
  private carried = new Map<string, Unsettled>();
  /**
   * Carried messages the welcome did not settle: each either comes again (then it is delivered
   * again, as any unsettled one) or is settled by ref once the agent proves the broker had the
   * answer (core/sessionStream.ts settled{refs}). Kept across further drops.
   */
  private awaiting = new Map<string, Unsettled>();
  /** Refused after the welcome: the stream is over for good (invariant 5). */
  private refused = false;
  /** Messages parked so far (queue, id): each is reported once, however often it comes again. */
  private readonly parked = new Set<string>();
  /** Look-alike pods already reported (agent-lookalike warnings). */
  private readonly lookalikes = new Set<string>();
  /** What the stream made visible, for the stop's summary. */
  readonly counts = { unreadableFrames: 0, parked: 0, replaced: 0 };

  constructor(private readonly options: AgentStreamOptions) {}

  /** Connects (retrying while the agent is not there yet); rejects with a SidecarError when it cannot. */
  async start(): Promise<Welcome> {
    const deadline = Date.now() + this.options.startTimeoutMs;
    for (let attempt = 0; ; attempt++) {
      try {
        const { welcome, closed } = await this.connect();
        this.loop = this.resume(closed);
        return welcome;
      } catch (err) {
        const failure = asSidecarError(err);
        if (!retryable(failure) || Date.now() > deadline || this.stopping) throw failure;
        this.options.reporter.log(`session stream not open yet: ${failure.message} (retrying)`);
        await sleep(backoff(attempt));
      }
    }
  }

  /** Send Test Message: the agent publishes it into the source if it matches the split's filter. */
  publish(request: Omit<Extract<ClientFrame, { type: 'publish' }>, 'type'>): Promise<PublishOutcome> {
    const conn = this.current;
    if (!conn || conn.ws.readyState !== WebSocket.OPEN)
      return Promise.resolve({
        published: false,
        reason: 'the session stream to the queue-agent is not connected right now; try again in a moment',
      });
    return new Promise((resolve) => {
      const timer = setTimeout(() => {
        this.publishes.delete(request.requestId);
        resolve({
          published: false,
          reason: `no answer from the queue-agent within ${PUBLISH_TIMEOUT_MS / 1000}s`,
        });
      }, PUBLISH_TIMEOUT_MS);
      this.publishes.set(request.requestId, (outcome) => {
        clearTimeout(timer);
        resolve(outcome);
      });
      conn.ws.send(encodeFrame({ type: 'publish', ...request }));
    });
  }

  /**
   * Stops taking messages: deliveries in progress end (the pipelines stop with the sidecar), the
   * last acks go out, then `bye`, and the agent's last settlements are awaited (bounded), so
   * what was delivered is reported and committed before the split is deleted.
   */
  async stop(): Promise<void> {
    this.stopping = true;
    await Promise.all(this.lanes.values());
    const conn = this.current;
    if (conn && conn.ws.readyState === WebSocket.OPEN) {
      conn.answers.flush();
      conn.ws.send(encodeFrame({ type: 'bye' }));
      await Promise.race([
        new Promise<void>((resolve) => conn.ws.once('close', () => resolve())),
        sleep(BYE_WAIT_MS),
      ]);
    }
    conn?.close();
    await this.loop;
  }

  private async connect(): Promise<{ welcome: Welcome; closed: Promise<string> }> {
    const { endpoint, routeId, secret } = this.options;
    const opened = await endpoint.open();
    for (const skipped of opened.skipped ?? []) {
      if (this.lookalikes.has(skipped)) continue; // reported once, not on every resume
      this.lookalikes.add(skipped);
      this.options.reporter.emit({
        type: 'warning',
        code: 'agent-lookalike',
        message: `Pod ${skipped} carries the queue-agent's labels but is not the queue-agent; the sidecar skipped it and sent it nothing.`,
        suggestedAction:
          'Nothing to do for your split. Tell whoever runs the namespace: someone runs a pod posing as the queue-agent.',
      });
    }
    const ws = new WebSocket(opened.url, SESSION_SUBPROTOCOL, {
      maxPayload: MAX_AGENT_FRAME_BYTES,
      handshakeTimeout: 15_000,
      perMessageDeflate: false,
    });
    const conn: Connection = {
      ws,
      close: () => {
        conn.answers.cancel();
        ws.terminate();
        opened.close();
      },
      unsettled: new Map(),
      answers: new AnswerBatch({
        delayMs: ANSWER_DELAY_MS,
        // A quarter of the window: the agent's credits never wait on a batch.
        maxTags: Math.max(1, Math.floor((this.options.window ?? DEFAULT_SESSION_WINDOW) / 4)),
        send: (answers) => this.sendAnswers(ws, answers),
      }),
      features: new Set(),
      draining: false,
      parkedLanes: new Set(),
    };
    let closeReason = 'the connection closed';
    const closed = new Promise<string>((resolve) => ws.on('close', () => resolve(closeReason)));
    ws.on('error', (err) => (closeReason = errorText(err)));
    return new Promise((resolve, reject) => {
      let welcomed = false;
      const fail = (err: SidecarError) => {
        if (welcomed) return;
        conn.close();
        reject(err);
      };
      // A peer that never challenges nor welcomes (a look-alike, a wedged agent) is given up on.
      const silence = setTimeout(() => {
        if (welcomed) return;
        closeReason = `no challenge and welcome within ${WELCOME_TIMEOUT_MS / 1000} s`;
        conn.close();
      }, WELCOME_TIMEOUT_MS);
      void closed.then(() => clearTimeout(silence));
      // The agent speaks first: a challenge this sidecar signs, naming the pod it meant to
      // reach, so the secret itself never leaves this machine (core/sessionSecret.ts).
      const answer = (challenge: Extract<AgentFrame, { type: 'challenge' }>) => {
        if (opened.podUid !== undefined && challenge.podUid !== opened.podUid) {
          // A pod that relays another pod's challenge: what it asks us to sign is not for it.
          closeReason = `the pod answering (${opened.describe}) presented the challenge of another pod (uid ${challenge.podUid})`;
          fail(
            new SidecarError(
              'agent-impostor',
              `The pod reached as the queue-agent (${opened.describe}) relays another pod's challenge: it is not the queue-agent, and nothing was sent to it.`,
              `Tell whoever runs the namespace: a pod posing as the queue-agent (uid ${opened.podUid}) is relaying to the real one.`,
            ),
          );
          return;
        }
        const unsettled = [...this.carried.values()]
          .slice(-MAX_SESSION_WINDOW)
          .map((u) => ({ queue: u.message.queue, id: u.message.id }));
        ws.send(
          encodeFrame({
            type: 'hello',
            routeId,
            proof: sessionProof(secret, { routeId, podUid: challenge.podUid, nonce: challenge.nonce }),
            window: this.options.window ?? DEFAULT_SESSION_WINDOW,
            ...(unsettled.length > 0 ? { unsettled } : {}),
          }),
        );
      };
      void closed.then((reason) =>
        fail(
          new SidecarError(
            'agent-unreachable',
            `The session stream to the queue-agent (${opened.describe}) closed before it began: ${reason}.`,
            'The sidecar retries; if it keeps failing, check the queue-agent pod and its logs.',
          ),
        ),
      );
      ws.on('message', (data: WebSocket.RawData, isBinary: boolean) => {
        const decoded = isBinary
          ? decodeAgentFrame(Buffer.isBuffer(data) ? data : Buffer.concat(data as Buffer[]))
          : { ok: false as const, problem: 'a text frame' };
        if (!decoded.ok) {
          this.counts.unreadableFrames++;
          const raw = Buffer.isBuffer(data) ? data : Buffer.concat(data as Buffer[]);
          const unreadable = welcomed && isBinary ? unreadableMessage(raw) : undefined;
          if (unreadable && this.options.handlers.has(unreadable.queue)) {
            // One message this sidecar cannot read: parked in its lane's order (invariant 4).
            const lane = laneOf(unreadable.queue, unreadable.lane);
            this.enqueue(lane, () =>
              this.park(conn, lane, unreadable.queue, unreadable.id, unreadable.lane, decoded.problem),
            );
            return;
          }
          closeReason = `the queue-agent sent an unreadable frame (${decoded.problem})`;
          conn.close();
          return;
        }
        const frame = decoded.frame;
        if (!welcomed) {
          if (frame.type === 'challenge') {
            answer(frame);
          } else if (frame.type === 'welcome') {
            welcomed = true;
            clearTimeout(silence);
            // Committed before the old stream could say so: delivered, reported now. The rest
            // of what the old stream left unsettled comes again.
            for (const ref of frame.settled) {
              const key = refKey(ref.queue, ref.id);
              const done = this.carried.get(key);
              done?.handler.settled(done.message, done.delivery);
              this.carried.delete(key);
            }
            this.awaiting = this.carried;
            this.carried = new Map();
            conn.features = new Set(frame.features ?? []);
            this.current = conn;
            this.startPings(conn);
            resolve({ welcome: frame, closed });
          } else if (frame.type === 'refused') {
            closeReason = frame.message;
            fail(refusal(frame.code, frame.message));
          }
          return;
        }
        this.onFrame(conn, frame);
      });
    });
  }

  private startPings(conn: Connection): void {
    let alive = true;
    conn.ws.on('pong', () => (alive = true));
    const timer = setInterval(() => {
      if (!alive) {
        conn.close(); // no pong for a whole interval: the path is dead
        return;
      }
      alive = false;
      conn.ws.ping();
    }, PING_MS);
    conn.ws.on('close', () => clearInterval(timer));
  }

  private onFrame(conn: Connection, frame: AgentFrame): void {
    switch (frame.type) {
      case 'message': {
        const handler = this.options.handlers.get(frame.queue);
        if (!handler) return; // not a queue of this split: never acked, so the agent keeps it
        const message = fromWireMessage(frame.queue, frame.message);
        this.awaiting.delete(refKey(message.queue, message.id)); // it came again: delivered again
        const lane = laneOf(frame.queue, messageLane(message));
        this.enqueue(lane, () => this.deliver(conn, lane, frame.tag, message, handler));
        return;
      }
      case 'settled':
        for (const tag of frame.tags) {
          const done = conn.unsettled.get(tag);
          if (!done) continue;
          conn.unsettled.delete(tag);
          done.handler.settled(done.message, done.delivery);
        }
        for (const ref of frame.refs ?? []) {
          const key = refKey(ref.queue, ref.id);
          const done = this.awaiting.get(key);
          if (!done) continue;
          this.awaiting.delete(key);
          done.handler.settled(done.message, done.delivery);
        }
        return;
      case 'published':
        this.publishes.get(frame.requestId)?.({ published: true, messageId: frame.messageId });
        this.publishes.delete(frame.requestId);
        return;
      case 'publishRefused':
        this.publishes.get(frame.requestId)?.({ published: false, reason: frame.reason });
        this.publishes.delete(frame.requestId);
        return;
      case 'notice':
        if (frame.code === 'route-draining') conn.draining = true;
        this.options.reporter.log(`queue-agent: ${frame.message}`);
        return;
      case 'refused':
        this.refused = true;
        if (frame.code === 'replaced') this.counts.replaced++;
        this.options.onFatal(refusal(frame.code, frame.message));
        return;
      case 'challenge':
      case 'welcome':
        return; // answered before the welcome (above); a repeat after it changes nothing
    }
  }

  private enqueue(lane: string, work: () => Promise<void>): void {
    this.lanes.set(lane, (this.lanes.get(lane) ?? Promise.resolve()).then(work));
  }

  private async deliver(
    conn: Connection,
    lane: string,
    tag: number,
    message: ShadowMessage,
    handler: DeliveryHandler,
  ) {
    // Not begun when its stream is gone or the sidecar stops: it stays in the shadow.
    if (this.stopping || conn !== this.current || conn.ws.readyState !== WebSocket.OPEN) return;
    if (conn.parkedLanes.has(lane)) return; // behind a parked message: waits in the shadow
    let delivery: Delivery;
    try {
      delivery = await handler.deliver(message);
    } catch (err) {
      if (this.stopping || isAbort(err)) return; // stopping: not acked, it stays in the shadow
      await this.park(conn, lane, message.queue, message.id, messageLane(message), failureKind(err));
      return;
    }
    if (conn !== this.current || conn.ws.readyState !== WebSocket.OPEN) return; // comes again
    if (delivery.settle === 'reject' && !conn.features.has('reject')) {
      // An agent from before rejects would end the stream on the frame (invariant 1).
      await this.park(
        conn,
        lane,
        message.queue,
        message.id,
        messageLane(message),
        'it was rejected, and the queue-agent is too old to take a reject',
      );
      return;
    }
    conn.unsettled.set(tag, { message, delivery, handler });
    conn.answers.add(delivery.settle === 'reject' ? 'reject' : 'ack', tag);
  }

  /**
   * Why this session cannot reject a message now, if it cannot: the agent it streams from
   * announced no rejects (a version before them). Unknown while reconnecting: the next agent is
   * asked again when a message is rejected (invariant 1).
   */
  rejectUnavailable(): string | undefined {
    const conn = this.current;
    if (conn === undefined || conn.features.has('reject')) return undefined;
    return 'the queue-agent in the cluster is from a version that cannot reject a message';
  }

  /** Invariant 4: not acked, reported once; its queue's lane, if any, waits behind it on this
   * stream. */
  private async park(
    conn: Connection,
    lane: string,
    queue: string,
    id: string,
    brokerLane: MessageLane | undefined,
    why: string,
  ): Promise<void> {
    if (brokerLane !== undefined) conn.parkedLanes.add(lane);
    const key = refKey(queue, id);
    if (this.parked.has(key)) return;
    this.parked.add(key);
    this.counts.parked++;
    const waits = brokerLane !== undefined ? `; what follows it on ${brokerLane.name} waits behind it` : '';
    this.options.reporter.emit({
      type: 'warning',
      code: 'message-parked',
      queue,
      message: `DEGRADED: message ${id} of ${queue} cannot be delivered by this sidecar (${why}). It is parked: not acked, it stays in the session shadow and goes to the app when the split ends${waits}.`,
      suggestedAction:
        'Report this with the message id; nothing is lost. Stop the split to hand the message to the app.',
    });
  }

  /** Keeps what `conn` acked but never saw settled, to ask about on the next hello. */
  private carry(conn: Connection): void {
    // Still awaiting proof from the stream that just dropped: asked about again, oldest first.
    for (const [key, u] of this.awaiting) this.carried.set(key, u);
    this.awaiting.clear();
    for (const u of conn.unsettled.values()) this.carried.set(refKey(u.message.queue, u.message.id), u);
    conn.unsettled.clear();
  }

  private sendAnswers(ws: WebSocket, { acks, rejects }: Answers): void {
    // A stream that dropped meanwhile is never answered: its messages come again (invariant 1).
    if (ws.readyState !== WebSocket.OPEN) return;
    if (acks.length > 0) ws.send(encodeFrame({ type: 'ack', tags: acks }));
    if (rejects.length > 0) ws.send(encodeFrame({ type: 'reject', tags: rejects }));
  }

  /** After a drop: reconnect with backoff until the sidecar stops or the route drains. */
  private async resume(closed: Promise<string>): Promise<void> {
    let reason = await closed;
    for (let attempt = 0; !this.stopping && !this.refused; attempt++) {
      const conn = this.current;
      if (conn?.draining) return; // the split monitor ends the session
      if (attempt === 0 && conn) this.carry(conn);
      if (attempt === 0) {
        for (const [, answer] of this.publishes)
          answer({ published: false, reason: 'the session stream dropped' });
        this.publishes.clear();
        this.options.reporter.emit({
          type: 'warning',
          code: 'stream-interrupted',
          message: `The session stream from the queue-agent dropped (${reason}); resuming. Messages delivered but not yet confirmed may be delivered again.`,
          suggestedAction:
            'Nothing to do: nothing is lost. If it does not resume, check the queue-agent pod.',
        });
      }
      await sleep(backoff(attempt));
      if (this.stopping || this.refused) return;
      try {
        // Deliveries of the dropped stream still under way finish first: what they ack is carried.
        await Promise.all(this.lanes.values());
        if (conn) this.carry(conn);
        const { closed: next } = await this.connect();
        this.options.reporter.emit({
          type: 'progress',
          stage: 'consuming',
          message: 'The session stream from the queue-agent resumed.',
        });
        reason = await next;
        attempt = -1;
      } catch (err) {
        const failure = asSidecarError(err);
        if (!retryable(failure)) {
          this.options.onFatal(failure);
          return;
        }
        reason = failure.message;
      }
    }
  }
}

const laneOf = (queue: string, lane: MessageLane | undefined) => `${queue}#${lane?.key ?? ''}`;

/** What kind of failure ended a delivery: its name and code only, since an error's text may
 * quote a header value. */
function failureKind(err: unknown): string {
  if (!(err instanceof Error)) return 'an unexpected failure';
  const code = (err as { code?: unknown }).code;
  return `${err.name}${typeof code === 'string' ? ` ${code}` : ''}`;
}

function backoff(attempt: number): number {
  return Math.min(RECONNECT_MAX_MS, 250 * 2 ** Math.min(attempt, 6));
}

function refusal(code: string, message: string): SidecarError {
  if (code === 'unauthorized' || code === 'replaced')
    return new SidecarError(
      'session-refused',
      `The queue-agent refused this session: ${message}.`,
      code === 'replaced'
        ? 'Another sidecar took over this split (started twice?). Stop one of them.'
        : 'Only the sidecar that created the split holds its secret: stop this one and start the split again from the same machine (or let the extension start it).',
    );
  return new SidecarError(
    'agent-unreachable',
    `The queue-agent does not serve this route yet: ${message}.`,
    'The sidecar retries while the queue-agent catches up.',
  );
}

const retryable = (err: SidecarError) => err.code === 'agent-unreachable' || err.code === 'kube-unreachable';

function asSidecarError(err: unknown): SidecarError {
  return err instanceof SidecarError
    ? err
    : new SidecarError(
        'agent-unreachable',
        `Cannot reach the queue-agent: ${errorText(err)}.`,
        'The sidecar retries; if it keeps failing, check the queue-agent pod.',
      );
}
