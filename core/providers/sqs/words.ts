// How Amazon SQS is named where a person reads it (core/providers.ts). No zod here: the
// extension's activation bundle imports it.
import type { ProviderInfo } from '../../providers';

export const sqsWords: ProviderInfo = {
  label: 'Amazon SQS',
  source: 'queue',
  icon: 'inbox',
  // Relay republishes into a local SQS-compatible endpoint (ElasticMQ, LocalStack).
  relay: { setting: 'relaySqsEndpoint', settingsKey: 'sqsEndpoint' },
  reject: {
    done: "SQS has no reject: it was released without being deleted, as your app's failed receive would leave it; the queue's RedrivePolicy moves it to the dead-letter queue after maxReceiveCount receives, or it stays until its retention ends",
  },
};
