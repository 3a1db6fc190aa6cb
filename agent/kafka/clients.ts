// Builds the kafkajs clients of one engine from its connection settings. Every client gets
// `allowAutoTopicCreation: false`: a broker that auto-creates topics would otherwise silently
// recreate a shadow deleted behind the engine, or a typo'd name.
import { Kafka, logLevel, type KafkaConfig, type ISocketFactory } from 'kafkajs';
import type { KafkaConnection, KafkaTiming } from './config';

export function kafkaConfig(
  connection: KafkaConnection,
  clientId: string,
  timing: KafkaTiming,
  socketFactory?: ISocketFactory,
): KafkaConfig {
  const ssl = connection.ssl;
  return {
    clientId,
    brokers: [...connection.brokers],
    ...(ssl === undefined ? {} : { ssl: typeof ssl === 'boolean' ? ssl : { ca: [ssl.ca] } }),
    ...(connection.sasl ? { sasl: connection.sasl } : {}),
    connectionTimeout: timing.connectionTimeoutMs,
    requestTimeout: timing.requestTimeoutMs,
    // The engine retries whole steps and batches itself; short client retries keep a missing
    // destination from stalling the pump for the default ~10 s.
    retry: { retries: 2, initialRetryTime: 100, maxRetryTime: 1_000 },
    // kafkajs log lines can carry broker addresses and request details; engine logs say what matters.
    logLevel: logLevel.NOTHING,
    ...(socketFactory ? { socketFactory } : {}),
  };
}

export function kafkaClient(
  connection: KafkaConnection,
  clientId: string,
  timing: KafkaTiming,
  socketFactory?: ISocketFactory,
): Kafka {
  return new Kafka(kafkaConfig(connection, clientId, timing, socketFactory));
}
