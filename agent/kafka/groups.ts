// Consumer-group reads and writes: who is a member, what is committed, and commits made from
// outside the group, which the broker refuses while the group has live members.
import { AssignerProtocol, type Admin } from 'kafkajs';
import { pollUntil } from '../engine/timing';
import { isGroupMissing, isLiveGroupRefusal } from './kafkaErrors';
import type { Offsets, Wire } from './wire';

export interface GroupMember {
  readonly clientId: string;
  readonly host: string;
}

export interface GroupState {
  readonly state: string;
  readonly members: readonly GroupMember[];
}

export async function describeGroup(admin: Admin, groupId: string): Promise<GroupState> {
  const { groups } = await admin.describeGroups([groupId]);
  const group = groups[0];
  return {
    state: group?.state ?? 'Dead',
    members: (group?.members ?? []).map((m) => ({
      clientId: m.clientId,
      host: m.clientHost.replace(/^\//, ''),
    })),
  };
}

/** Members of `groupId` with a share of `topic` assigned (the consumer protocol's assignment,
 * which every client writes the same way); a member whose assignment does not decode is not
 * counted. */
export async function assignedMembers(admin: Admin, groupId: string, topic: string): Promise<number> {
  const { groups } = await admin.describeGroups([groupId]);
  let count = 0;
  for (const m of groups[0]?.members ?? []) {
    try {
      const decoded = AssignerProtocol.MemberAssignment.decode(m.memberAssignment);
      if ((decoded?.assignment[topic]?.length ?? 0) > 0) count++;
    } catch {
      // Not the consumer protocol (another kind of group member): not a consumer of the topic.
    }
  }
  return count;
}

/** Client ids and hosts only: enough for a person to find the replica, nothing secret. */
export function describeMembers(members: readonly GroupMember[]): string {
  const shown = members.slice(0, 5).map((m) => `${m.clientId}@${m.host}`);
  return members.length > 5 ? `${shown.join(', ')} and ${members.length - 5} more` : shown.join(', ');
}

/** Committed offsets of `groupId` on `topic`; a partition without one is absent. */
export async function committedOffsets(
  admin: Admin,
  groupId: string,
  topic: string,
): Promise<Map<number, string>> {
  const fetched = await admin.fetchOffsets({ groupId, topics: [topic] });
  const out = new Map<number, string>();
  for (const p of fetched[0]?.partitions ?? []) if (BigInt(p.offset) >= 0n) out.set(p.partition, p.offset);
  return out;
}

export type GuardedCommit = { ok: true } | { ok: false; members: readonly GroupMember[] };

/** Commits as an outsider. A live member makes the broker refuse (UNKNOWN_MEMBER_ID); that
 * refusal comes back with the members, never as an exception. */
export async function commitGuarded(
  wire: Wire,
  admin: Admin,
  groupId: string,
  topic: string,
  offsets: Offsets,
): Promise<GuardedCommit> {
  try {
    await wire.commitAsOutsider(groupId, topic, offsets);
    return { ok: true };
  } catch (err) {
    if (!isLiveGroupRefusal(err)) throw err;
    return { ok: false, members: (await describeGroup(admin, groupId)).members };
  }
}

/** Offset commits become visible to readers once the broker has written them (transactional
 * ones after their commit marker): read until every partition shows what was committed. */
export async function awaitCommitted(
  admin: Admin,
  groupId: string,
  topic: string,
  expected: Offsets,
  timeoutMs: number,
): Promise<boolean> {
  const seen = await pollUntil(
    Date.now() + timeoutMs,
    100,
    () => committedOffsets(admin, groupId, topic),
    (got) => [...expected].every(([p, o]) => got.get(p) === o),
  );
  return seen.ok;
}

/** Deletes groups; a group that is already gone counts as deleted. Returns what failed. */
export async function deleteGroups(admin: Admin, groupIds: readonly string[]): Promise<string[]> {
  const failed: string[] = [];
  for (const groupId of groupIds) {
    try {
      await admin.deleteGroups([groupId]);
    } catch (err) {
      if (
        !isGroupMissing(err) &&
        !String((err as { message?: unknown }).message).includes('does not exist')
      ) {
        failed.push(groupId);
      }
    }
  }
  return failed;
}
