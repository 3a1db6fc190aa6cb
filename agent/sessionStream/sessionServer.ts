// The queue-agent's session endpoint (core/sessionStream.ts): a WebSocket on the agent's HTTP
// port through which each route's sidecar receives its session messages and sends test
// messages. Only ACTIVE routes are served, each to the one client that proves its secret (by
// signing this connection's challenge, bound to this pod: core/sessionSecret.ts); a
// route that leaves ACTIVE (draining, removed) has its stream ended and its readers stopped
// before the agent drains it, so the drain finds the session shadow without consumers.
//
// Invariants:
//   1. At most one stream per route: the latest authenticated hello of a route wins (a sidecar
//      resuming after a dropped connection must not wait for the old one to time out). The
//      stream it replaces is sent refused{replaced} and closed with 4409, so that client stops
//      instead of resuming and replacing it in turn; an earlier hello still waiting for the old
//      stream to end is refused the same way. The new readers start only after the old ones
//      stopped.
//   2. A reader runs only while its stream is open and its route is ACTIVE in the last desired
//      document given to update(): ending a stream stops its readers, also one still connecting
//      (its stop waits for the start and undoes it, ./reader.ts), and resolves only then.
//   3. No secret, header value or body is logged.
//   4. What a client can make the agent hold is bounded (./bounds.ts): connections at once,
//      unauthenticated ones at once, bytes before the hello is authenticated, and bytes sent but
//      not acked per stream; a refused socket is cut if its peer does not answer the close.
import type * as http from 'node:http';
import type { Duplex } from 'node:stream';
import { WebSocketServer, type RawData, type WebSocket } from 'ws';
import type { AgentQueuePlan, AgentRoute, DesiredState } from '../../core/agentProtocol';
import {
  DEFAULT_SESSION_WINDOW,
  HELLO_TIMEOUT_MS,
  MAX_SESSION_WINDOW,
  SESSION_FEATURES,
  SESSION_PATH,
  SESSION_SUBPROTOCOL,
  decodeClientFrame,
  encodeFrame,
  type ClientFrame,
  type REFUSAL_CODES,
} from '../../core/sessionStream';
import { newNonce, proofMatches } from '../../core/sessionSecret';
import { describeError, type Logger } from '../log';
import { sessionReader } from '../providers/registry';
import type { SessionReader } from './reader';
import { SESSION_BOUNDS } from './bounds';
import { RouteStream, SettledMemory } from './routeStream';
import { TestPublisher, type PublishOutcome } from './testPublisher';

/** Client frames are small (acks, a test message); a larger one is refused. */
const MAX_CLIENT_FRAME_BYTES = 4 * 1024 * 1024;
/** How long stopping a stream's readers may take before the server goes on without them. */
const READER_STOP_MS = 30_000;
const REPLACED_MESSAGE =
  "another client presented this route's secret and now receives its messages (is the split's sidecar running twice?)";

/** A route as the server serves it: the desired route and the plans of its queues. */
interface ServedRoute {
  route: AgentRoute;
  plans: AgentQueuePlan[];
}

interface OpenStream {
  ws: WebSocket;
  stream: RouteStream;
  readers: SessionReader[];
  /** Resolves once the readers stopped (set when the stream ends). */
  ended?: Promise<void>;
}

/** What the server counts for the agent's metrics (agent/queueAgent/metrics.ts). */
export interface SessionMetrics {
  /** A stream ended because another client presented its route's secret. */
  streamReplaced(): void;
  /** A hello or a client frame refused, by the refusal code (`bad-frame`: an unreadable frame;
   * `busy`: a connection over the caps; `pre-auth-bytes`: too much sent before the hello). */
  frameRefused(code: (typeof REFUSAL_CODES)[number] | 'bad-frame' | 'busy' | 'pre-auth-bytes'): void;
}

const noMetrics: SessionMetrics = { streamReplaced: () => undefined, frameRefused: () => undefined };

/** Builds a reader for one queue of a route (tests and the agent use the brokers' own). */
export type ReaderFactory = (plan: AgentQueuePlan, route: AgentRoute) => SessionReader;

export const brokerReaders: ReaderFactory = sessionReader;

