// Kafka from the laptop: the connection a queue's env describes, clients that dial through the
// address map, kafkajs failures made into actionable errors, the env-delivery reach check and
// the direct test message (laptop/providers/contract.ts). The sidecar's consumers and relay use
// its clients too.
import * as net from 'node:net';
import * as tls from 'node:tls';
import { Kafka, logLevel, type ISocketFactory, type LogEntry, type SASLOptions } from 'kafkajs';
import type { ResolvedKafkaQueue } from '../core/providers/kafka/resolve';
import type { AddressMap } from './addressMap';
import { within } from './deadline';
import { SidecarError, errorChain, errorText, systemCode } from './errors';
import type { LaptopProvider, QueueEnv } from './providers/contract';
import type { OutgoingTestMessage } from './testMessage';

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
function kafkaConnection(queue: ResolvedKafkaQueue, env: QueueEnv): KafkaConnection {
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

/** env delivery: connect() dials a bootstrap broker and authenticates (SASL): reach and
 * credentials at once. */
async function checkKafkaReach(
  queue: string,
  connection: KafkaConnection,
  map: AddressMap,
  timeoutMs: number,
): Promise<void> {
  const admin = new Kafka({
    clientId: 'queue-split-sidecar-preflight',
    brokers: connection.brokers,
    ...(connection.ssl !== undefined ? { ssl: connection.ssl } : {}),
    ...(connection.sasl !== undefined ? { sasl: connection.sasl } : {}),
    socketFactory: kafkaSocketFactory(map),
    // The failure becomes the one error line; kafkajs' own retry logs would only repeat it.
    logLevel: logLevel.NOTHING,
    connectionTimeout: Math.min(3_000, timeoutMs),
    authenticationTimeout: Math.min(3_000, timeoutMs),
    retry: { retries: 0 },
  }).admin();
  const work = admin.connect();
  try {
    await within(timeoutMs, `Kafka ${connection.display}`, work, () => void admin.disconnect());
  } catch (err) {
    throw kafkaStartError(err, `queue "${queue}"`, connection);
  } finally {
    await admin.disconnect().catch(() => undefined);
  }
}

/** Publishes a test message into the source topic (acks from every in-sync replica), with the
 * `message-id` header the engine routes on. */
async function publishKafkaTestMessage(
  connection: KafkaConnection,
  message: OutgoingTestMessage,
  { addressMap, log }: { addressMap: AddressMap; log: (line: string) => void },
): Promise<void> {
  const producer = kafkaClient(connection, addressMap, log, 'queue-split-vscode').producer({
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

export const kafkaLaptop: LaptopProvider<'kafka', KafkaConnection> = {
  provider: 'kafka',
  connection: kafkaConnection,
  checkReach: checkKafkaReach,
  envWarning: (connection) =>
    // The address map rewrites the bootstrap address only: the brokers' metadata then hands
    // the process addresses it cannot rewrite.
    connection.display.includes('dialed as')
      ? {
          code: 'advertised-address',
          message:
            'The debugged process connects to Kafka itself: it gets the mapped bootstrap address, but Kafka then hands out its advertised (in-cluster) broker addresses, which the address map cannot rewrite outside the sidecar.',
          suggestedAction:
            'Make the advertised broker names resolve to your port-forward (e.g. /etc/hosts), or use --mode http or relay.',
        }
      : undefined,
  publishTestMessage: publishKafkaTestMessage,
};
