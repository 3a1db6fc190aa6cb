// The engine's one AMQP connection, its fence, and reconnection.
//
// Fencing: the first thing on every connection is the exclusive classic lock queue. While this
// connection lives no other engine can declare it (405 RESOURCE_LOCKED), and every publish the
// engine makes travels on this same connection, so an engine that publishes holds the fence.
// A contender that finds the lock held is `fenced` and publishes nothing.
//
// Loss of the connection (network, broker restart, an operator closing it) is never fatal:
// the broker requeues unacked source deliveries, in-flight publishes become ambiguous (retried
// or redelivered: duplicates, not loss), and the session reconnects with backoff, takes the
// fence again and lets the engine resume. Nothing is ever deleted on the way.
import * as amqp from 'amqplib';
import { describeError, type Logger } from '../log';
import { Backoff } from '../engine/timing';
import { replyCode, ReplyCode } from './amqpErrors';
import { ConfirmPublisher } from './publisher';
import { captureRawHeaders } from './rawHeaders';
import type { AmqpTarget } from './urls';

export type ConnectResult =
  | { readonly kind: 'up'; readonly link: Link }
  | { readonly kind: 'fenced'; readonly reason: string }
  | { readonly kind: 'unavailable'; readonly reason: string };

export interface SessionOptions {
  readonly target: AmqpTarget;
  readonly lockQueue: string;
  /** Shown by the broker (management UI, `rabbitmqctl list_connections`). */
  readonly connectionName: string;
  readonly reconnectInitialMs: number;
  readonly reconnectMaxMs: number;
  readonly logger: Logger;
}

export interface SessionHandlers {
  /** A connection holding the fence is up; the engine resumes on it. Throwing drops it. */
  onUp(link: Link): Promise<void>;
  onDown(reason: string): void;
  onFenced(reason: string): void;
}

/** One connection incarnation. Once it closes it stays dead; the session makes a new one. */
export class Link {
  alive = true;
  private publisherNow: ConfirmPublisher | undefined;
  private opening: Promise<ConfirmPublisher> | undefined;

  constructor(
    readonly incarnation: number,
    readonly model: amqp.ChannelModel,
    private readonly logger: Logger,
  ) {}

  /** A new channel with an error listener (an unheard 'error' event crashes Node). */
  async channel(purpose: string): Promise<amqp.Channel> {
    const ch = await this.model.createChannel();
    this.watch(ch, purpose);
    return ch;
  }

  /** Runs one operation on a throwaway channel: passive declares and conditional deletes
   * close their channel when refused, and must not take anything else down with them. */
  async withChannel<T>(purpose: string, op: (ch: amqp.Channel) => Promise<T>): Promise<T> {
    const ch = await this.channel(purpose);
    try {
      return await op(ch);
    } finally {
      await ch.close().catch(() => undefined);
    }
  }

  /** The live publisher if it has one right now (synchronous, to keep delivery order). */
  currentPublisher(): ConfirmPublisher | undefined {
    return this.publisherNow?.open ? this.publisherNow : undefined;
  }

  /** The publisher, re-opened if the broker closed its channel. */
  async publisher(): Promise<ConfirmPublisher> {
    const live = this.currentPublisher();
    if (live) return live;
    this.opening ??= (async () => {
      const ch = await this.model.createConfirmChannel();
      this.watch(ch, 'publish');
      this.publisherNow = new ConfirmPublisher(ch, this.logger);
      return this.publisherNow;
    })().finally(() => {
      this.opening = undefined;
    });
    return this.opening;
  }

  private watch(ch: amqp.Channel, purpose: string): void {
    ch.on('error', (err: Error) =>
      this.logger.debug('amqp.channel-closed', { purpose, code: replyCode(err), error: describeError(err) }),
    );
  }
}

export class AmqpConnection {
  private link: Link | undefined;
  private connecting: Promise<ConnectResult> | undefined;
  private timer: NodeJS.Timeout | undefined;
  private incarnation = 0;
  private closed = false;
  /** Reconnect in the background only after the engine has held the fence once. */
  private keepAlive = false;
  private fencedReason: string | undefined;
  private readonly backoff: Backoff;

  constructor(
    private readonly options: SessionOptions,
    private readonly handlers: SessionHandlers,
  ) {
    this.backoff = new Backoff(options.reconnectInitialMs, options.reconnectMaxMs);
  }

  current(): Link | undefined {
    return this.link?.alive ? this.link : undefined;
  }

  get fenced(): string | undefined {
    return this.fencedReason;
  }

