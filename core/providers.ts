// The brokers Queue Split splits, in one registry: the `Provider` union every package uses is
// its keys, and each entry says how the provider is named where a person reads it. Adding a
// provider starts with one line here (docs/architecture.md, "Adding a provider"); the compiler
// then names every table and switch that lacks it.
import { z } from 'zod';

export interface ProviderInfo {
  /** The broker's name, e.g. "RabbitMQ". */
  readonly label: string;
  /** What a source is called on it: "topic", "queue". */
  readonly source: string;
  /** The VS Code codicon of its queues. */
  readonly icon: string;
}

export const PROVIDERS = {
  kafka: { label: 'Kafka', source: 'topic', icon: 'symbol-event' },
  rabbitmq: { label: 'RabbitMQ', source: 'queue', icon: 'mail' },
} as const satisfies Record<string, ProviderInfo>;

export type Provider = keyof typeof PROVIDERS;

/** Every provider, in registry order. */
export const PROVIDER_NAMES = Object.keys(PROVIDERS) as [Provider, ...Provider[]];

export const providerSchema = z.enum(PROVIDER_NAMES);

/** "Kafka topic", "RabbitMQ queue". */
export function sourceLabel(provider: Provider): string {
  const { label, source } = PROVIDERS[provider];
  return `${label} ${source}`;
}

/** The end of an exhaustive `switch`: a value the types say cannot exist. */
export function assertNever(value: never, what = 'value'): never {
  throw new Error(`unexpected ${what}: ${JSON.stringify(value)}`);
}
