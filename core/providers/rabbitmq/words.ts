// How RabbitMQ is named where a person reads it (core/providers.ts). No zod here: the extension's
// activation bundle imports it.
import type { ProviderInfo } from '../../providers';

export const rabbitWords: ProviderInfo = {
  label: 'RabbitMQ',
  source: 'queue',
  icon: 'mail',
  relay: { setting: 'relayAmqpUrl', settingsKey: 'amqpUrl' },
  reject: {
    done: "RabbitMQ rejected it without requeue: the broker dead-letters it by the queue's dead-letter settings (x-dead-letter-exchange), or discards it if the queue has none, as your app's own reject would",
  },
};
