// Builds an engine from a ChildSpec in another process (the crash scenario's child). A
// provider joins by adding its case here and a harness that writes its ChildSpec.
import type { Engine, EngineHooks } from '../../agent/engine/contract';
import type { Logger } from '../../agent/log';
import type { KafkaEngineConfig } from '../../agent/kafka/config';
import { KafkaEngine } from '../../agent/kafka/engine';
import type { RabbitEngineConfig } from '../../agent/rabbitmq/config';
import { RabbitEngine } from '../../agent/rabbitmq/engine';
import type { SqsEngineConfig } from '../../agent/sqs/config';
import { SqsEngine } from '../../agent/sqs/engine';
import type { ChildSpec } from './harness';

export function engineFromSpec(spec: ChildSpec, deps: { hooks: EngineHooks; logger: Logger }): Engine {
  switch (spec.provider) {
    case 'rabbitmq':
      // The harness wrote this config from a RabbitEngineConfig; it round-trips through JSON.
      return new RabbitEngine(spec.config as RabbitEngineConfig, deps);
    case 'kafka':
      // The Kafka harness wrote this config from a KafkaEngineConfig (JSON round trip).
      return new KafkaEngine(spec.config as KafkaEngineConfig, deps);
    case 'sqs':
      // The SQS harness wrote this config from an SqsEngineConfig (JSON round trip).
      return new SqsEngine(spec.config as SqsEngineConfig, deps);
    default:
      throw new Error(`crash child: no engine for provider ${spec.provider}`);
  }
}
