// docs/design.md §5.4 as a value: "a shadow is deleted only after the engine has stopped every
// publisher to it and holds the fence". Removing a shadow takes a `NoPublisher`, and only
// `proveNoPublisher` makes one, from facts the engine reads at that moment:
// - the fence: `link` is alive, and a Link exists only while its connection holds the
//   exclusive lock queue (session.ts), so no other engine publishes; the delete then runs on
//   that same connection, so it cannot happen after the fence is lost;
// - the pump: a shadow the route table in force can select (every route shadow in it, and the
//   application shadow whenever the pump consumes) is never removable; a shadow out of the
//   table is removable only when no delivery selected under an older table is still open
//   (the publish barrier, relay.ts);
// - the movers: none is running (they run inside engine steps, which are serial).
// Anyone else publishing straight into a shadow is outside what the engine can see; the
// emptiness proof in shadows.ts catches what they left before the proof.
import type { Link } from './amqpConnection';

declare const proven: unique symbol;

export interface NoPublisher {
  readonly shadow: string;
  /** The fenced connection the proof was made on; the delete must use it. */
  readonly link: Link;
  /** ISO-8601, for the cleanup record. */
  readonly provenAt: string;
  readonly [proven]: true;
}

export interface PublisherFacts {
  readonly link: Link;
  readonly shadow: string;
  /** The route table in force can select this shadow. */
  readonly selectable: boolean;
  /** Deliveries selected under an older route table and not yet confirmed or requeued. */
  readonly openOlderPublishes: number;
  /** Moves (mover.ts) running right now. */
  readonly activeMoves: number;
}

export type NoPublisherProof = { ok: true; proof: NoPublisher } | { ok: false; reason: string };

export function proveNoPublisher(facts: PublisherFacts): NoPublisherProof {
  const { link, shadow } = facts;
  if (!link.alive) return { ok: false, reason: `the engine does not hold the fence for ${shadow} right now` };
  if (facts.selectable) return { ok: false, reason: `the route table in force still routes to ${shadow}` };
  if (facts.openOlderPublishes > 0) {
    return {
      ok: false,
      reason: `${facts.openOlderPublishes} publishes selected under an older route table may still reach ${shadow}`,
    };
  }
  if (facts.activeMoves > 0) return { ok: false, reason: `a move may still publish to ${shadow}` };
  // The cast is the one place a proof is made; the brand keeps every other path from forging it.
  return { ok: true, proof: { shadow, link, provenAt: new Date().toISOString() } as NoPublisher };
}
