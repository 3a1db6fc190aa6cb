// Kafka from the laptop: the connection a queue's env describes, clients that dial through the
// address map, and kafkajs failures made into actionable errors. The sidecar's consumers and
// relay and the extension's test messages use it.
import * as net from 'node:net';
import * as tls from 'node:tls';
import { Kafka, logLevel, type ISocketFactory, type LogEntry, type SASLOptions } from 'kafkajs';
import type { ResolvedKafkaQueue } from '../core/providers/kafka/resolve';
import type { AddressMap } from './addressMap';
import type { QueueEnv } from './brokerConnection';
import type { OutgoingTestMessage } from './testMessage';
import { SidecarError, errorChain, errorText, systemCode } from './errors';

export interface KafkaConnection {
  provider: 'kafka';
  /** Bootstrap brokers as declared (host:port); the address map applies when dialing. */
  brokers: string[];
  ssl?: tls.ConnectionOptions;
  sasl?: SASLOptions;
  /** For people: brokers and the addresses actually dialed. */
  display: string;
}

/** The connection a Kafka queue's resolved env describes (brokers without a port get 9092). */
export function kafkaConnection(queue: ResolvedKafkaQueue, env: QueueEnv): KafkaConnection {
  const brokers = (env.raw('brokers') ?? '')
    .split(',')
    .map((b) => b.trim().replace(/^[A-Za-z_]+:\/\//, ''))
    .filter((b) => b !== '')
    .map((b) => (/:\d+$/.test(b) ? b : `${b}:9092`));
  if (brokers.length === 0) {
    throw new SidecarError(
      'config-missing',
      `${env.envName('brokers')} of queue "${queue.name}" is empty, so there is no Kafka broker to connect to.`,
      `Supply it locally with --env ${env.envName('brokers')}=host:port.`,
    );
  }
  const dialed = brokers.map((b) => env.addressMap.mapBroker(b));
  const display = `kafka ${brokers.join(',')}${dialed.join(',') !== brokers.join(',') ? ` (dialed as ${dialed.join(',')})` : ''}`;
  const sasl = kafkaSasl(queue, env);
  return {
    provider: 'kafka',
    brokers,
    ...(queue.tls !== undefined ? { ssl: env.ca !== undefined ? { ca: [env.ca] } : {} } : {}),
    ...(sasl !== undefined ? { sasl } : {}),
    display,
  };
}

function kafkaSasl(queue: ResolvedKafkaQueue, env: QueueEnv): SASLOptions | undefined {
  if (queue.saslMechanism === undefined) return undefined;
  const username = env.value('username');
  const password = env.value('password');
  if (username === undefined || password === undefined) {
    const missing = username === undefined ? env.envName('username') : env.envName('password');
    throw new SidecarError(
      'config-missing',
      `Queue "${queue.name}" uses SASL ${queue.saslMechanism}, but ${missing} has no value.`,
      `Supply it locally with --env ${missing}=<value>.`,
    );
  }
  switch (queue.saslMechanism) {
    case 'PLAIN':
      return { mechanism: 'plain', username, password };
    case 'SCRAM-SHA-256':
      return { mechanism: 'scram-sha-256', username, password };
    case 'SCRAM-SHA-512':
      return { mechanism: 'scram-sha-512', username, password };
  }
}

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

/** kafkajs logs → `log` (the caller redacts); errors and warnings only. */
export function kafkaLogCreator(log: (line: string) => void) {
  return () =>
    ({ level, log: entry }: LogEntry): void => {
      if (level > logLevel.WARN) return;
      const { message, error } = entry as { message: string; error?: unknown };
      log(
        `kafkajs ${level === logLevel.ERROR ? 'error' : 'warning'}: ${message}${error ? ` (${String(error)})` : ''}`,
      );
    };
}

export function kafkaClient(
  connection: KafkaConnection,
  map: AddressMap,
  /** Where kafkajs warnings and errors go (already redacted by the caller's sink). */
  log: (line: string) => void,
  clientId: string,
): Kafka {
  return new Kafka({
    clientId,
    brokers: connection.brokers,
    ...(connection.ssl !== undefined ? { ssl: connection.ssl } : {}),
    ...(connection.sasl !== undefined ? { sasl: connection.sasl } : {}),
    socketFactory: kafkaSocketFactory(map),
    logLevel: logLevel.WARN,
    logCreator: kafkaLogCreator(log),
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

/** Publishes a test message into the source topic (acks from every in-sync replica), with the
 * `message-id` header the engine routes on. */
export async function publishKafkaTestMessage(
  connection: KafkaConnection,
  map: AddressMap,
  log: (line: string) => void,
  message: OutgoingTestMessage,
): Promise<void> {
  const producer = kafkaClient(connection, map, log, 'queue-split-vscode').producer({
    allowAutoTopicCreation: false,
  });
  await producer.connect();
  try {
    await producer.send({
      topic: message.source,
      acks: -1,
      messages: [
        {
          value: message.body,
          headers: {
            ...message.headers,
            ...(message.contentType !== undefined ? { 'content-type': message.contentType } : {}),
            'message-id': message.messageId,
          },
        },
      ],
    });
  } finally {
    await producer.disconnect().catch(() => undefined);
  }
}
