// Consumes a Kafka session shadow topic with the session consumer group the controller named.
// One message at a time (partitionsConsumedConcurrently 1): order is kept per partition, and
// the offset is committed after the delivery mode reports success and before the message is
// reported delivered, also while stopping (a reported message is never drained to the app). A
// message the developer rejected is committed past the same way: Kafka has no reject, and the
// app's equivalent is to skip the record.
// Messages not committed when the sidecar stops stay in the topic: a restart resumes there, a
// detach drains them.
import * as net from 'node:net';
import * as tls from 'node:tls';
import { Kafka, logLevel, type Consumer, type ISocketFactory, type LogEntry } from 'kafkajs';
import { kafkaShadowMessage } from '../../core/shadowMessage';
// Shadows keep their source's codec (snappy, lz4, zstd too), which kafkajs alone cannot read.
import '../../core/kafkaCodecs';
import type { AddressMap } from '../addressMap';
import type { KafkaConnection } from '../connection';
import { SidecarError, errorChain, errorText, systemCode } from '../errors';
import type { Reporter } from '../output';
import type { Delivery, DeliveryHandler, ShadowConsumer } from './types';

/** Long deliveries (a breakpoint in the handler) must not cost the group membership. */
const HEARTBEAT_DURING_DELIVERY_MS = 3_000;
/** Short, so a restarted sidecar gets its partitions soon after a kill -9 of the old one. */
const SESSION_TIMEOUT_MS = 15_000;

/** Dials the address map's target for every broker kafkajs connects to (bootstrap and advertised). */
export function kafkaSocketFactory(map: AddressMap): ISocketFactory {
  return ({ host, port, ssl, onConnect }) => {
    const dial = map.dial(host, port);
    const socket = ssl
      ? tls.connect(
          { host: dial.host, port: dial.port, ...(net.isIP(host) ? {} : { servername: host }), ...ssl },
          onConnect,
        )
      : net.connect({ host: dial.host, port: dial.port }, onConnect);
    socket.setKeepAlive(true, 30_000);
    return socket;
  };
}

/** kafkajs logs → stderr (redacted by the reporter); errors and warnings only. */
export function kafkaLogCreator(reporter: Reporter) {
  return () =>
    ({ level, log }: LogEntry): void => {
      if (level > logLevel.WARN) return;
      const { message, error } = log as { message: string; error?: unknown };
      reporter.log(
        `kafkajs ${level === logLevel.ERROR ? 'error' : 'warning'}: ${message}${error ? ` (${String(error)})` : ''}`,
      );
    };
}

export function kafkaClient(
  connection: KafkaConnection,
  map: AddressMap,
  reporter: Reporter,
  clientId: string,
): Kafka {
  return new Kafka({
    clientId,
    brokers: connection.brokers,
    ...(connection.ssl !== undefined ? { ssl: connection.ssl } : {}),
    ...(connection.sasl !== undefined ? { sasl: connection.sasl } : {}),
    socketFactory: kafkaSocketFactory(map),
    logLevel: logLevel.WARN,
    logCreator: kafkaLogCreator(reporter),
    connectionTimeout: 5_000,
    retry: { retries: 4, initialRetryTime: 300, maxRetryTime: 5_000 },
  });
}

/** A kafkajs failure while connecting/subscribing → an actionable SidecarError. */
export function kafkaStartError(err: unknown, what: string, connection: KafkaConnection): SidecarError {
  const chain = errorChain(err);
  const names = chain.map((e) => (e as { name?: unknown }).name);
  const types = chain.map((e) => (e as { type?: unknown }).type);
  const code = systemCode(err);
  if (types.includes('UNKNOWN_TOPIC_OR_PARTITION')) {
    return new SidecarError(
      'shadow-missing',
      `${what} does not exist on ${connection.display}.`,
      'The controller reported a shadow the broker does not have: check `kubectl describe queuesplit` and the controller logs.',
    );
  }
  if (
    names.includes('KafkaJSSASLAuthenticationError') ||
    types.some((t) => typeof t === 'string' && t.endsWith('AUTHORIZATION_FAILED'))
  ) {
    return new SidecarError(
      'broker-auth',
      `Kafka refused the credentials or ACLs for ${what}: ${errorText(chain.at(-1))}`,
      'Check the SASL username/password env (or override them with --env) and the ACLs of the session group and topic.',
    );
  }
  if (code === 'ENOTFOUND' || code === 'EAI_AGAIN') {
    return new SidecarError(
      'broker-unreachable',
      `Cannot resolve the Kafka brokers of ${connection.display} from this machine (${code}).`,
      'Forward the broker port and map the address: --map-address <in-cluster-host:port>=127.0.0.1:<local port> (or --env <brokers env>=<reachable host:port>).',
    );
  }
  return new SidecarError(
    'broker-unreachable',
    `Cannot reach Kafka (${connection.display}) for ${what}: ${code ?? errorText(chain.at(-1))}.`,
    'Check that the brokers are reachable from this machine; use --map-address for in-cluster addresses behind a port-forward.',
  );
}

