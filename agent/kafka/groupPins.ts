// Offsets the engine commits to groups it does not consume with: the application group (its
// seed pins, the rollback and the handback) and the start of every shadow's group. A group
// with live members refuses a commit from outside (UNKNOWN_MEMBER_ID), which is the guard the
// handback rests on (docs/design.md §7).
import type { Outcome } from '../engine/contract';
import type { Logger } from '../log';
import { pending } from '../engine/outcome';
import type { Blocked } from '../engine/port';
import type { KafkaEngineConfig } from './config';
import { commitGuarded, committedOffsets, describeMembers } from './groups';
import type { KafkaLink } from './link';

export class GroupPins {
  constructor(
    private readonly link: KafkaLink,
    private readonly config: KafkaEngineConfig,
    private readonly log: Logger,
  ) {}

  /** Commits to the application group from outside; live members refuse it. */
  async commitToApp(offsets: ReadonlyMap<number, string>): Promise<Blocked> {
    if (offsets.size === 0) return undefined;
    const result = await commitGuarded(
      this.link.wire,
      this.link.admin,
      this.config.appGroup,
      this.config.sourceTopic,
      offsets,
    );
    return result.ok ? undefined : liveMembers(result.members);
  }

  /** Pins a group's start where it has no commit yet. A group with live members (the app
   * reading its shadow when the source grows) refuses an outside commit, so the pin then goes
   * in a transaction of the engine's producer, which the broker accepts (DECISIONS.md,
   * "Pinning shadow partitions"). Returns the problem when neither worked. */
  async startAt(
    group: string,
    topic: string,
    offsets: ReadonlyMap<number, string>,
  ): Promise<string | undefined> {
    const existing = await committedOffsets(this.link.admin, group, topic);
    const missing = new Map([...offsets].filter(([p]) => !existing.has(p)));
    if (missing.size === 0) return undefined;
    const result = await commitGuarded(this.link.wire, this.link.admin, group, topic, missing);
    if (result.ok) return undefined;
    const partitions = [...missing].map(([partition, offset]) => ({ partition, offset }));
    const pinned = await this.link.txn.run(
      (txn) => txn.sendOffsets({ consumerGroupId: group, topics: [{ topic, partitions }] }),
      'start pin',
    );
    if (pinned.ok) {
      this.log.info('group.start-pinned-in-transaction', { group, members: result.members.length });
      return undefined;
    }
    this.log.warn('group.start-not-pinned', { group, members: result.members.length });
    return `the start of group ${group} on ${topic} partitions ${[...missing.keys()].join(',')} cannot be pinned while it has ${result.members.length} live member(s) (${pinned.reason}): a member resetting to latest would skip what is copied there`;
  }
}

/** Offsets 0 for every partition: where a new shadow's group starts. */
export function zeros(partitions: number, from = 0): Map<number, string> {
  const out = new Map<number, string>();
  for (let p = from; p < partitions; p++) out.set(p, '0');
  return out;
}

export function liveMembers(members: readonly { clientId: string; host: string }[]): Outcome<never> {
  return pending(
    'consumers-attached',
    `the application group still has live members: ${describeMembers(members) || 'unknown (the broker refused the commit)'}; scale the workload to zero first`,
    2_000,
  );
}
