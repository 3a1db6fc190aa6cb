// The broker work on the shadow topics that the steps share: creating a shadow with its group's
// start pinned, growing every shadow with the source, the proofs before the handback and the
// cleanup, and the deletes. It knows how many partitions the shadows have; nothing here decides
// phases.
import type { Admin } from 'kafkajs';
import type { CleanupReadyResult, ShadowLag } from '../engine/contract';
import { sumLag } from '../engine/lag';
import { describeError, type Logger } from '../log';
import { pending, rejected } from '../engine/outcome';
import type { Blocked, EngineView, Step } from '../engine/port';
import { offsetGaps } from './backlog';
import type { KafkaRoute, RemovedRoute } from './checkpoint';
import type { KafkaEngineConfig, KafkaTiming } from './config';
import { committedOffsets, deleteGroups } from './groups';
import { zeros, type GroupPins } from './groupPins';
import { errorName } from './kafkaErrors';
import type { KafkaLink } from './link';
import { prove, type ProofRequest } from './proofs';
import { deleteTopic, ensureShadow, growShadow, shadowShapeOf } from './shadows';

export class ShadowWork {
  /** Source partitions the split accepted; every shadow has as many. */
  partitions = 0;

  constructor(
    private readonly link: KafkaLink,
    private readonly config: KafkaEngineConfig,
    private readonly timing: KafkaTiming,
    private readonly log: Logger,
    private readonly pins: GroupPins,
    private readonly view: EngineView<RemovedRoute>,
  ) {}

  /** A shadow with the source's shape, its consumer group starting at the beginning whatever
   * its reset policy. `path` names the shadow in a refusal. */
  async create(topic: string, group: string, partitions: number, path: string): Promise<Blocked> {
    const shape = await shadowShapeOf(this.link.admin, this.config.sourceTopic);
    const shadow = await ensureShadow(this.link.admin, topic, partitions, shape);
    if (!shadow.ok) {
      // Refuse cleanly: a shadow this call created is ours and empty, so it goes again.
      if (shadow.created)
        await deleteTopic(this.link.admin, topic, this.timing.stepTimeoutMs).catch(() => false);
      return rejected([
        {
          path,
          problem: shadow.problem,
          fix: "allow retention.ms=-1, retention.bytes=-1, cleanup.policy=delete, message.timestamp.type=CreateTime and the source's replication factor, min.insync.replicas and max.message.bytes on queue-split topics, or record a fresh shadow name",
        },
      ]);
    }
    const notPinned = await this.pins.startAt(group, topic, zeros(partitions));
    return notPinned ? pending('consumers-attached', notPinned, 2_000) : undefined;
  }

  /** Partition growth of the source: every shadow grows first (docs/design.md §7). A problem
   * keeps the new source partitions unread. */
  async grow(partitions: number): Promise<string | undefined> {
    const added = zeros(partitions, this.partitions);
    const shadows: { topic: string; group: string }[] = [
      { topic: this.config.appShadow, group: this.config.appShadowGroup },
      ...this.routes().map((r) => ({ topic: r.shadow, group: r.sessionGroup })),
    ];
    for (const { topic, group } of shadows) {
      try {
        await growShadow(this.link.admin, topic, partitions);
        const notPinned = await this.pins.startAt(group, topic, added);
        if (notPinned) return notPinned;
      } catch (err) {
        return `shadow ${topic} cannot grow to ${partitions} partitions: ${errorName(err) ?? describeError(err)}`;
      }
    }
    this.partitions = partitions;
    return undefined;
  }

  /** Active and removed routes: every session shadow this engine still answers for. */
  routes(): RemovedRoute[] {
    return [...(this.view.table.routes as readonly KafkaRoute[]), ...this.view.removed.values()];
  }

