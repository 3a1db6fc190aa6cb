// SQS's broker settings (core/providers/contract.ts BrokerSetting).
import type { BrokerSetting } from '../contract';

/** How long SQS's approximate counts may trail a change: every emptiness and quiet proof spans a
 * queue's visibility timeout plus this (docs/providers/sqs.md "The window"). AWS documents about
 * a minute; an SQS-compatible server with exact counts (ElasticMQ) can be given 0. */
export const SQS_COUNTS_LAG: BrokerSetting = {
  flag: 'sqs-counts-lag',
  arg: 'seconds',
  help: "how long SQS's approximate message counts may trail a change before a queue is proven empty (AWS: about a minute)",
  min: 0,
  default: 60,
};

/** How long the fence's lock message stays in flight once its holder stops extending it: a
 * successor of a crashed queue-agent waits this long (docs/providers/sqs.md "The fence"). The
 * holder extends it every sixth of this, and acts only while its lease is younger than half. */
export const SQS_LOCK_TIMEOUT: BrokerSetting = {
  flag: 'sqs-lock-timeout',
  arg: 'seconds',
  help: "how long the SQS fence's lock stays taken after its queue-agent died: a successor waits this long before it takes over",
  min: 3,
  default: 30,
};
