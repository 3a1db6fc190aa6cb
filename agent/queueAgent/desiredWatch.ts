// Wakes the queue-agent's loop when its desired document changes, so a controller ↔ agent round
// trip costs the watch's latency (milliseconds) instead of up to one poll interval. The poll
// stays the fallback: a watch that is refused (a Role from an older controller grants only
// `get`), drops or stalls costs latency, never a change — the loop still reads the document
// itself on every pass, the watch only says "read it now".
import { Watch, type KubeConfig, type V1ConfigMap } from '@kubernetes/client-node';
import { describeError, type Logger } from '../log';

const RETRY_MIN_MS = 500;
const RETRY_MAX_MS = 30_000;
/** The API server ends each watch after this long: a silently dead connection is replaced. */
const WATCH_TIMEOUT_SECONDS = 300;
/** While the watch keeps failing, its warning is repeated at most this often. */
const WARN_EVERY_MS = 60_000;

export class DesiredWatch {
  private abort: AbortController | undefined;
  private retry: NodeJS.Timeout | undefined;
  private stopped = false;
  private failures = 0;
  private warnedAt = 0;
  /** The document text last seen by the watch: other keys of the ConfigMap do not wake. */
  private lastText: string | undefined;
  /** A change arrived while no wait was running (during a pass): the next wait returns at once. */
  private pending = false;
  private wake: (() => void) | undefined;

  constructor(
    private readonly kc: KubeConfig,
    private readonly namespace: string,
    private readonly name: string,
    private readonly key: string,
    private readonly log: Logger,
  ) {}

  start(): void {
    void this.open();
  }

  stop(): void {
    this.stopped = true;
    clearTimeout(this.retry);
    this.abort?.abort();
    this.wake?.();
  }

  /** Resolves after `ms`, or as soon as the document changed (at once if it changed since). */
  async wait(ms: number): Promise<void> {
    if (!this.pending && !this.stopped) {
      await new Promise<void>((resolve) => {
        const timer = setTimeout(resolve, ms);
        this.wake = () => {
          clearTimeout(timer);
          resolve();
        };
      });
    }
    this.wake = undefined;
    this.pending = false;
  }

  private changed(cm: V1ConfigMap | undefined): void {
    const text = cm?.data?.[this.key];
    if (text === this.lastText) return;
    this.lastText = text;
    this.pending = true;
    this.wake?.();
  }

  private async open(): Promise<void> {
    if (this.stopped) return;
    const path = `/api/v1/namespaces/${encodeURIComponent(this.namespace)}/configmaps`;
    const query = { fieldSelector: `metadata.name=${this.name}`, timeoutSeconds: WATCH_TIMEOUT_SECONDS };
    try {
      this.abort = await new Watch(this.kc).watch(
        path,
        query,
        (type: string, obj: V1ConfigMap) => {
          this.failures = 0;
          if (type === 'ADDED' || type === 'MODIFIED') this.changed(obj);
          else if (type === 'DELETED') this.changed(undefined);
        },
        (err: unknown) => this.closed(err),
      );
    } catch (err) {
      this.closed(err);
    }
  }

  /** The watch ended: a server-side timeout reopens at once, an error after a backoff. */
  private closed(err: unknown): void {
    this.abort = undefined;
    if (this.stopped) return;
    let delay = 0;
    if (err) {
      this.failures += 1;
      delay = Math.min(RETRY_MAX_MS, RETRY_MIN_MS * 2 ** Math.min(this.failures - 1, 6));
      const now = Date.now();
      if (now - this.warnedAt >= WARN_EVERY_MS) {
        this.warnedAt = now;
        // The watch's own errors carry `statusCode` (403: a Role that grants only `get`).
        const status = (err as { statusCode?: number }).statusCode;
        this.log.warn('agent.desired_watch_failed', {
          reason: describeError(err).split('\n')[0]!.slice(0, 300),
          ...(status !== undefined ? { status } : {}),
          fallback: 'polling',
        });
      }
    }
    this.retry = setTimeout(() => void this.open(), delay);
  }
}
