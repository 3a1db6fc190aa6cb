// The brokers Queue Split splits, in one registry: the `Provider` union every package uses is
// its keys, and each entry says how the provider is named where a person reads it. Adding a
// provider starts with one line here (docs/architecture.md, "Adding a provider"); the compiler
// then names every table and switch that lacks it. No zod here: the extension's activation
// bundle imports this (the schema is core/providerSchema.ts).
export interface ProviderInfo {
  /** The broker's name, e.g. "RabbitMQ". */
  readonly label: string;
  /** What a source is called on it: "topic", "queue". */
  readonly source: string;
  /** The VS Code codicon of its queues. */
  readonly icon: string;
  /** What rejecting a message the developer's handler keeps failing does on this broker:
   * before (the confirmation) and after (the sidecar's `rejected` line). */
  readonly reject: { readonly confirm: string; readonly done: string };
}

export const PROVIDERS = {
  kafka: {
    label: 'Kafka',
    source: 'topic',
    icon: 'symbol-event',
    reject: {
      confirm:
        'Kafka has no reject: the message is skipped, its offset committed past it, as your app would skip it. Neither you nor the app get it again.',
      done: 'Kafka has no reject: it is skipped, its offset committed past it, as your app would skip it; it is not delivered again',
    },
  },
  rabbitmq: {
    label: 'RabbitMQ',
    source: 'queue',
    icon: 'mail',
    reject: {
      confirm:
        "RabbitMQ rejects it without requeue, as your app's own reject would: the broker dead-letters it by the queue's rules (x-dead-letter-exchange), or discards it if the queue has no dead-letter exchange.",
      done: "RabbitMQ rejected it without requeue: the broker dead-letters it by the queue's dead-letter settings (x-dead-letter-exchange), or discards it if the queue has none, as your app's own reject would",
    },
  },
} as const satisfies Record<string, ProviderInfo>;

export type Provider = keyof typeof PROVIDERS;

/** Every provider, in registry order. */
export const PROVIDER_NAMES = Object.keys(PROVIDERS) as [Provider, ...Provider[]];

/** "Kafka topic", "RabbitMQ queue". */
export function sourceLabel(provider: Provider): string {
  const { label, source } = PROVIDERS[provider];
  return `${label} ${source}`;
}

/** The end of an exhaustive `switch`: a value the types say cannot exist. */
export function assertNever(value: never, what = 'value'): never {
  throw new Error(`unexpected ${what}: ${JSON.stringify(value)}`);
}
