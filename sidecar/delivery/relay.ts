// relay mode: republish each session message into a broker the developer runs locally, so an
// unmodified consumer on the laptop reads it from its usual topic/queue. The session message is
// acked/committed only after the local broker confirmed the publish. Each provider relays into
// a local broker of its own kind (sidecar/providers/<provider>.ts says how, what it keeps and
// what it cannot); this deliverer holds one publisher and one outage per provider.
import { PROVIDER_NAMES, type Provider } from '../../core/providers';
import type { ShadowMessage } from '../../core/shadowMessage';
import type { SidecarOptions } from '../options';
import type { Reporter } from '../output';
import type { RelayDestination, RelayPublisher } from '../providers/contract';
import { sidecarProvider } from '../providers/registry';
import { abortError, Outage, type AttemptResult } from './retry';
import type { Deliverer } from './types';

export type { RelayDestination } from '../providers/contract';

export interface RelayOptions {
  /** The local brokers the options name, by provider. */
  brokers: SidecarOptions['relay']['brokers'];
  destinations: readonly RelayDestination[];
  reporter: Reporter;
}

export class RelayDeliverer implements Deliverer {
  private readonly relays: ReadonlyMap<Provider, { publisher: RelayPublisher; outage: Outage }>;

  constructor(private readonly options: RelayOptions) {
    const flags = PROVIDER_NAMES.map((provider) => sidecarProvider(provider).relay.flag).join(' / ');
    const action = `Start your local broker (or fix ${flags}) and make sure the destination exists.`;
    this.relays = new Map(
      PROVIDER_NAMES.map((provider) => {
        const publisher = sidecarProvider(provider).relay.publisher(
          options.brokers[provider],
          options.reporter,
        );
        return [
          provider,
          { publisher, outage: new Outage(options.reporter, 'relay-down', publisher.subject, action) },
        ];
      }),
    );
  }

  private destination(queue: string): RelayDestination {
    const found = this.options.destinations.find((d) => d.queue === queue);
    if (found === undefined) throw new Error(`no relay destination for queue ${queue}`);
    return found;
  }

  private relay(provider: Provider): { publisher: RelayPublisher; outage: Outage } {
    const relay = this.relays.get(provider);
    if (relay === undefined) throw new Error(`no relay for provider ${provider}`);
    return relay;
  }

  describe(queue: string): string {
    const d = this.destination(queue);
    return this.relay(d.provider).publisher.describe(d);
  }

  outage(queue: string): Outage {
    return this.relay(this.destination(queue).provider).outage;
  }

  /** Connects and checks every destination exists: a missing one is an error before consuming starts. */
  async open(): Promise<void> {
    for (const [provider, { publisher }] of this.relays) {
      const destinations = this.options.destinations.filter((d) => d.provider === provider);
      if (destinations.length > 0) await publisher.open(destinations);
    }
  }

  attempt(message: ShadowMessage, signal: AbortSignal): Promise<AttemptResult> {
    if (signal.aborted) return Promise.reject(abortError());
    const d = this.destination(message.queue);
    return this.relay(d.provider).publisher.publish(d, message);
  }

  async close(): Promise<void> {
    for (const { publisher } of this.relays.values()) await publisher.close();
  }
}