export class SessionServer {
  private readonly wss = new WebSocketServer({
    noServer: true,
    maxPayload: MAX_CLIENT_FRAME_BYTES,
    handleProtocols: (protocols) => (protocols.has(SESSION_SUBPROTOCOL) ? SESSION_SUBPROTOCOL : false),
  });
  private served = new Map<string, ServedRoute>();
  private readonly open = new Map<string, OpenStream>();
  private readonly memories = new Map<string, SettledMemory>();
  /** Per route, the client of its latest authenticated hello: the one to serve (invariant 1). */
  private readonly claims = new Map<string, WebSocket>();
  /** Each stream's socket, so a route stream can send a turn's frames in one write. */
  private readonly sockets = new WeakMap<WebSocket, Duplex>();
  private readonly publisher = new TestPublisher();
  private closing = false;
  /** Session connections now, and those whose hello has not been authenticated (invariant 4). */
  private connections = 0;
  private unauthenticated = 0;
  /** Per connection, what to call once its hello proved the route's secret. */
  private readonly onAuthenticated = new WeakMap<WebSocket, () => void>();

  /** Per connection, the nonce of the challenge it was sent. */
  private readonly nonces = new WeakMap<WebSocket, string>();

  constructor(
    private readonly log: Logger,
    /** This agent's pod uid: a proof must name it, so one made for another pod is refused. */
    private readonly podUid: string,
    private readonly readers: ReaderFactory = brokerReaders,
    private readonly metrics: SessionMetrics = noMetrics,
  ) {}

  /** Serves SESSION_PATH upgrades on `server` (the agent's health and metrics server). */
  attach(server: http.Server): void {
    server.on('upgrade', (req: http.IncomingMessage, socket: Duplex, head: Buffer) => {
      const path = new URL(req.url ?? '/', 'http://agent').pathname;
      if (path !== SESSION_PATH || this.closing) {
        socket.end('HTTP/1.1 404 Not Found\r\nConnection: close\r\n\r\n');
        return;
      }
      if (
        this.connections >= SESSION_BOUNDS.maxConnections ||
        this.unauthenticated >= SESSION_BOUNDS.maxPreAuth
      ) {
        this.metrics.frameRefused('busy');
        socket.end('HTTP/1.1 503 Service Unavailable\r\nRetry-After: 2\r\nConnection: close\r\n\r\n');
        return;
      }
      this.connections++;
      this.unauthenticated++;
      let authenticated = false;
      let received = head.length;
      const count = (chunk: Buffer) => {
        received += chunk.length;
        if (received <= SESSION_BOUNDS.preAuthBytes) return;
        socket.off('data', count);
        this.metrics.frameRefused('pre-auth-bytes');
        socket.destroy(); // the half-sent frame ws buffers goes with it
      };
      const authenticate = () => {
        if (authenticated) return;
        authenticated = true;
        this.unauthenticated--;
        socket.off('data', count);
      };
      socket.once('close', () => {
        this.connections--;
        if (!authenticated) this.unauthenticated--;
      });
      this.wss.handleUpgrade(req, socket, head, (ws) => {
        this.onAuthenticated.set(ws, authenticate);
        this.sockets.set(ws, socket);
        this.accept(ws);
      });
      // After ws attached its own listener (synchronously, above), so no chunk is missed by it.
      socket.on('data', count);
    });
  }

  /**
   * Takes the routes of a desired document: ACTIVE ones are served; the streams of every other
   * route end, and this resolves once their readers stopped (so a drain that follows finds no
   * consumer of ours on the session shadow).
   */
  async update(desired: DesiredState): Promise<void> {
    const next = new Map<string, ServedRoute>();
    for (const route of desired.routes) {
      if (route.phase !== 'ACTIVE') continue;
      next.set(route.routeId, {
        route,
        plans: desired.queues.filter((q) => route.queues.includes(q.name) && route.shadows[q.name]),
      });
    }
    this.served = next;
    for (const routeId of this.memories.keys()) if (!next.has(routeId)) this.memories.delete(routeId);
    const ending: Promise<void>[] = [];
    for (const [routeId, open] of this.open) {
      if (!next.has(routeId)) {
        open.stream.notice(
          'route-draining',
          'Your route is draining: its messages go back to the app; this stream ends.',
        );
        ending.push(this.end(open, 'route-draining'));
      }
    }
    await Promise.all(ending);
  }

  /** Routes whose shadows a reader of this server is consuming now. */
  streamingRoutes(): string[] {
    return [...this.open.keys()];
  }

