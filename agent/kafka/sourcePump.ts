// The source side of the Kafka engine: the pump (pump.ts) and the positions that frame what it
// copied. The seed is where the application group stood when the split started (the rollback
// puts the application back there); the frontier is where the pump stopped (the handback
// commits it to the application group). Nothing here decides phases.
import type { EngineHooks } from '../engine/contract';
import type { Logger } from '../log';
import { pending } from '../engine/outcome';
import type { Blocked, EngineView, Step } from '../engine/port';
import { kafkaHeaders } from '../../core/providers/kafka/message';
import { MessageView } from '../../core/filter';
import type { RemovedRoute } from './checkpoint';
import {
  DEFAULT_MESSAGE_ID_HEADER,
  DEFAULT_PREFETCH,
  type KafkaEngineConfig,
  type KafkaTiming,
} from './config';
import type { KafkaFence } from './fence';
import { liveMembers, type GroupPins } from './groupPins';
import { awaitCommitted, commitGuarded, committedOffsets, describeGroup, describeMembers } from './groups';
import type { KafkaLink } from './link';
import { Pump, type PumpProblem } from './pump';
import { readSeedPlan } from './seed';
import type { ShadowWork } from './shadowWork';

export class SourcePump {
  /** Where the application group stood when the pump first started (offsetReset applied). */
  seed: Map<number, string> | null = null;
  /** Where the pump stopped: the handback position. */
  frontier: Map<number, string> | null = null;
  private readonly pump: Pump;

  constructor(
    private readonly link: KafkaLink,
    private readonly config: KafkaEngineConfig,
    private readonly timing: KafkaTiming,
    private readonly log: Logger,
    private readonly pins: GroupPins,
    private readonly shadows: ShadowWork,
    fence: KafkaFence,
    view: EngineView<RemovedRoute>,
    hooks: EngineHooks,
  ) {
    this.pump = new Pump({
      wire: link.wire,
      admin: link.admin,
      txn: link.txn,
      sourceTopic: config.sourceTopic,
      isolation: config.isolationLevel ?? 'read_committed',
      splitterGroup: config.splitterGroup,
      maxRecordsPerTxn: config.prefetch ?? DEFAULT_PREFETCH,
      readAhead: config.readAhead ?? true,
      messageIdHeader: config.messageIdHeader ?? DEFAULT_MESSAGE_ID_HEADER,
      timing,
      barrier: view.barrier,
      hooks,
      log,
      select: (headers, value) => view.select(new MessageView(kafkaHeaders(headers), value ?? undefined)),
      onPublished: (routeId) => view.countPublished(routeId),
      onFenced: (reason) => fence.fenced(reason),
      grow: (partitions) => shadows.grow(partitions),
    });
  }

  get problems(): PumpProblem[] {
    return this.pump.problems();
  }

  get parkedCount(): number {
    return this.pump.parkedCount;
  }

  /** Seeds (first start only) and starts the pump from the splitter group's offsets. */
  async start(): Promise<Blocked> {
    const admin = this.link.admin;
    const c = this.config;
    const partitions = this.shadows.partitions;
    const from = await committedOffsets(admin, c.splitterGroup, c.sourceTopic);
    const unset = Array.from({ length: partitions }, (_, p) => p).filter((p) => !from.has(p));
    if (unset.length === partitions && this.seed === null) {
      // First start: the application must be gone from the source, or it would consume past
      // the seed while the pump copies the same records.
      const app = await describeGroup(admin, c.appGroup);
      if (app.members.length > 0) return liveMembers(app.members);
      const plan = await readSeedPlan(admin, c.appGroup, c.sourceTopic, partitions, c.offsetReset);
      const refused = await this.pins.commitToApp(plan.pin);
      if (refused) return refused;
      this.seed = plan.seed;
      this.log.info('pump.seeded', { seed: describeOffsets(plan.seed), pinned: plan.pin.size });
    }
    // After a restart between seeding and the checkpoint: the app group was pinned, so its
    // commits are the seed.
    this.seed ??= await committedOffsets(admin, c.appGroup, c.sourceTopic);
    if (unset.length > 0) {
      // Only partitions the splitter never committed: the seed, or 0 for partitions the source
      // gained during the split (every record in them is newer than the activation).
      const fill = new Map(unset.map((p) => [p, this.seed?.get(p) ?? '0'] as const));
      const seeded = await commitGuarded(this.link.wire, admin, c.splitterGroup, c.sourceTopic, fill);
      if (!seeded.ok) {
        return pending(
          'consumers-attached',
          `the splitter group has members (${describeMembers(seeded.members)})`,
        );
      }
      for (const [p, o] of fill) from.set(p, o);
    }
    this.pump.start(from, partitions);
    return undefined;
  }

