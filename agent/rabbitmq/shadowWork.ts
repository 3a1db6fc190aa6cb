// The broker work on shadow queues that drains, rollback, handoff and cleanup share: proving
// a queue idle (quiesce-and-recheck), emptying it into another queue, and removing it
// loss-proof. Answers are "ok" or the `pending` outcome to return; nothing here decides phases.
import type { Outcome, RetainedResource } from '../engine/contract';
import type { Logger } from '../engine/log';
import { pending } from '../engine/outcome';
import type { RabbitTiming } from './config';
import type { ManagementClient } from './management';
import { moveAll } from './mover';
import type { SourceType } from './preflight';
import { idle, noConsumers, prove, readCounts, type Expectation, type Proof } from './probe';
import type { Link } from './session';
import { removeShadow } from './shadows';

export type Step<T> = { ok: true; value: T } | { ok: false; outcome: Outcome<never> };

export interface Emptied {
  /** Messages moved out of the queue by this emptying, across the calls it took. */
  readonly moved: number;
  readonly exists: boolean;
}

export class ShadowWork {
  /** Moves done by emptyings that have not completed yet, so a retried step reports its
   * whole work (in memory only: after a restart the count starts again). */
  private readonly movedSoFar = new Map<string, number>();
  private moves = 0;

  constructor(
    private readonly management: ManagementClient,
    private readonly timing: RabbitTiming,
    private readonly engineUser: string,
    private readonly prefetch: number,
    private readonly logger: Logger,
  ) {}

  prove(link: Link, queue: string, expect: Expectation): Promise<Proof> {
    return prove(() => readCounts(link, this.management, queue), queue, expect, {
      deadline: Date.now() + this.timing.stepTimeoutMs,
      pollIntervalMs: this.timing.pollIntervalMs,
      quiesceMs: this.timing.quiesceMs,
    });
  }

  /** Waits until `queue` has no consumers, moves everything in it to `to`, and proves it idle
   * (a delivery requeued by a consumer that left late is moved on the next round). */
  async empty(link: Link, queue: string, to: string, whoMustLeave: string): Promise<Step<Emptied>> {
    // No quiesce here: a consumer that comes back during the move is caught by the final
    // idle proof, which includes consumers.
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
      const move = await moveAll(link, queue, to, {
        engineUser: this.engineUser,
        prefetch: this.prefetch,
        deadline,
        consumerTag: `queue-split-move-${++this.moves}`,
        logger: this.logger,
      });
      this.movedSoFar.set(key, total() + move.moved);
      if (!move.complete) {
        const why = `moved ${total()} from ${queue} to ${to}; ${move.reason ?? 'not finished'}`;
        return { ok: false, outcome: pending('backlog', why) };
      }
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

  /** Deletes (classic, conditional) or retains (quorum) a shadow. Call after proving it idle;
   * `exists` is what that proof saw. */
  async remove(
    link: Link,
    shadow: string,
    type: SourceType,
    routeId: string | undefined,
    exists: boolean,
  ): Promise<Step<{ deleted: string[]; retained: RetainedResource[] }>> {
    if (!exists) return { ok: true, value: { deleted: [shadow], retained: [] } };
    const result = await removeShadow(link, shadow, type, routeId);
    if (result.kind === 'refused') return { ok: false, outcome: pending('backlog', result.problem) };
    if (result.kind === 'retained') {
      this.logger.info('shadow.retained', { shadow });
      return { ok: true, value: { deleted: [], retained: [result.retained] } };
    }
    this.logger.info('shadow.deleted', { shadow });
    return { ok: true, value: { deleted: [shadow], retained: [] } };
  }

  private finish(key: string, exists: boolean): Step<Emptied> {
    const moved = this.movedSoFar.get(key) ?? 0;
    this.movedSoFar.delete(key);
    return { ok: true, value: { moved, exists } };
  }
}
