// How Kafka is named where a person reads it (core/providers.ts). No zod here: the extension's
// activation bundle imports it.
import type { ProviderInfo } from '../../providers';

export const kafkaWords: ProviderInfo = {
  label: 'Kafka',
  source: 'topic',
  icon: 'symbol-event',
  relay: { setting: 'relayKafkaBrokers', settingsKey: 'kafkaBrokers' },
  reject: {
    done: 'Kafka has no reject: it is skipped, its offset committed past it, as your app would skip it; it is not delivered again',
  },
};
