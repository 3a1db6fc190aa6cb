// http mode: POST each message to the debugged process as a CloudEvent (binary mode, see
// cloudEvents.ts). Success is a 2xx; anything else (non-2xx, refused, reset, timeout) is a
// failed attempt that the pipeline retries forever. No request timeout by default: a handler
// paused at a breakpoint is the normal case, and retrying it would deliver a duplicate.
//
// Connections are kept alive between POSTs (a new TCP connection per message cost most of the
// http hop: docs/design.md "added latency"), in a bounded pool (./keepAlive.ts). What a
// kept-alive socket could break is guarded here:
//   - a socket the target closed just as we reused it fails before any answer: the same POST
//     goes once more, at once, on a new connection, neither a failed attempt nor "target down";
//   - a response belongs to its request: Node's agent never pipelines, and hands a socket on
//     only after its response ended; a timed-out or aborted request destroys its socket, so its
//     late answer can never be read as another message's;
//   - a response body that does not end soon is cut with its socket, so it cannot hold one of
//     the pool's sockets for ever.
import * as http from 'node:http';
import * as https from 'node:https';
import type { ShadowMessage } from '../../core/shadowMessage';
import { errorText, systemCode } from '../../laptop/errors';
import type { Reporter } from '../output';
import { redactUrl } from '../../laptop/redact';
import { cloudEventHeaders, type EventSource } from './cloudEvents';
import { keepAliveAgent, isStaleSocketError, BODY_DRAIN_MS } from './keepAlive';
import { abortError, Outage, type AttemptResult } from './retry';
import type { Deliverer } from './types';

export interface HttpDeliveryOptions {
  target: URL;
  /** ce-source parts per logical queue. */
  source: (queue: string) => EventSource;
  /** 0 = wait for the response as long as it takes. */
  timeoutMs: number;
  reporter: Reporter;
  /** Sockets the pool may hold at once (tests make it small; default keepAlive.ts). */
  maxSockets?: number;
  /** How long a response body may take to end once its status came (tests make it short). */
  bodyDrainMs?: number;
}

const NET_REASONS: Record<string, string> = {
  ECONNREFUSED: 'connection refused',
  ECONNRESET: 'connection reset',
  EPIPE: 'connection closed',
  ETIMEDOUT: 'connection timed out',
  EHOSTUNREACH: 'host unreachable',
  ENOTFOUND: 'host not found',
};

/** One POST's outcome; `stale`: it failed on a reused socket before any answer. */
type Posted = AttemptResult | { ok: false; reason: string; stale: true };

export class HttpDeliverer implements Deliverer {
  private readonly outageTracker: Outage;
  private readonly agent: http.Agent;

  constructor(private readonly options: HttpDeliveryOptions) {
    this.outageTracker = new Outage(
      options.reporter,
      'target-down',
      `The http target ${redactUrl(options.target.toString())}`,
      'Start (or un-pause) the service you debug so that it answers 2xx on that URL, or fix --target.',
    );
    this.agent = keepAliveAgent(options.target, options.maxSockets);
  }

  describe(): string {
    return `POST ${redactUrl(this.options.target.toString())}`;
  }

  outage(): Outage {
    return this.outageTracker;
  }

  async attempt(message: ShadowMessage, signal: AbortSignal): Promise<AttemptResult> {
    const first = await this.post(message, signal, this.agent);
    // Once only, and on a connection of its own (another pooled socket may be just as stale).
    return 'stale' in first ? this.post(message, signal, false) : first;
  }

  private post(message: ShadowMessage, signal: AbortSignal, agent: http.Agent | false): Promise<Posted> {
    const { target, timeoutMs } = this.options;
    return new Promise<Posted>((resolve, reject) => {
      if (signal.aborted) {
        reject(abortError());
        return;
      }
      const headers = {
        ...cloudEventHeaders(message, this.options.source(message.queue)),
        'content-length': String(message.body.length),
      };
      const client = target.protocol === 'https:' ? https : http;
      let answered = false;
      const req = client.request(target, { method: 'POST', headers, agent, signal }, (res) => {
        answered = true;
        const status = res.statusCode ?? 0;
        // The body is not ours to read: dropped, so the socket can serve the next POST.
        const drain = setTimeout(() => res.destroy(), this.options.bodyDrainMs ?? BODY_DRAIN_MS);
        drain.unref();
        res.on('close', () => clearTimeout(drain));
        res.resume();
        resolve(status >= 200 && status < 300 ? { ok: true } : { ok: false, reason: `HTTP ${status}` });
      });
      req.on('error', (err) => {
        if (signal.aborted) reject(abortError());
        else {
          const reason = NET_REASONS[systemCode(err) ?? ''] ?? errorText(err);
          resolve(
            agent !== false && req.reusedSocket && !answered && isStaleSocketError(err)
              ? { ok: false, reason, stale: true }
              : { ok: false, reason },
          );
        }
      });
      if (timeoutMs > 0)
        req.setTimeout(timeoutMs, () =>
          req.destroy(new Error(`no response within ${Math.round(timeoutMs / 1000)}s`)),
        );
      req.end(message.body);
    });
  }

  async close(): Promise<void> {
    this.agent.destroy(); // the kept-alive sockets; a POST still under way ends with it
  }
}
