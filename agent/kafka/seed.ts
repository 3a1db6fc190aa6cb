// Where the pump starts (docs/design.md §6 STARTING_PUMP): exactly where the application group stands,
// per partition (uneven offsets such as 6/3/8 resume exactly), and `offsetReset` where a
// partition has no commit. Such partitions are also pinned in the application group itself, at
// the position the reset gives now: a rollback then finds the group at its pre-activation
// position everywhere, and a "latest" reset can never skip what the split copied meanwhile.
import type { Admin } from 'kafkajs';
import { committedOffsets } from './groups';

export interface SeedPlan {
  /** Start of every partition. */
  readonly seed: Map<number, string>;
  /** The subset the application group has no commit for (to pin there). */
  readonly pin: Map<number, string>;
}

export function planSeed(
  partitions: number,
  committed: ReadonlyMap<number, string>,
  watermarks: readonly { partition: number; high: string; low: string }[],
  offsetReset: 'earliest' | 'latest',
): SeedPlan {
  const seed = new Map<number, string>();
  const pin = new Map<number, string>();
  for (let p = 0; p < partitions; p++) {
    const c = committed.get(p);
    if (c !== undefined) {
      seed.set(p, c);
      continue;
    }
    const w = watermarks.find((x) => x.partition === p);
    const at = (offsetReset === 'earliest' ? w?.low : w?.high) ?? '0';
    seed.set(p, at);
    pin.set(p, at);
  }
  return { seed, pin };
}

export async function readSeedPlan(
  admin: Admin,
  appGroup: string,
  topic: string,
  partitions: number,
  offsetReset: 'earliest' | 'latest',
): Promise<SeedPlan> {
  const [committed, watermarks] = await Promise.all([
    committedOffsets(admin, appGroup, topic),
    admin.fetchTopicOffsets(topic),
  ]);
  return planSeed(partitions, committed, watermarks, offsetReset);
}