  /** Up now, or one attempt right away (steps never wait for the background backoff). */
  async ensureUp(): Promise<ConnectResult> {
    const link = this.current();
    if (link) return { kind: 'up', link };
    if (this.closed) return { kind: 'unavailable', reason: 'the engine is closed' };
    return this.connectOnce();
  }

  async close(): Promise<void> {
    this.closed = true;
    clearTimeout(this.timer);
    await this.connecting?.catch(() => undefined);
    const link = this.link;
    this.link = undefined;
    if (link?.alive) {
      link.alive = false;
      await link.model.close().catch(() => undefined);
    }
  }

  /** Drops the current connection (the engine found it unusable); reconnects with backoff. */
  async drop(reason: string): Promise<void> {
    const link = this.current();
    if (!link) return;
    this.options.logger.warn('amqp.drop', { reason });
    await link.model.close().catch(() => undefined);
  }

  private connectOnce(): Promise<ConnectResult> {
    this.connecting ??= this.attempt().finally(() => {
      this.connecting = undefined;
    });
    return this.connecting;
  }

  private async attempt(): Promise<ConnectResult> {
    const { logger } = this.options;
    let model: amqp.ChannelModel;
    try {
      model = await amqp.connect(this.options.target.url, {
        clientProperties: { connection_name: this.options.connectionName },
      });
    } catch (err) {
      const reason = `cannot connect to RabbitMQ: ${describeError(err)}`;
      logger.warn('amqp.connect-failed', { error: describeError(err) });
      return { kind: 'unavailable', reason };
    }
    try {
      // Before any channel: every message this connection receives carries its raw header
      // table, so copies keep each header's AMQP type (rawHeaders.ts).
      captureRawHeaders(model);
    } catch (err) {
      await model.close().catch(() => undefined);
      logger.error('amqp.raw-headers-unavailable', { error: describeError(err) });
      return { kind: 'unavailable', reason: describeError(err) };
    }
    const link = new Link(++this.incarnation, model, logger);
    model.on('error', (err: Error) =>
      logger.warn('amqp.connection-error', { code: replyCode(err), error: describeError(err) }),
    );
    model.on('blocked', (reason: string) => logger.warn('amqp.blocked', { reason }));
    model.on('unblocked', () => logger.info('amqp.unblocked'));
    model.on('close', (err?: Error) => this.onClose(link, err));
    try {
      await link.withChannel('lock', (ch) =>
        ch.assertQueue(this.options.lockQueue, {
          exclusive: true,
          durable: false,
          arguments: { 'x-queue-type': 'classic' }, // exclusive queues are classic; say so on 4.x vhosts defaulting to quorum
        }),
      );
    } catch (err) {
      link.alive = false;
      await model.close().catch(() => undefined);
      if (replyCode(err) === ReplyCode.RESOURCE_LOCKED) {
        this.fencedReason = `another engine holds the lock queue ${this.options.lockQueue}`;
        logger.warn('amqp.fenced', { lockQueue: this.options.lockQueue });
        return { kind: 'fenced', reason: this.fencedReason };
      }
      return { kind: 'unavailable', reason: `cannot take the lock queue: ${describeError(err)}` };
    }
    this.fencedReason = undefined;
    this.link = link;
    try {
      await this.handlers.onUp(link);
    } catch (err) {
      logger.warn('amqp.resume-failed', { error: describeError(err) });
      if (this.link === link) this.link = undefined;
      link.alive = false;
      await model.close().catch(() => undefined);
      if (this.keepAlive) this.scheduleReconnect();
      return { kind: 'unavailable', reason: `connected, but could not resume: ${describeError(err)}` };
    }
    this.keepAlive = true;
    this.backoff.reset();
    logger.info('amqp.up', { incarnation: link.incarnation });
    return { kind: 'up', link };
  }

  private onClose(link: Link, err: Error | undefined): void {
    const wasCurrent = this.link === link && link.alive;
    link.alive = false;
    if (!wasCurrent) return;
    this.link = undefined;
    const reason = err ? describeError(err) : 'connection closed';
    this.options.logger.warn('amqp.down', { incarnation: link.incarnation, error: reason });
    this.handlers.onDown(reason);
    if (!this.closed && this.keepAlive) this.scheduleReconnect();
  }

  private scheduleReconnect(): void {
    if (this.timer || this.closed) return;
    const delay = this.backoff.next();
    this.timer = setTimeout(() => {
      this.timer = undefined;
      void this.connectOnce().then((result) => {
        if (result.kind === 'up' || this.closed) return;
        if (result.kind === 'fenced') this.handlers.onFenced(result.reason);
        this.scheduleReconnect();
      });
    }, delay);
  }
}