  /** Stops the pump and records the frontier once the splitter group shows it. */
  async stop(fence: KafkaFence): Promise<Blocked> {
    const stopped = await this.pump.stop();
    const lost = fence.lost();
    if (lost) return lost;
    if (!stopped) return pending('in-flight', 'the final splitter offset commit failed; retry stop');
    const frontier = this.pump.frontier();
    const visible = await awaitCommitted(
      this.link.admin,
      this.config.splitterGroup,
      this.config.sourceTopic,
      frontier,
      this.timing.stepTimeoutMs,
    );
    if (!visible) return pending('in-flight', 'the splitter offsets are not visible in the group yet');
    this.frontier = await this.withGrownPartitions(frontier);
    return undefined;
  }

  /** Stops copying without a frontier (the engine closes): what was copied but not committed
   * is copied again by the successor, a duplicate at worst. */
  async halt(): Promise<void> {
    await this.pump.stop();
  }

  /** The rollback: the application group never moved (its unset partitions were pinned at
   * start), so it re-reads from the source everything the split copied. Partitions added during
   * the split are pinned at their start, or a "latest" reset would skip them. Answers how many
   * records the application reads again. */
  async rollback(): Promise<Step<number>> {
    if (!this.seed) return { ok: true, value: 0 };
    const c = this.config;
    const splitter = await committedOffsets(this.link.admin, c.splitterGroup, c.sourceTopic);
    const app = await committedOffsets(this.link.admin, c.appGroup, c.sourceTopic);
    // Partitions grown since the pump's last check count too, from their log start.
    const lows = new Map(
      (await this.link.admin.fetchTopicOffsets(c.sourceTopic)).map((o) => [o.partition, o.low]),
    );
    const pin = new Map<number, string>();
    let restored = 0;
    for (let p = 0; p < Math.max(this.shadows.partitions, lows.size); p++) {
      const from = this.seed.get(p) ?? app.get(p) ?? lows.get(p) ?? '0';
      if (!app.has(p)) pin.set(p, from);
      restored += Math.max(0, Number(BigInt(splitter.get(p) ?? from) - BigInt(from)));
    }
    const refused = await this.pins.commitToApp(pin);
    return refused ? { ok: false, outcome: refused } : { ok: true, value: restored };
  }

  /** The handback: the frontier (never stored again: the handoff data the controller passes
   * back must stay what stop returned) committed to the application group, and visible there. */
  async handBack(): Promise<Blocked> {
    if (!this.frontier) return undefined;
    const frontier = await this.withGrownPartitions(this.frontier);
    const refused = await this.pins.commitToApp(frontier);
    if (refused) return refused;
    const visible = await awaitCommitted(
      this.link.admin,
      this.config.appGroup,
      this.config.sourceTopic,
      frontier,
      this.timing.stepTimeoutMs,
    );
    if (!visible)
      return pending('in-flight', `the handback commit to ${this.config.appGroup} is not visible yet`);
    return undefined;
  }

  /** Source partitions the pump never read (grown since its last partition check) go back at
   * their log start: nothing of them was copied, and without a commit an application that
   * resets to `latest` would skip them. Read at stop and again at handoff. */
  private async withGrownPartitions(frontier: ReadonlyMap<number, string>): Promise<Map<number, string>> {
    const out = new Map(frontier);
    const offsets = await this.link.admin.fetchTopicOffsets(this.config.sourceTopic);
    for (const o of offsets) {
      if (out.has(o.partition)) continue;
      out.set(o.partition, o.low);
      this.log.info('engine.grown-partition-handed-back', { partition: o.partition });
    }
    return out;
  }
}

export function describeOffsets(offsets: ReadonlyMap<number, string>): string {
  return [...offsets].map(([p, o]) => `${p}:${o}`).join(' ');
}
