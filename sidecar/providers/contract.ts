// What a provider is to the sidecar beyond its laptop side (laptop/providers/contract.ts): the
// consumer of a session shadow when the sidecar reads the broker itself (`--transport broker`),
// and the relay into the developer's local broker of the same kind. Each provider exports one
// SidecarProvider (sidecar/providers/<provider>.ts); sidecar/providers/registry.ts lists them.
import type { Provider } from '../../core/providers';
import type { BrokerPartOf, CarriedHeader, ShadowMessage } from '../../core/shadowMessage';
import type { AddressMap } from '../../laptop/addressMap';
import type { SidecarError } from '../../laptop/errors';
import type { Redactor } from '../../laptop/redact';
import type { ConnectionOf } from '../../laptop/providers/registry';
import type { ShadowConsumer } from '../consumers/types';
import type { AttemptResult } from '../delivery/retry';
import type { Reporter } from '../output';

export interface ConsumerInput<P extends Provider> {
  /** The logical queue. */
  queue: string;
  /** The session shadow the controller named, with its group where the provider has groups. */
  shadow: { source: string; group?: string };
  connection: ConnectionOf<P>;
  addressMap: AddressMap;
  reporter: Reporter;
  /** The QueueSplit, for the connection name a broker shows its operators. */
  splitName: string;
  /** A failure the consumer does not recover from after start. */
  onFatal: (err: SidecarError) => void;
}

/** Where relay delivery republishes a queue's messages: a topic or queue on the local broker. */
export interface RelayDestination {
  queue: string;
  provider: Provider;
  /** Local topic or queue. */
  name: string;
}

/** Republishes into one local broker; made before the split exists, opened by the preflight. */
export interface RelayPublisher {
  /** What an outage warning calls the local broker: "The local Kafka (127.0.0.1:9092)". */
  readonly subject: string;
  /** Where a destination's messages go, for people and the `ready` line (no credentials). */
  describe(destination: RelayDestination): string;
  /** Connects and checks every destination exists: a missing one is a SidecarError before
   * anything is consumed. */
  open(destinations: readonly RelayDestination[]): Promise<void>;
  /** One attempt; ok only once the local broker confirmed it. */
  publish(destination: RelayDestination, message: ShadowMessage): Promise<AttemptResult>;
  close(): Promise<void>;
}

/** What a provider's messages bring to their CloudEvent beyond what every message has
 * (sidecar/delivery/cloudEvents.ts; the whole mapping: sidecar/README.md, "CloudEvents mapping"). */
export interface CloudEventsFacet<P extends Provider> {
  /** A carried header the event leaves out, because an attribute carries it already. */
  omits?(header: CarriedHeader): boolean;
  /** The text of a header value of a type only its client decodes, at any depth of a value;
   * undefined: the mapping's own text. */
  readonly valueText?: (value: unknown) => string | undefined;
  /** HTTP headers of its own, after the carried ones: [name, value before percent-encoding]. */
  headers(part: BrokerPartOf<P>): [string, string | Uint8Array][];
}

export interface SidecarProvider<P extends Provider> {
  readonly provider: P;
  /** `--transport broker`: a consumer of the queue's session shadow, not yet started; throws a
   * SidecarError when the controller's names do not suffice. */
  consumer(input: ConsumerInput<P>): ShadowConsumer;
  /** Relay delivery into the developer's local broker of this kind. The sidecar's flag for that
   * broker comes from here (its --settings key from core/providers.ts), so options.ts and main.ts
   * name no provider. */
  readonly relay: {
    /** The flag naming the local broker, its argument and help, and an example value. */
    readonly flag: string;
    readonly arg: string;
    readonly help: string;
    readonly example: string;
    /** Refuses a malformed value (flag or settings) with a usage error naming the flag. */
    check(text: string): void;
    /** Registers the credentials the value holds, so no output line shows them. */
    redact(text: string, redactor: Redactor): void;
    /** The publisher into the local broker `text` names, none when the options name none (it
     * connects only in open()). */
    publisher(text: string | undefined, reporter: Reporter): RelayPublisher;
  };
  /** http delivery: what its messages add to their CloudEvent. */
  readonly cloudEvents: CloudEventsFacet<P>;
}
