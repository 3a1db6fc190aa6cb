// Broker proofs the lifecycle steps wait for: a group has no members, and (where asked) no
// committed data record after its position. Read live, re-read after a quiet window, and
// polled with a deadline; a missing proof is a reason, never a `done`.
import type { KafkaTiming } from './config';
import { describeBacklog, isEmptyBacklog, measureBacklog } from './backlog';
import { describeGroup, describeMembers } from './groups';
import type { KafkaLink } from './link';
import { partitionCount } from './shadows';
import { sleep } from '../engine/timing';

export type Proof =
  | { readonly ok: true; readonly exists: boolean }
  | { readonly ok: false; readonly code: 'backlog' | 'consumers-attached'; readonly reason: string };

export interface ProofRequest {
  readonly topic: string;
  /** Every group that reads the topic; all must be empty. */
  readonly groups: readonly string[];
  /** The group whose backlog must be zero; none when only membership matters. */
  readonly backlogGroup?: string;
  /** Who has to leave, for the reason text (e.g. "scale the workload to zero"). */
  readonly action: string;
}

type Reading = { exists: false } | { exists: true; members: string; empty: boolean; backlog: string };

export async function prove(link: KafkaLink, request: ProofRequest, timing: KafkaTiming): Promise<Proof> {
  const started = Date.now();
  const deadline = started + timing.stepTimeoutMs;
  const wire = link.newWire('proof');
  await wire.connect();
  try {
    const read = async (): Promise<Reading> => {
      if ((await partitionCount(link.admin, request.topic)) === undefined) return { exists: false };
      const members: string[] = [];
      for (const group of request.groups) {
        const state = await describeGroup(link.admin, group);
        if (state.members.length > 0) members.push(`${group}: ${describeMembers(state.members)}`);
      }
      if (request.backlogGroup === undefined)
        return { exists: true, members: members.join('; '), empty: true, backlog: '' };
      const b = await measureBacklog(link.admin, wire, request.topic, request.backlogGroup, deadline);
      return {
        exists: true,
        members: members.join('; '),
        empty: isEmptyBacklog(b),
        backlog: describeBacklog(request.topic, request.backlogGroup, b),
      };
    };
    for (;;) {
      const first = await read();
      if (!first.exists) return { ok: true, exists: false };
      if (first.members === '' && first.empty) {
        await sleep(timing.quiesceMs); // a consumer that was just rebalancing shows up now
        const again = await read();
        if (!again.exists) return { ok: true, exists: false };
        if (again.members === '' && again.empty) return { ok: true, exists: true };
        continue;
      }
      // A backlog nobody consumes will not shrink by waiting.
      const pointless = first.members === '' && !first.empty;
      // Drained but still attached: answer soon. While the app runs (DRAINING_APP) that is the
      // step's goal, and a member that is leaving is waited for by the caller's next attempt —
      // holding the agent's loop (and every other queue's step) for the whole deadline helps
      // neither.
      const attachedOnly =
        first.members !== '' && first.empty && Date.now() - started >= 2 * timing.quiesceMs;
      if (pointless || attachedOnly || Date.now() + timing.pollIntervalMs > deadline) {
        return first.empty
          ? {
              ok: false,
              code: 'consumers-attached',
              reason: `${request.topic} still has consumers (${first.members}); ${request.action}`,
            }
          : {
              ok: false,
              code: 'backlog',
              reason: `${first.backlog}${first.members ? `; members: ${first.members}` : ''}`,
            };
      }
      await sleep(timing.pollIntervalMs);
    }
  } finally {
    await wire.disconnect();
  }
}
