// A removed route's drain (docs/design.md §6 detach): after the publish barrier, once the session
// group is empty, move the unconsumed suffix of the session shadow to the application shadow,
// then prove it (drain group committed == the ends, ends unchanged, still nobody attached)
// and only then delete the session topic and its groups.
import type { Outcome } from '../engine/contract';
import type { Logger } from '../log';
import { pending } from '../engine/outcome';
import { pollUntil } from '../engine/timing';
import type { RemovedRoute } from './checkpoint';
import { DEFAULT_PREFETCH, type KafkaEngineConfig, type KafkaTiming } from './config';
import { drainSuffix } from './drain';
import {
  awaitCommitted,
  commitGuarded,
  committedOffsets,
  deleteGroups,
  describeGroup,
  describeMembers,
} from './groups';
import type { KafkaLink } from './link';
import { deleteTopic, partitionCount } from './shadows';

export type RouteDrainOutcome =
  | { readonly kind: 'done'; readonly moved: number; readonly deleted: readonly string[] }
  | { readonly kind: 'fenced' }
  | { readonly kind: 'pending'; readonly outcome: Outcome<never> };

const waiting = (outcome: Outcome<never>): RouteDrainOutcome => ({ kind: 'pending', outcome });

export class RouteDrainer {
  constructor(
    private readonly link: KafkaLink,
    private readonly config: KafkaEngineConfig,
    private readonly timing: KafkaTiming,
    private readonly log: Logger,
  ) {}

  async drain(route: RemovedRoute, partitions: number): Promise<RouteDrainOutcome> {
    const deadline = Date.now() + this.timing.stepTimeoutMs;
    const admin = this.link.admin;
    const gone = await this.sessionGone(route, deadline);
    if (gone) return waiting(gone);
    if ((await partitionCount(admin, route.shadow)) === undefined) {
      await this.deleteGroups(route);
      return { kind: 'done', moved: 0, deleted: [] };
    }
    const wire = this.link.newWire('drain');
    await wire.connect();
    let moved = 0;
    try {
      for (;;) {
        const ends = await this.ends(route.shadow);
        const from = await this.drainPosition(route, ends, partitions);
        if (!from)
          return waiting(pending('consumers-attached', `the drain group ${route.drainGroup} has members`));
        const result = await drainSuffix(
          wire,
          this.link.txn,
          {
            sessionTopic: route.shadow,
            appShadow: this.config.appShadow,
            drainGroup: route.drainGroup,
            from,
            to: ends,
          },
          this.config.prefetch ?? DEFAULT_PREFETCH,
          deadline,
          this.log,
        );
        moved += result.moved;
        if (!result.complete) {
          if (result.fenced) return { kind: 'fenced' };
          return waiting(pending('backlog', `moved ${moved} from ${route.shadow}; ${result.reason}`));
        }
        const reached = new Map(
          [...ends].map(([p, end]) => [
            p,
            BigInt(from.get(p) ?? '0') > BigInt(end) ? (from.get(p) ?? end) : end,
          ]),
        );
        if (
          !(await awaitCommitted(
            admin,
            route.drainGroup,
            route.shadow,
            reached,
            Math.max(0, deadline - Date.now()),
          ))
        ) {
          return waiting(
            pending('in-flight', `the drain group's commits on ${route.shadow} are not visible yet`),
          );
        }
        const again = await this.ends(route.shadow);
        const still = await this.sessionGone(route, Date.now());
        if (still) return waiting(still);
        if ([...again].every(([p, o]) => ends.get(p) === o)) break;
        // Someone wrote into the session shadow after the barrier: move that too.
        if (Date.now() > deadline) return waiting(pending('backlog', `${route.shadow} keeps growing`));
      }
    } finally {
      await wire.disconnect();
    }
    if (!(await deleteTopic(admin, route.shadow, this.timing.stepTimeoutMs))) {
      return waiting(
        pending('broker-unavailable', `the broker still lists ${route.shadow} after its deletion`),
      );
    }
    this.log.info('shadow.deleted', { shadow: route.shadow, routeId: route.routeId });
    await this.deleteGroups(route);
    return { kind: 'done', moved, deleted: [route.shadow] };
  }

  /** Pending unless the session group has no members (polled until the deadline). */
  private async sessionGone(route: RemovedRoute, deadline: number): Promise<Outcome<never> | undefined> {
    const empty = await pollUntil(
      deadline,
      this.timing.pollIntervalMs,
      () => describeGroup(this.link.admin, route.sessionGroup),
      (g) => g.members.length === 0,
    );
    if (empty.ok) return undefined;
    const who = empty.last ? describeMembers(empty.last.members) : 'unknown';
    return pending(
      'consumers-attached',
      `waiting for the session consumer of route ${route.routeId} to leave group ${route.sessionGroup} (${who})`,
    );
  }

  private async ends(topic: string): Promise<Map<number, string>> {
    const offsets = await this.link.admin.fetchTopicOffsets(topic);
    return new Map(offsets.map((o) => [o.partition, o.high]));
  }

  /** The drain group's position; the first time, seeded from what the session consumed. */
  private async drainPosition(
    route: RemovedRoute,
    ends: ReadonlyMap<number, string>,
    partitions: number,
  ): Promise<Map<number, string> | undefined> {
    const admin = this.link.admin;
    const at = await committedOffsets(admin, route.drainGroup, route.shadow);
    if (at.size >= Math.min(partitions, ends.size)) return at;
    const session = await committedOffsets(admin, route.sessionGroup, route.shadow);
    const lows = await admin.fetchTopicOffsets(route.shadow);
    const seed = new Map<number, string>();
    for (const { partition, low } of lows) {
      if (!at.has(partition)) seed.set(partition, session.get(partition) ?? low);
    }
    const seeded = await commitGuarded(this.link.wire, admin, route.drainGroup, route.shadow, seed);
    if (!seeded.ok) return undefined;
    return new Map([...at, ...seed]);
  }

  private async deleteGroups(route: RemovedRoute): Promise<void> {
    const leaked = await deleteGroups(this.link.admin, [route.sessionGroup, route.drainGroup]);
    for (const group of leaked) this.log.warn('cleanup.leak', { group, routeId: route.routeId });
  }
}