export interface KafkaShadowOptions {
  queue: string;
  topic: string;
  group: string;
  connection: KafkaConnection;
  addressMap: AddressMap;
  reporter: Reporter;
  /** A failure kafkajs does not recover from after start. */
  onFatal: (err: SidecarError) => void;
}

export class KafkaShadowConsumer implements ShadowConsumer {
  readonly queue: string;
  private consumer: Consumer | undefined;
  private stopping = false;

  constructor(private readonly options: KafkaShadowOptions) {
    this.queue = options.queue;
  }

  async start(handler: DeliveryHandler): Promise<void> {
    const { topic, group, connection, reporter } = this.options;
    const kafka = kafkaClient(
      connection,
      this.options.addressMap,
      reporter,
      `queue-split-sidecar-${this.queue}`,
    );
    const consumer = kafka.consumer({
      groupId: group,
      sessionTimeout: SESSION_TIMEOUT_MS,
      heartbeatInterval: 3_000,
      allowAutoTopicCreation: false,
      retry: { retries: 10, initialRetryTime: 300, maxRetryTime: 10_000 },
    });
    this.consumer = consumer;
    try {
      await consumer.connect();
      await consumer.subscribe({ topics: [topic], fromBeginning: true });
    } catch (err) {
      await consumer.disconnect().catch(() => undefined);
      throw kafkaStartError(err, `session shadow topic ${topic}`, connection);
    }
    consumer.on(consumer.events.CRASH, (event) => {
      if (this.stopping || event.payload.restart) return;
      this.options.onFatal(kafkaStartError(event.payload.error, `session shadow topic ${topic}`, connection));
    });
    await consumer.run({
      autoCommit: false,
      // eachBatch, one message at a time: its commitOffsetsIfNecessary(offsets) commits at once
      // even while the consumer is stopping, where consumer.commitOffsets returns silently
      // without committing (kafkajs 2.2.4) and a delivered message would be drained to the app.
      eachBatchAutoResolve: false,
      partitionsConsumedConcurrently: 1,
      eachBatch: async ({
        batch,
        resolveOffset,
        heartbeat,
        commitOffsetsIfNecessary,
        isRunning,
        isStale,
      }) => {
        for (const message of batch.messages) {
          // Stopping: leave the rest uncommitted; it stays in the shadow for a restart or the drain.
          if (this.stopping || !isRunning() || isStale()) return;
          const shadowMessage = kafkaShadowMessage(this.queue, batch.partition, message);
          const beat = setInterval(
            () => void heartbeat().catch(() => undefined),
            HEARTBEAT_DURING_DELIVERY_MS,
          );
          let delivery: Delivery;
          try {
            delivery = await handler.deliver(shadowMessage);
          } catch (err) {
            if (this.stopping) return;
            throw err;
          } finally {
            clearInterval(beat);
          }
          const next = (BigInt(message.offset) + 1n).toString();
          try {
            await commitOffsetsIfNecessary({
              topics: [{ topic: batch.topic, partitions: [{ partition: batch.partition, offset: next }] }],
            });
          } catch (err) {
            // Not committed: it comes again (or the drain moves it), so it is not reported delivered.
            reporter.log(
              `kafka consumer ${this.queue}: message ${shadowMessage.id} was delivered but its commit failed (${errorText(err)}); it will be delivered again`,
            );
            if (this.stopping) return;
            throw err;
          }
          resolveOffset(message.offset);
          handler.settled(shadowMessage, delivery);
        }
      },
    });
  }

  async stop(): Promise<void> {
    this.stopping = true;
    await this.consumer
      ?.disconnect()
      .catch((err: unknown) =>
        this.options.reporter.log(`kafka consumer ${this.queue}: disconnect failed: ${errorText(err)}`),
      );
  }
}
