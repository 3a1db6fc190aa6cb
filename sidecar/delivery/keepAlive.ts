// The http mode's connection pool: POSTs reuse kept-alive sockets instead of opening one per
// message. Bounded: as many sockets as lanes deliver at once (one POST per lane, the session
// stream's window bounds them), at most MAX_SOCKETS (more wait their turn), and idle ones are
// closed soon, so the developer's usual pace (a message now and then) connects anew each time as
// before, and only a steady flow reuses sockets.
import * as http from 'node:http';
import * as https from 'node:https';
import { systemCode } from '../../laptop/errors';

/** Sockets open at once: the default session window's worth of lanes delivering together. */
export const MAX_SOCKETS = 64;
/** Idle sockets kept for the next POSTs. */
const MAX_FREE_SOCKETS = 16;
/** An idle socket is closed after this. Short: below the idle timeouts servers commonly use
 * (Node's 5 s, gunicorn's 2 s), so the target rarely closes one just as we reuse it; and a
 * socket whose peer vanished without a word is reused only within this of its last answer. */
const IDLE_SOCKET_MS = 1_000;
/** Once a response's status came, its body may take this long to end before its socket is cut. */
export const BODY_DRAIN_MS = 10_000;

export function keepAliveAgent(target: URL, maxSockets = MAX_SOCKETS): http.Agent {
  const options: http.AgentOptions = {
    keepAlive: true,
    maxSockets,
    maxFreeSockets: Math.min(MAX_FREE_SOCKETS, maxSockets),
    // Node's agent closes a free socket on this timeout (and sooner if the server's Keep-Alive
    // header says so); on a socket in use it only emits 'timeout', which nothing here acts on, so
    // a handler paused at a breakpoint is waited for as before.
    timeout: IDLE_SOCKET_MS,
    scheduling: 'lifo', // the most recently used socket: the least likely to have been closed
  };
  return target.protocol === 'https:' ? new https.Agent(options) : new http.Agent(options);
}

/** How a reused socket the target had closed fails a request before any answer. */
export function isStaleSocketError(err: unknown): boolean {
  const code = systemCode(err);
  return code === 'ECONNRESET' || code === 'EPIPE';
}
