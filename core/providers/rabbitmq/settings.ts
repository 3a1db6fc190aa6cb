// RabbitMQ's broker settings (core/providers/contract.ts BrokerSetting).
import type { BrokerSetting } from '../contract';

/** The brokers' `collect_statistics_interval`, which bounds how stale management figures are
 * (the engine's timing, agent/rabbitmq/config.ts); RabbitMQ's own default unless the operator says. */
export const RABBIT_STATISTICS_INTERVAL: BrokerSetting = {
  flag: 'rabbitmq-statistics-interval',
  arg: 'seconds',
  help: "the RabbitMQ brokers' collect_statistics_interval: how stale management figures may be before a shadow is proven empty",
  min: 1,
  default: 5,
};
