// One message of a session shadow as a delivery mode sees it, wherever it was read: by the
// sidecar from the broker itself (`--transport broker`), or by the queue-agent, which streams it
// to the sidecar (core/sessionStream.ts). What only its broker has is its provider's part, built
// and encoded by that provider's module (core/providers/<provider>/message.ts); the conversions
// to and from the stream's form go through the provider table, once, here.
import { brokerTime } from './brokerTime';
import type { MessageHeaders } from './filter';
import type { MessageLane } from './providers/contract';
import type { Provider } from './providers';
import { coreProvider, type ProviderTypesOf } from './providers/registry';
import { wirePartOf, type WireMessage } from './sessionStream';

/** One broker header as carried, its value as its broker types it (bytes, text, typed values);
 * a name its broker repeats appears once per value. */
export interface CarriedHeader {
  name: string;
  value: unknown;
}

/** Provider `P`'s part of a message: the fields only its broker has. */
export type BrokerPartOf<P extends Provider> = ProviderTypesOf<P>['part'];

/** Any provider's part, told apart by `provider`. */
export type BrokerPart = BrokerPartOf<Provider>;

export interface ShadowMessage {
  /** Logical queue name. */
  queue: string;
  /** Stable across redeliveries where the broker gives an id (its provider's message.ts says
   * which), else generated. */
  id: string;
  body: Buffer;
  /** Broker timestamp, else receipt time. */
  time: Date;
  contentType?: string;
  headers: CarriedHeader[];
  /** Headers as the filter sees them (core/filter/model.ts MessageHeaders). */
  filterHeaders: MessageHeaders;
  broker: BrokerPart;
}

/** The stream's form of a message: the fields every message has, then its part under its
 * provider's key (bytes as bytes; the filter view is recomputed on arrival). */
export function toWireMessage(m: ShadowMessage): WireMessage {
  const facet = coreProvider(m.broker.provider).message;
  // The key is the part's provider's, so the part under it is the one WireMessage names there.
  return {
    id: m.id,
    body: m.body,
    time: brokerTime(m.time.getTime()).getTime(),
    ...(m.contentType !== undefined ? { contentType: m.contentType } : {}),
    headers: m.headers,
    [facet.wireKey]: facet.toWire(m.broker),
  } as WireMessage;
}

/** A message the stream's schema accepted (which holds exactly one part), as it was sent. */
export function fromWireMessage(queue: string, w: WireMessage): ShadowMessage {
  const found = wirePartOf(w);
  if (found === undefined) throw new Error(`session message ${w.id} carries no broker part`);
  // wirePartOf found the part under its provider's key, which the schema checked as that part.
  const part = found.part as ProviderTypesOf<Provider>['wirePart'];
  return coreProvider(found.provider).message.fromWire(queue, w, part);
}

/** The lane a message is delivered in below its queue, if its broker has lanes. */
export function messageLane(m: ShadowMessage): MessageLane | undefined {
  return coreProvider(m.broker.provider).message.lane(m.broker);
}
