// The broker work on shadow queues that drains, rollback, handoff and cleanup share: proving
// a queue idle (quiesce-and-recheck), emptying it into another queue, and removing it
// loss-proof. Answers are "ok" or the `pending` outcome to return; nothing here decides phases.
import type { RetainedResource } from '../engine/contract';
import type { Logger } from '../log';
import type { Step } from '../engine/port';
import { pending } from '../engine/outcome';
import type { RabbitTiming } from './config';
import type { ManagementClient } from './management';
import { moveAll } from './mover';
import type { SourceType } from './sourceCheck';
import { describeCounts, idle, noConsumers, prove, readCounts, type Expectation, type Proof } from './probe';
import type { NoPublisher } from './noPublisher';
import type { Link } from './amqpConnection';
import { removeShadow } from './shadows';
import type { RouteNames } from './routing';

export interface Emptied {
  /** Messages moved out of the queue by this emptying, across the calls it took. */
  readonly moved: number;
  readonly exists: boolean;
}

export class ShadowWork {
  /** Moves per (queue, destination) until the step using them is done, so a retried step
   * reports its whole work (in memory only: after a restart the count starts again). */
  private readonly movedSoFar = new Map<string, number>();
  private moves = 0;
  private running = 0;

  constructor(
    private readonly management: ManagementClient,
    private readonly timing: RabbitTiming,
    private readonly engineUser: string,
    private readonly prefetch: number,
    /** The split's destinations' exchanges, which moves publish through. */
    private readonly routes: RouteNames,
    private readonly logger: Logger,
  ) {}

  /** `quiesceMs` defaults to the statistics-safe interval; a proof resting only on live AMQP
   * facts may pass a shorter one. */
  prove(link: Link, queue: string, expect: Expectation, quiesceMs = this.timing.quiesceMs): Promise<Proof> {
    return prove(() => readCounts(link, this.management, queue), queue, expect, {
      deadline: Date.now() + this.timing.stepTimeoutMs,
      pollIntervalMs: this.timing.pollIntervalMs,
      quiesceMs,
    });
  }

  /** Waits until `queue` has no consumers and moves everything in it to `to`. With
   * `proveIdle`, then proves it idle with the statistics (a delivery requeued by a consumer
   * that left late is moved on the next round); without, the caller removes the queue next,
   * which proves it afresh. */
  async empty(
    link: Link,
    queue: string,
    to: string,
    whoMustLeave: string,
    proveIdle: boolean,
  ): Promise<Step<Emptied>> {
    // No quiesce here: a consumer that comes back during the move is caught by the final
    // proof, which includes consumers.
    const nobody = await prove(() => readCounts(link, this.management, queue), queue, noConsumers, {
      deadline: Date.now() + this.timing.stepTimeoutMs,
      pollIntervalMs: this.timing.pollIntervalMs,
      quiesceMs: 0,
    });
    if (!nobody.ok) {
      return {
        ok: false,
        outcome: pending('consumers-attached', `waiting for ${whoMustLeave} to leave: ${nobody.reason}`),
      };
    }
    const key = `${queue}\u0000${to}`;
    const total = () => this.movedSoFar.get(key) ?? 0;
    if (!nobody.counts.exists) return this.finish(key, false);
    const deadline = Date.now() + this.timing.stepTimeoutMs;
    for (;;) {
      this.running++;
      const move = await moveAll(link, queue, to, {
        routes: this.routes,
        engineUser: this.engineUser,
        prefetch: this.prefetch,
        deadline,
        consumerTag: `queue-split-move-${++this.moves}`,
        logger: this.logger,
      }).finally(() => this.running--);
      this.movedSoFar.set(key, total() + move.moved);
      if (!move.complete) {
        const why = `moved ${total()} from ${queue} to ${to}; ${move.reason ?? 'not finished'}`;
        return { ok: false, outcome: pending('backlog', why) };
      }
      if (!proveIdle) return this.finish(key, true);
      const proof = await this.prove(link, queue, idle);
      if (proof.ok) return this.finish(key, proof.counts.exists);
      if (Date.now() >= deadline) {
        return {
          ok: false,
          outcome: pending('backlog', `moved ${total()} from ${queue} to ${to}; ${proof.reason}`),
        };
      }
    }
  }

  /** Moves running right now (an input to the no-publisher proof). */
  get activeMoves(): number {
    return this.running;
  }

  /** Deletes a shadow that no publisher can reach and that is idle: refused at once when live
   * AMQP shows messages or consumers, else proven against fresh statistics (shadows.ts). */
  async remove(
    noPublisher: NoPublisher,
    shadow: string,
    type: SourceType,
    routeId: string | undefined,
    beforeDelete?: (shadow: string) => Promise<void> | void,
  ): Promise<Step<{ deleted: string[]; retained: RetainedResource[] }>> {
    const link = noPublisher.link;
    const live = await readCounts(link, this.management, shadow);
    if (!live.exists) return { ok: true, value: { deleted: [shadow], retained: [] } };
    if (live.ready > 0 || live.consumers > 0) {
      return { ok: false, outcome: pending('backlog', `${describeCounts(shadow, live)}; it is kept`) };
    }
    const gap = this.timing.quiesceMs;
    const result = await removeShadow(
      noPublisher,
      this.management,
      { name: shadow, type, routeId },
      {
        deadline: Date.now() + 2 * this.timing.statisticsLagMs + gap,
        pollIntervalMs: this.timing.pollIntervalMs,
        sampleGapMs: gap,
        statisticsLagMs: this.timing.statisticsLagMs,
        ...(beforeDelete ? { beforeDelete } : {}),
      },
    );
    if (result.kind === 'refused') {
      this.logger.info('shadow.kept', { shadow, type });
      return { ok: false, outcome: pending('backlog', result.problem) };
    }
    this.logger.info('shadow.deleted', { shadow, type, noPublisherSince: noPublisher.provenAt });
    return { ok: true, value: { deleted: [shadow], retained: [] } };
  }

  /** The step that emptied `queue` is done: its move count starts again next time. */
  forgetMoves(queue: string): void {
    for (const key of this.movedSoFar.keys())
      if (key.startsWith(`${queue}\u0000`)) this.movedSoFar.delete(key);
  }

  private finish(key: string, exists: boolean): Step<Emptied> {
    return { ok: true, value: { moved: this.movedSoFar.get(key) ?? 0, exists } };
  }
}