  private accept(ws: WebSocket): void {
    ws.on('error', () => undefined); // a reset connection ends the stream through 'close'
    const nonce = newNonce();
    this.nonces.set(ws, nonce);
    ws.send(encodeFrame({ type: 'challenge', nonce, podUid: this.podUid }));
    const timer = setTimeout(() => this.refuse(ws, 'protocol', 'no hello within 10 s'), HELLO_TIMEOUT_MS);
    ws.once('message', (data: RawData, isBinary: boolean) => {
      clearTimeout(timer);
      const decoded = isBinary
        ? decodeClientFrame(asBytes(data))
        : { ok: false as const, problem: 'a text frame' };
      if (!decoded.ok || decoded.frame.type !== 'hello') {
        this.refuse(
          ws,
          'protocol',
          `the first frame must be a hello (${decoded.ok ? decoded.frame.type : decoded.problem})`,
        );
        return;
      }
      void this.start(ws, decoded.frame).catch((err: unknown) => {
        this.log.error('session.start_failed', { reason: describeError(err) });
        this.refuse(ws, 'protocol', 'the agent could not start the stream');
      });
    });
  }

  private refuse(ws: WebSocket, code: (typeof REFUSAL_CODES)[number], message: string): void {
    this.metrics.frameRefused(code);
    if (ws.readyState === ws.OPEN) ws.send(encodeFrame({ type: 'refused', code, message }));
    ws.close(code === 'unauthorized' ? 4401 : code === 'replaced' ? 4409 : 4400, code);
    // ws waits 30 s for the peer's close; a peer that never answers must not hold the socket.
    setTimeout(() => ws.terminate(), SESSION_BOUNDS.closeGraceMs).unref();
  }

  private async start(ws: WebSocket, hello: Extract<ClientFrame, { type: 'hello' }>): Promise<void> {
    const served = this.served.get(hello.routeId);
    if (!served) {
      this.log.warn('session.refused', { route: hello.routeId, why: 'route-not-active' });
      return this.refuse(ws, 'route-not-active', `route ${hello.routeId} is not active on this queue-agent`);
    }
    const challenge = { routeId: hello.routeId, podUid: this.podUid, nonce: this.nonces.get(ws) ?? '' };
    if (!served.route.publicKey || !proofMatches(served.route.publicKey, challenge, hello.proof)) {
      this.log.warn('session.refused', { route: hello.routeId, why: 'unauthorized' });
      return this.refuse(
        ws,
        'unauthorized',
        served.route.publicKey
          ? "the proof does not match this route's key and this connection's challenge: only the sidecar that created the split can receive its messages"
          : 'this route has no session key (it was created for env delivery, or by a version before session keys: start the split again)',
      );
    }
    this.onAuthenticated.get(ws)?.();
    // Claimed before any wait: of hellos that arrive together, the last one is served and the
    // others see they were overtaken once the old stream ended (invariant 1).
    this.claims.set(hello.routeId, ws);
    const previous = this.open.get(hello.routeId);
    if (previous) await this.end(previous, 'replaced', 4409);
    if (this.claims.get(hello.routeId) !== ws) {
      this.log.warn('session.refused', { route: hello.routeId, why: 'replaced' });
      return this.refuse(ws, 'replaced', REPLACED_MESSAGE);
    }
    if (ws.readyState !== ws.OPEN || this.served.get(hello.routeId) !== served) {
      this.claims.delete(hello.routeId);
      if (ws.readyState === ws.OPEN)
        this.refuse(ws, 'route-not-active', `route ${hello.routeId} is no longer active`);
      return;
    }
    const window = Math.min(hello.window || DEFAULT_SESSION_WINDOW, MAX_SESSION_WINDOW);
    let memory = this.memories.get(hello.routeId);
    if (!memory) this.memories.set(hello.routeId, (memory = new SettledMemory()));
    const asked = hello.unsettled ?? [];
    // What an earlier stream left unproven waits for this one's readers to prove it (routeStream.ts).
    const unproven = memory.unproven(asked);
    const stream = new RouteStream(
      ws,
      hello.routeId,
      window,
      memory,
      unproven,
      SESSION_BOUNDS.maxUnackedBytes,
      this.sockets.get(ws),
    );
    const open: OpenStream = { ws, stream, readers: [] };
    this.open.set(hello.routeId, open);
    ws.on('message', (data: RawData, isBinary: boolean) => this.onFrame(open, served, data, isBinary));
    ws.on('close', () => void this.end(open, 'client gone'));
    stream.frame({
      type: 'welcome',
      routeId: hello.routeId,
      queues: served.plans.map((p) => ({ name: p.name, provider: p.provider })),
      window,
      // Read after the previous stream's readers stopped: what they committed is in it.
      settled: memory.settled(asked),
      features: [...SESSION_FEATURES],
    });
    this.log.info('session.opened', {
      route: hello.routeId,
      window,
      queues: served.plans.map((p) => p.name).join(','),
      // Counts only: which messages is the sidecar's business, not the agent's log's.
      ...(asked.length > 0 ? { askedUnsettled: asked.length, unproven: unproven.length } : {}),
    });
    const fail = (queue: string) => (err: unknown) => {
      this.log.warn('session.reader_failed', { route: hello.routeId, queue, reason: describeError(err) });
      stream.notice(
        'reader-failed',
        `reading your session shadow of ${queue} failed; reconnect to resume`,
        queue,
      );
      void this.end(open, 'reader failed', 1011);
    };
    for (const plan of served.plans) {
      if (stream.isClosed) break;
      const reader = this.readers(plan, served.route);
      open.readers.push(reader);
      try {
        await reader.start(stream, fail(plan.name));
      } catch (err) {
        fail(plan.name)(err);
        break;
      }
    }
  }

