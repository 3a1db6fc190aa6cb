// The brokers Queue Split splits, in one registry: the `Provider` union every package uses is
// its keys, and each entry says how the provider is named where a person reads it (its words,
// core/providers/<provider>/words.ts). Adding a provider starts with one line here
// (docs/architecture.md, "Adding a provider"); the compiler then names every provider table that
// lacks it — one per layer (core/providers/registry.ts, agent/providers/registry.ts,
// laptop/providers.ts, sidecar/providers/registry.ts). No zod here: the extension's activation
// bundle imports this (the schema is core/providerSchema.ts).
import { kafkaWords } from './providers/kafka/words';
import { rabbitWords } from './providers/rabbitmq/words';
import { sqsWords } from './providers/sqs/words';

export interface ProviderInfo {
  /** The broker's name, e.g. "RabbitMQ". */
  readonly label: string;
  /** What a source is called on it: "topic", "queue". */
  readonly source: string;
  /** The VS Code codicon of its queues. */
  readonly icon: string;
  /** What rejecting a message the developer's handler keeps failing does on this broker:
   * before (the confirmation) and after (the sidecar's `rejected` line). */
  /** What the sidecar says after a reject (its own English log and status; the extension's modal words it itself). */
  readonly reject: { readonly done: string };
  /** Relay delivery's local broker of this kind, as the developer names it: the VS Code setting
   * (under `queueSplit.delivery.`, declared in package.json) and the key under `relay` in the
   * sidecar's --settings file, which the extension writes and the sidecar reads. */
  readonly relay: { readonly setting: string; readonly settingsKey: string };
}

export const PROVIDERS = {
  kafka: kafkaWords,
  rabbitmq: rabbitWords,
  sqs: sqsWords,
} as const satisfies Record<string, ProviderInfo>;

export type Provider = keyof typeof PROVIDERS;

/** Every provider, in registry order. */
export const PROVIDER_NAMES = Object.keys(PROVIDERS) as [Provider, ...Provider[]];

/** "Kafka topic", "RabbitMQ queue". */
export function sourceLabel(provider: Provider): string {
  const { label, source } = PROVIDERS[provider];
  return `${label} ${source}`;
}

/** The VS Code settings naming each provider's local broker for relay delivery, in full. */
export function relaySettingNames(): string[] {
  return PROVIDER_NAMES.map((provider) => `queueSplit.delivery.${PROVIDERS[provider].relay.setting}`);
}

/** The end of an exhaustive `switch`: a value the types say cannot exist. */
export function assertNever(value: never, what = 'value'): never {
  throw new Error(`unexpected ${what}: ${JSON.stringify(value)}`);
}
