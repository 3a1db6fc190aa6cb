// Turns what the engine knows about itself into status conditions: each says what is wrong,
// since when, and the safe thing to do about it.
import type { EngineCondition } from '../engine/contract';
import type { ForeignConsumers } from './foreignConsumers';
import type { RelayProblem } from './relay';

export interface ConditionFacts {
  readonly sourceQueue: string;
  /** Why the lock was refused, and since when. */
  readonly fenced: { readonly reason: string; readonly since: string } | undefined;
  readonly downSince: string | undefined;
  readonly foreign: ForeignConsumers | undefined;
  readonly sourceLostSince: string | undefined;
  readonly publishProblems: readonly RelayProblem[];
}

export function conditions(f: ConditionFacts): EngineCondition[] {
  const out: EngineCondition[] = [];
  if (f.fenced) {
    out.push({
      code: 'fenced',
      reason: f.fenced.reason,
      safeAction: 'make sure only one queue-agent serves this queue; this engine publishes nothing meanwhile',
      since: f.fenced.since,
    });
  } else if (f.downSince) {
    out.push({
      code: 'broker-unavailable',
      reason: 'the AMQP connection is down; reconnecting with backoff (source deliveries were requeued)',
      safeAction: 'check the broker and the network; nothing is lost meanwhile',
      since: f.downSince,
    });
  }
  if (f.foreign) {
    out.push({
      code: 'foreign-consumer',
      reason: `the quorum source has consumers the engine does not own (tags ${f.foreign.tags.join(', ')}); they take messages past the split`,
      safeAction: 'stop the other consumer of the source (quorum queues do not enforce exclusive consumers)',
      since: f.foreign.since,
    });
  }
  if (f.sourceLostSince) {
    out.push({
      code: 'source-lost',
      reason: `the broker cancelled the source consumer (was ${f.sourceQueue} deleted?)`,
      safeAction: 'restore the source queue, then stop and start the split',
      since: f.sourceLostSince,
    });
  }
  for (const p of f.publishProblems) {
    out.push(
      p.outcome === 'returned'
        ? {
            code: 'destination-missing',
            reason: `publishes to ${p.destination} come back unroutable (the queue is gone); their source messages stay unacked and are retried`,
            safeAction: 'recreate the shadow or remove its route; never delete shadows by hand',
            since: p.since,
          }
        : {
            code: 'publish-failing',
            reason: `publishes to ${p.destination} are ${p.outcome}; their source messages stay unacked and are retried`,
            safeAction: 'check the broker log for channel errors',
            since: p.since,
          },
    );
  }
  return out;
}