  private onFrame(open: OpenStream, served: ServedRoute, data: RawData, isBinary: boolean): void {
    const decoded = isBinary
      ? decodeClientFrame(asBytes(data))
      : { ok: false as const, problem: 'a text frame' };
    if (!decoded.ok) {
      this.log.warn('session.bad_frame', { route: open.stream.routeId, problem: decoded.problem });
      this.metrics.frameRefused('bad-frame');
      void this.end(open, 'protocol error', 4400);
      return;
    }
    const frame = decoded.frame;
    switch (frame.type) {
      case 'ack':
        open.stream.onAck(frame.tags);
        return;
      case 'reject':
        // The developer gave up on these (their handler kept failing): the readers settle them
        // as the app's own reject would. Counted, never named: ids stay out of the agent's log.
        open.stream.onReject(frame.tags);
        this.log.info('session.rejected', { route: open.stream.routeId, messages: frame.tags.length });
        return;
      case 'bye':
        void this.end(open, 'client stopped');
        return;
      case 'hello':
        void this.end(open, 'protocol error: a second hello', 4400);
        return;
      case 'publish': {
        const plan = served.plans.find((p) => p.name === frame.queue);
        const reply = (outcome: PublishOutcome) =>
          open.stream.frame(
            outcome.ok
              ? { type: 'published', requestId: frame.requestId, messageId: outcome.messageId }
              : { type: 'publishRefused', requestId: frame.requestId, reason: outcome.reason },
          );
        if (!plan) {
          reply({ ok: false, reason: `queue "${frame.queue}" is not part of your split` });
          return;
        }
        void this.publisher
          .publish(plan, served.route.filter, frame)
          .then(reply, (err: unknown) => reply({ ok: false, reason: describeError(err) }));
        this.log.info('session.test_message', { route: open.stream.routeId, queue: plan.name });
        return;
      }
    }
  }

  /** Ends a stream: stop sending, stop its readers (committing what was acked), then close. */
  private end(open: OpenStream, reason: string, wsCode = 1000): Promise<void> {
    if (open.ended) return open.ended;
    open.stream.stop(reason);
    open.ended = (async () => {
      const stopping = Promise.all(open.readers.map((r) => r.stop()));
      let timer: NodeJS.Timeout | undefined;
      const late = await Promise.race([
        stopping.then(() => false),
        new Promise<boolean>((resolve) => (timer = setTimeout(() => resolve(true), READER_STOP_MS))),
      ]);
      clearTimeout(timer);
      if (late) this.log.warn('session.reader_stop_slow', { route: open.stream.routeId });
      if (wsCode === 4409) this.metrics.streamReplaced();
      open.stream.finish(
        reason,
        wsCode,
        wsCode === 4409 ? { type: 'refused', code: 'replaced', message: REPLACED_MESSAGE } : undefined,
      );
      if (this.open.get(open.stream.routeId) === open) this.open.delete(open.stream.routeId);
      if (this.claims.get(open.stream.routeId) === open.ws) this.claims.delete(open.stream.routeId);
      this.log.info('session.closed', { route: open.stream.routeId, reason, ...open.stream.counts });
    })();
    return open.ended;
  }

  async close(): Promise<void> {
    this.closing = true;
    await Promise.all([...this.open.values()].map((o) => this.end(o, 'agent stopping', 1001)));
    await this.publisher.close();
    this.wss.close();
  }
}

function asBytes(data: RawData): Uint8Array {
  if (Array.isArray(data)) return Buffer.concat(data);
  return data instanceof ArrayBuffer ? new Uint8Array(data) : data;
}
