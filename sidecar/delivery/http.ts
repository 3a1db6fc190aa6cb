// http mode: POST each message to the debugged process as a CloudEvent (binary mode, see
// cloudEvents.ts). Success is a 2xx; anything else (non-2xx, refused, reset, timeout) is a
// failed attempt that the pipeline retries forever. No request timeout by default: a handler
// paused at a breakpoint is the normal case, and retrying it would deliver a duplicate.
import * as http from 'node:http';
import * as https from 'node:https';
import type { ShadowMessage } from '../../core/shadowMessage';
import { errorText, systemCode } from '../../laptop/errors';
import type { Reporter } from '../output';
import { redactUrl } from '../../laptop/redact';
import { cloudEventHeaders, type EventSource } from './cloudEvents';
import { abortError, Outage, type AttemptResult } from './retry';
import type { Deliverer } from './types';

export interface HttpDeliveryOptions {
  target: URL;
  /** ce-source parts per logical queue. */
  source: (queue: string) => EventSource;
  /** 0 = wait for the response as long as it takes. */
  timeoutMs: number;
  reporter: Reporter;
}

const NET_REASONS: Record<string, string> = {
  ECONNREFUSED: 'connection refused',
  ECONNRESET: 'connection reset',
  EPIPE: 'connection closed',
  ETIMEDOUT: 'connection timed out',
  EHOSTUNREACH: 'host unreachable',
  ENOTFOUND: 'host not found',
};

export class HttpDeliverer implements Deliverer {
  private readonly outageTracker: Outage;

  constructor(private readonly options: HttpDeliveryOptions) {
    this.outageTracker = new Outage(
      options.reporter,
      'target-down',
      `The http target ${redactUrl(options.target.toString())}`,
      'Start (or un-pause) the service you debug so that it answers 2xx on that URL, or fix --target.',
    );
  }

  describe(): string {
    return `POST ${redactUrl(this.options.target.toString())}`;
  }

  outage(): Outage {
    return this.outageTracker;
  }

  attempt(message: ShadowMessage, signal: AbortSignal): Promise<AttemptResult> {
    const { target, timeoutMs } = this.options;
    return new Promise<AttemptResult>((resolve, reject) => {
      if (signal.aborted) {
        reject(abortError());
        return;
      }
      const headers = {
        ...cloudEventHeaders(message, this.options.source(message.queue)),
        'content-length': String(message.body.length),
      };
      const client = target.protocol === 'https:' ? https : http;
      // agent: false — a fresh connection per message, so a stale keep-alive socket can never
      // turn into a spurious "target down".
      const req = client.request(target, { method: 'POST', headers, agent: false, signal }, (res) => {
        const status = res.statusCode ?? 0;
        res.resume(); // the response body is not ours to read
        resolve(status >= 200 && status < 300 ? { ok: true } : { ok: false, reason: `HTTP ${status}` });
      });
      req.on('error', (err) => {
        if (signal.aborted) reject(abortError());
        else resolve({ ok: false, reason: NET_REASONS[systemCode(err) ?? ''] ?? errorText(err) });
      });
      if (timeoutMs > 0)
        req.setTimeout(timeoutMs, () =>
          req.destroy(new Error(`no response within ${Math.round(timeoutMs / 1000)}s`)),
        );
      req.end(message.body);
    });
  }

  async close(): Promise<void> {
    // nothing held open between messages
  }
}
