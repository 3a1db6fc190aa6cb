// The source side of the engine: the relay that consumes the source, whether it should be
// consuming (so a reconnect resumes it), restarting it when the broker closes its channel,
// and, on quorum sources, the ownership watch.
import type { EngineHooks } from '../engine/contract';
import { describeError, type Logger } from '../log';
import type { PublishBarrier } from '../engine/publishBarrier';
import { replyCode, ReplyCode } from './amqpErrors';
import type { RabbitTiming } from './config';
import type { ManagementClient } from './management';
import { OwnershipMonitor, type ForeignConsumers } from './foreignConsumers';
import { Relay, type RelayProblem, type RelaySelection } from './relay';
import type { Link } from './amqpConnection';
import type { RouteNames } from './routing';
import type { ConsumeMessage } from 'amqplib';

export interface SourcePumpOptions {
  readonly sourceQueue: string;
  /** The exchanges of the split's destinations (routing.ts). */
  readonly routes: RouteNames;
  readonly consumerTag: string;
  readonly prefetch: number;
  readonly engineUser: string;
  readonly timing: RabbitTiming;
  readonly management: ManagementClient;
  readonly barrier: PublishBarrier;
  readonly hooks: EngineHooks;
  readonly logger: Logger;
  readonly select: (msg: ConsumeMessage) => RelaySelection;
  readonly onRouted: (selection: RelaySelection) => void;
  /** The live link, to reopen the consumer on, and a way to give up on it. */
  readonly currentLink: () => Link | undefined;
  readonly dropLink: (reason: string) => Promise<void>;
}

export class SourcePump {
  private wanted = false;
  private lostSince: string | undefined;
  /** A foreign consumer made the broker refuse our exclusive consume on reconnect. */
  private refusedSince: string | undefined;
  private readonly relay: Relay;
  private readonly ownership: OwnershipMonitor;

  constructor(private readonly options: SourcePumpOptions) {
    this.relay = new Relay({
      queue: options.sourceQueue,
      routes: options.routes,
      prefetch: options.prefetch,
      consumerTag: options.consumerTag,
      engineUser: options.engineUser,
      select: options.select,
      barrier: options.barrier,
      hooks: options.hooks,
      onRouted: options.onRouted,
      onLost: (why) => this.lost(why),
      retryInitialMs: options.timing.retryInitialMs,
      retryMaxMs: options.timing.retryMaxMs,
      logger: options.logger,
    });
    this.ownership = new OwnershipMonitor(
      options.management,
      options.sourceQueue,
      () => [options.consumerTag],
      options.timing.ownershipPollMs,
      options.logger,
    );
  }

  get sourceLostSince(): string | undefined {
    return this.lostSince;
  }

  get foreign(): ForeignConsumers | undefined {
    if (this.refusedSince)
      return { tags: ['(holds the classic source exclusively)'], since: this.refusedSince };
    return this.ownership.current;
  }

  get problems(): RelayProblem[] {
    return this.relay.problems();
  }

  get retrying(): number {
    return this.relay.retryingCount;
  }

  get open(): number {
    return this.relay.open;
  }

  /** Consuming, meant to consume (it resumes after a reconnect), or still settling deliveries:
   * the application shadow may receive copies. */
  get active(): boolean {
    return this.wanted || this.relay.isConsuming || this.relay.open > 0;
  }

  /** Consumes the source from now on (and after every reconnect). 'refused': the broker
   * refused the exclusive consume because someone else consumes the classic source. */
  async start(link: Link, watchOwnership: boolean): Promise<'started' | 'refused'> {
    this.wanted = true;
    this.lostSince = undefined;
    this.refusedSince = undefined;
    try {
      await this.relay.start(link);
    } catch (err) {
      this.wanted = false;
      if (replyCode(err) === ReplyCode.ACCESS_REFUSED) return 'refused';
      throw err;
    }
    if (watchOwnership) this.ownership.start();
    return 'started';
  }

  /** Cancel first, then settle every taken delivery (true), or time out (false). */
  async stop(timeoutMs: number): Promise<boolean> {
    this.wanted = false;
    this.refusedSince = undefined;
    this.ownership.stop();
    return this.relay.stop(timeoutMs);
  }

  /** A new connection holds the fence: consume again if we were. */
  async resume(link: Link): Promise<void> {
    if (!this.wanted) return;
    try {
      await this.relay.start(link);
      this.refusedSince = undefined;
    } catch (err) {
      if (replyCode(err) !== ReplyCode.ACCESS_REFUSED) throw err;
      // While we were away someone else took the classic source: report it, keep trying.
      this.refusedSince ??= new Date().toISOString();
      this.lost('channel-closed');
    }
  }

  linkLost(): void {
    this.relay.linkLost();
  }

  private lost(why: 'cancelled' | 'channel-closed'): void {
    if (why === 'cancelled') {
      // The broker cancels a consumer when its queue is deleted: nothing to resume.
      this.lostSince ??= new Date().toISOString();
      return;
    }
    const delay = this.refusedSince ? this.options.timing.retryMaxMs : this.options.timing.retryInitialMs;
    setTimeout(() => {
      const link = this.options.currentLink();
      if (!this.wanted || !link || this.relay.isConsuming) return;
      this.resume(link).catch((err: unknown) => {
        this.options.logger.warn('pump.restart-failed', { error: describeError(err) });
        void this.options.dropLink('the source channel cannot be reopened');
      });
    }, delay);
  }
}
