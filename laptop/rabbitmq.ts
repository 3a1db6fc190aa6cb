// RabbitMQ from the laptop: the connection a queue's env describes, connecting with it, AMQP
// failures made into actionable errors, the env-delivery reach check and the direct test message
// (laptop/providers/contract.ts). The sidecar's consumers and relay connect with it too.
import type * as tls from 'node:tls';
import * as amqp from 'amqplib';
import type { ResolvedRabbitQueue } from '../core/providers/rabbitmq/resolve';
import { within } from './deadline';
import { SidecarError, errorText, systemCode } from './errors';
import type { LaptopProvider, QueueEnv } from './providers/contract';
import { redactUrl } from './redact';
import type { OutgoingTestMessage } from './testMessage';

export interface RabbitConnection {
  provider: 'rabbitmq';
  /** The URL to dial (mapped, credentials inside). Secret: never print it. */
  url: string;
  socketOptions: tls.ConnectionOptions;
  display: string;
}

/** The connection a RabbitMQ queue's resolved env describes: the URL (with separate
 * credentials put in), mapped to where it is dialed from here. */
function rabbitConnection(queue: ResolvedRabbitQueue, env: QueueEnv): RabbitConnection {
  const urlText = env.raw('url');
  if (urlText === undefined || urlText === '') {
    throw new SidecarError(
      'config-missing',
      `${env.envName('url')} of queue "${queue.name}" has no value, so there is no RabbitMQ to connect to.`,
      `Supply it locally with --env ${env.envName('url')}=amqp://user:password@host:5672/vhost.`,
    );
  }
  let url: URL;
  try {
    url = new URL(urlText);
  } catch {
    throw new SidecarError(
      'config-missing',
      `${env.envName('url')} of queue "${queue.name}" is not a URL.`,
      `Supply it locally with --env ${env.envName('url')}=amqp://host:5672.`,
    );
  }
  const username = env.value('username');
  const password = env.value('password');
  if (url.username === '' && username !== undefined) {
    url.username = encodeURIComponent(username);
    url.password = encodeURIComponent(password ?? '');
  }
  env.redactor.addUrl(url.toString());
  const mapped = env.addressMap.mapUrl(url.toString());
  const socketOptions: tls.ConnectionOptions = {};
  if (url.protocol === 'amqps:') {
    if (env.ca !== undefined) socketOptions.ca = [env.ca];
    // Certificates name the in-cluster host, not the port-forward we dial.
    if (mapped.mapped && !/^[\d.]+$|:/.test(mapped.originalHost))
      socketOptions.servername = mapped.originalHost;
  }
  return {
    provider: 'rabbitmq',
    url: mapped.url,
    socketOptions,
    display: `rabbitmq ${redactUrl(urlText)}${mapped.mapped ? ` (dialed as ${redactUrl(mapped.url)})` : ''}`,
  };
}

/** Reply code of an AMQP channel/connection close (404 NOT_FOUND, 403 ACCESS_REFUSED, ...). */
export function amqpReplyCode(err: unknown): number | undefined {
  const code = (err as { code?: unknown } | undefined)?.code;
  return typeof code === 'number' ? code : undefined;
}

/** Connecting failed → an actionable SidecarError. */
export function amqpConnectError(err: unknown, connection: RabbitConnection): SidecarError {
  const code = systemCode(err);
  const text = errorText(err);
  if (/ACCESS_REFUSED|403|authentication|PLAIN login refused/i.test(text) && code === undefined) {
    return new SidecarError(
      'broker-auth',
      `RabbitMQ (${connection.display}) refused the credentials: ${text}`,
      'Check the URL credentials (or override the URL env with --env).',
    );
  }
  if (code === 'ENOTFOUND' || code === 'EAI_AGAIN') {
    return new SidecarError(
      'broker-unreachable',
      `Cannot resolve the RabbitMQ host of ${connection.display} from this machine (${code}).`,
      'Forward the AMQP port and map the address: --map-address <in-cluster-host:port>=127.0.0.1:<local port> (or --env <url env>=<reachable URL>).',
    );
  }
  return new SidecarError(
    'broker-unreachable',
    `Cannot connect to RabbitMQ (${connection.display}): ${code ?? text}.`,
    'Check that the broker is reachable from this machine; use --map-address for in-cluster addresses behind a port-forward.',
  );
}

export async function connectAmqp(connection: RabbitConnection, name: string): Promise<amqp.ChannelModel> {
  try {
    return await amqp.connect(connection.url, {
      ...connection.socketOptions,
      timeout: 10_000,
      clientProperties: { connection_name: name },
    });
  } catch (err) {
    throw amqpConnectError(err, connection);
  }
}

/** env delivery: the AMQP handshake includes the login: reach and credentials at once. */
async function checkRabbitReach(
  queue: string,
  connection: RabbitConnection,
  timeoutMs: number,
): Promise<void> {
  let model: amqp.ChannelModel;
  try {
    model = await within(
      timeoutMs,
      `RabbitMQ ${connection.display}`,
      amqp.connect(connection.url, {
        ...connection.socketOptions,
        timeout: timeoutMs,
        clientProperties: { connection_name: `queue-split-sidecar preflight ${queue}` },
      }),
      (late) => void late.close().catch(() => undefined),
    );
  } catch (err) {
    throw amqpConnectError(err, connection);
  }
  await model.close().catch(() => undefined);
}

/** Publishes a test message into the source queue, persistent, and waits for its confirm. */
async function publishAmqpTestMessage(
  connection: RabbitConnection,
  message: OutgoingTestMessage,
): Promise<void> {
  const model = await connectAmqp(connection, `queue-split-vscode test message`);
  try {
    const channel = await model.createConfirmChannel();
    channel.sendToQueue(message.source, message.body, {
      persistent: true,
      messageId: message.messageId,
      timestamp: Math.floor(Date.now() / 1000),
      headers: { ...message.headers },
      ...(message.contentType !== undefined ? { contentType: message.contentType } : {}),
    });
    await channel.waitForConfirms();
  } finally {
    await model.close().catch(() => undefined);
  }
}

export const rabbitLaptop: LaptopProvider<'rabbitmq', RabbitConnection> = {
  provider: 'rabbitmq',
  connection: rabbitConnection,
  checkReach: (queue, connection, _map, timeoutMs) => checkRabbitReach(queue, connection, timeoutMs),
  // The process dials the URL it is given; nothing in it names another address.
  envWarning: () => undefined,
  publishTestMessage: (connection, message) => publishAmqpTestMessage(connection, message),
};
