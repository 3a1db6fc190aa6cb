// What the engine reports as unhealthy, from its fence and the pump's problems: each with the
// reason a person reads and the action that is safe to take.
import type { EngineCondition } from '../engine/contract';
import type { PumpProblem } from './pump';

export function engineConditions(
  fenced: string | undefined,
  fencedSince: string | undefined,
  problems: readonly PumpProblem[],
): EngineCondition[] {
  if (fenced && fencedSince) {
    return [
      {
        code: 'fenced',
        reason: fenced,
        safeAction: 'make sure only one queue-agent serves this queue; this engine has closed its clients',
        since: fencedSince,
      },
    ];
  }
  return problems.map((p): EngineCondition => {
    switch (p.kind) {
      case 'destination-missing':
        return {
          code: 'destination-missing',
          reason: `copies to ${p.subject} fail: ${p.reason}; its records wait (the source offset is not committed past them)`,
          safeAction: 'recreate the shadow or remove its route; never delete shadows by hand',
          since: p.since,
        };
      case 'partition-growth':
        return {
          code: 'destination-missing',
          reason: `${p.reason}; records in the new source partitions wait on the source`,
          safeAction: 'let the shadows grow (topic policy, quota) or abort the split',
          since: p.since,
        };
      case 'source-lost':
        return {
          code: 'source-lost',
          reason: p.reason,
          safeAction: 'restore the source topic, then stop and start the split',
          since: p.since,
        };
      case 'record-refused':
        return {
          code: 'publish-failing',
          reason: `the record at ${p.subject} cannot be copied: ${p.reason}; the rest of its partition waits behind it (its source offset is not committed past it), other partitions go on`,
          safeAction:
            'fix the shadow so it accepts the record (for example its max.message.bytes) and it is copied on the next retry, or stop the split: the application then reads the record from the source itself',
          since: p.since,
        };
      case 'publish-failing':
        return {
          code: 'publish-failing',
          reason: `${p.reason}; the records are retried and their offsets not committed`,
          safeAction: 'check the broker and the network; nothing is lost meanwhile',
          since: p.since,
        };
    }
  });
}