  async proveAppDrained(): Promise<Blocked> {
    const proof = await prove(
      this.link,
      {
        topic: this.config.appShadow,
        groups: [this.config.appShadowGroup],
        backlogGroup: this.config.appShadowGroup,
        action: 'scale the workload to zero',
      },
      this.timing,
    );
    if (proof.ok) return undefined;
    return pending(proof.code, `the application has not drained its shadow: ${proof.reason}`);
  }

  async verifyCleanupReady(): Promise<Step<CleanupReadyResult>> {
    const names: string[] = [];
    for (const request of this.cleanupProofs()) {
      const proof = await prove(this.link, request, this.timing);
      if (!proof.ok)
        return { ok: false, outcome: pending(proof.code, `not ready for cleanup: ${proof.reason}`) };
      if (proof.exists) names.push(request.topic);
    }
    return { ok: true, value: { shadows: names } };
  }

  /** Deletes every shadow proven unused, then the split's groups. */
  async cleanup(): Promise<Step<{ deleted: string[] }>> {
    const deleted: string[] = [];
    for (const request of this.cleanupProofs()) {
      const proof = await prove(this.link, request, this.timing);
      if (!proof.ok)
        return { ok: false, outcome: pending(proof.code, `${request.topic} is kept: ${proof.reason}`) };
      if (!proof.exists) continue;
      if (!(await deleteTopic(this.link.admin, request.topic, this.timing.stepTimeoutMs))) {
        return {
          ok: false,
          outcome: pending(
            'broker-unavailable',
            `the broker still lists ${request.topic} after its deletion`,
          ),
        };
      }
      deleted.push(request.topic);
      this.log.info('shadow.deleted', { shadow: request.topic });
    }
    const groups = [
      this.config.appShadowGroup,
      this.config.splitterGroup,
      ...this.routes().flatMap((r) => [r.sessionGroup, r.drainGroup]),
    ];
    const leaked = await deleteGroups(this.link.admin, groups);
    // The split is over either way; a group left behind is reported, never a reason to undo.
    for (const group of leaked) this.log.warn('cleanup.leak', { group });
    return { ok: true, value: { deleted }, log: { deleted: deleted.length, leaked: leaked.length } };
  }

  /** End minus committed offsets per shadow and its consumer group: an upper bound, since
   * transaction markers take offsets too (proofs count records instead; see backlog.ts). */
  lag(): Promise<ShadowLag> {
    const routes = this.view.table.routes as readonly KafkaRoute[];
    const groups = new Map<string, string>([
      [this.config.appShadow, this.config.appShadowGroup],
      ...routes.map((r): [string, string] => [r.shadow, r.sessionGroup]),
    ]);
    return sumLag(
      (topic) => uncommitted(this.link.admin, topic, groups.get(topic)!),
      this.config.appShadow,
      routes.map((r) => ({ routeId: r.routeId, shadow: r.shadow })),
    );
  }

  /** What must hold before each remaining shadow goes. After a rollback the application group
   * still covers every copied record on the source, so only membership matters then. */
  private cleanupProofs(): ProofRequest[] {
    const aborted = this.view.phase === 'aborted';
    return [
      ...this.routes().map((r) => ({
        topic: r.shadow,
        groups: [r.sessionGroup, r.drainGroup],
        ...(aborted ? {} : { backlogGroup: r.sessionGroup }),
        action: 'stop the session consumer',
      })),
      {
        topic: this.config.appShadow,
        groups: [this.config.appShadowGroup],
        ...(aborted ? {} : { backlogGroup: this.config.appShadowGroup }),
        action: 'scale the workload to zero',
      },
    ];
  }
}

/** A topic's end offsets minus a group's committed offsets, summed over its partitions. */
export async function uncommitted(admin: Admin, topic: string, group: string): Promise<number> {
  const [ends, committed] = await Promise.all([
    admin.fetchTopicOffsets(topic),
    committedOffsets(admin, group, topic),
  ]);
  let gap = 0n;
  for (const { from, end } of offsetGaps(ends, committed).values()) gap += BigInt(end) - BigInt(from);
  return Number(gap);
}
