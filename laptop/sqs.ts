// Amazon SQS from the laptop: the connection a queue's env describes (region, an endpoint
// override dialed through the address map, static keys or the SDK's default chain here), SQS
// failures made into actionable errors, the env-delivery reach check and the direct test message
// (laptop/providers/contract.ts). The sidecar's consumer and relay connect with it too.
import {
  GetQueueAttributesCommand,
  SendMessageCommand,
  SQSClient,
  type SQSClientConfig,
} from '@aws-sdk/client-sqs';
import type { ResolvedSqsQueue } from '../core/providers/sqs/resolve';
import { parseQueueUrl } from '../core/providers/sqs/queueUrl';
import { within } from './deadline';
import { SidecarError, errorText, systemCode } from './errors';
import type { LaptopProvider, QueueEnv } from './providers/contract';
import { redactUrl } from './redact';
import type { OutgoingTestMessage } from './testMessage';

export interface SqsConnection {
  provider: 'sqs';
  /** The source's queue URL, as the workload names it. */
  sourceUrl: string;
  region: string;
  /** The endpoint to dial (mapped), when the queue names an override. */
  endpoint?: string;
  /** How the session's filter view reads SNS envelopes (the declaration's; absent: auto). */
  snsEnvelope?: 'off';
  /** Static keys from the env; absent: the SDK's default chain on this machine. Secret. */
  credentials?: { accessKeyId: string; secretAccessKey: string; sessionToken?: string };
  display: string;
}

function sqsConnection(queue: ResolvedSqsQueue, env: QueueEnv): SqsConnection {
  const url = parseQueueUrl(queue.source, 'queueUrl');
  const urlRegion = url.ok ? url.value.region : undefined;
  const region = env.value('region') || urlRegion;
  if (region === undefined || region === '') {
    throw new SidecarError(
      'config-missing',
      `${env.envName('region')} of queue "${queue.name}" has no value, and the queue URL names no region.`,
      `Supply it locally with --env ${env.envName('region')}=us-east-1.`,
    );
  }
  const rawEndpoint = env.raw('endpoint');
  const mapped = rawEndpoint ? env.addressMap.mapUrl(rawEndpoint) : undefined;
  const accessKeyId = env.value('accessKeyId');
  const secretAccessKey = env.value('secretAccessKey');
  const sessionToken = env.value('sessionToken');
  for (const secret of [accessKeyId, secretAccessKey, sessionToken])
    if (secret !== undefined && secret !== '') env.redactor.add(secret);
  if ((accessKeyId === undefined) !== (secretAccessKey === undefined)) {
    const missing = accessKeyId === undefined ? 'accessKeyId' : 'secretAccessKey';
    throw new SidecarError(
      'config-missing',
      `${env.envName(missing)} of queue "${queue.name}" has no value, so the static SQS credentials are incomplete.`,
      `Supply it locally with --env ${env.envName(missing)}=<value>.`,
    );
  }
  const where = mapped
    ? `${redactUrl(rawEndpoint ?? '')}${mapped.mapped ? ` (dialed as ${redactUrl(mapped.url)})` : ''}`
    : `region ${region}`;
  return {
    provider: 'sqs',
    sourceUrl: queue.source,
    region,
    // The address map writes a URL back with a `/` path; the endpoint is the origin.
    ...(mapped ? { endpoint: mapped.url.replace(/\/$/, '') } : {}),
    ...(accessKeyId !== undefined && secretAccessKey !== undefined
      ? { credentials: { accessKeyId, secretAccessKey, ...(sessionToken ? { sessionToken } : {}) } }
      : {}),
    ...(queue.snsEnvelope ? { snsEnvelope: queue.snsEnvelope } : {}),
    display: `sqs ${where}`,
  };
}

/** The SDK client of a connection. */
export function sqsClient(connection: SqsConnection): SQSClient {
  const config: SQSClientConfig = {
    region: connection.region,
    ...(connection.endpoint ? { endpoint: connection.endpoint } : {}),
    ...(connection.credentials ? { credentials: connection.credentials } : {}),
  };
  return new SQSClient(config);
}

/** An SQS failure → an actionable SidecarError. */
export function sqsError(err: unknown, connection: SqsConnection, queueUrl: string): SidecarError {
  const code = systemCode(err);
  const name = (err as { name?: unknown } | undefined)?.name;
  const text = errorText(err);
  if (typeof name === 'string' && /QueueDoesNotExist|NonExistentQueue/.test(name)) {
    return new SidecarError(
      'broker-unreachable',
      `SQS (${connection.display}) has no queue ${redactUrl(queueUrl)}.`,
      'Check the queue URL env of the workload (or override it with --env).',
    );
  }
  if (
    typeof name === 'string' &&
    /AccessDenied|InvalidClientTokenId|SignatureDoesNotMatch|UnrecognizedClient|CredentialsProviderError|ExpiredToken/.test(
      name,
    )
  ) {
    return new SidecarError(
      'broker-auth',
      `SQS (${connection.display}) refused the credentials: ${name}.`,
      'Check the access keys (or override their env with --env), or the AWS profile this machine uses.',
    );
  }
  if (code === 'ENOTFOUND' || code === 'EAI_AGAIN' || code === 'ECONNREFUSED') {
    return new SidecarError(
      'broker-unreachable',
      `Cannot reach SQS (${connection.display}) from this machine (${code}).`,
      'Forward the endpoint port and map the address: --map-address <in-cluster-host:port>=127.0.0.1:<local port> (or --env <endpoint env>=<reachable URL>).',
    );
  }
  return new SidecarError(
    'broker-unreachable',
    `Cannot use SQS (${connection.display}): ${typeof name === 'string' ? name : (code ?? text)}.`,
    'Check that SQS is reachable from this machine; use --map-address for an in-cluster endpoint behind a port-forward.',
  );
}

/** env delivery: reading the source's attributes proves reach and credentials at once. */
async function checkSqsReach(queueUrl: string, connection: SqsConnection, timeoutMs: number): Promise<void> {
  const client = sqsClient(connection);
  try {
    await within(
      timeoutMs,
      `SQS ${connection.display}`,
      client.send(new GetQueueAttributesCommand({ QueueUrl: queueUrl, AttributeNames: ['QueueArn'] })),
      () => undefined,
    );
  } catch (err) {
    throw sqsError(err, connection, queueUrl);
  } finally {
    client.destroy();
  }
}

/** Sends a test message into the source queue. SQS bodies are text of at least one character. */
async function publishSqsTestMessage(connection: SqsConnection, message: OutgoingTestMessage): Promise<void> {
  const text = message.body.toString('utf8');
  if (text === '' || !Buffer.from(text, 'utf8').equals(message.body)) {
    throw new SidecarError(
      'usage',
      'An SQS message body is text of at least one character; this one is empty or not UTF-8.',
      'Send a non-empty text body.',
    );
  }
  const attributes: Record<string, { DataType: string; StringValue: string }> = {};
  // SQS refuses an empty attribute value: such a header is left out.
  for (const [name, value] of Object.entries(message.headers))
    if (value !== '') attributes[name] = { DataType: 'String', StringValue: value };
  attributes['message-id'] = { DataType: 'String', StringValue: message.messageId };
  if (message.contentType)
    attributes['content-type'] = { DataType: 'String', StringValue: message.contentType };
  const fifo = message.source
    .replace(/[?#].*$/, '')
    .replace(/\/+$/, '')
    .endsWith('.fifo');
  const client = sqsClient(connection);
  try {
    await client.send(
      new SendMessageCommand({
        QueueUrl: message.source,
        MessageBody: text,
        MessageAttributes: attributes,
        ...(fifo ? { MessageGroupId: message.messageId, MessageDeduplicationId: message.messageId } : {}),
      }),
    );
  } catch (err) {
    throw sqsError(err, connection, message.source);
  } finally {
    client.destroy();
  }
}

export const sqsLaptop: LaptopProvider<'sqs', SqsConnection> = {
  provider: 'sqs',
  connection: sqsConnection,
  // Reads the source's attributes: reach and credentials in one request.
  checkReach: (_queue, connection, _map, timeoutMs) =>
    checkSqsReach(connection.sourceUrl, connection, timeoutMs),
  // The process is given the same endpoint (mapped) and region; nothing else names an address.
  envWarning: () => undefined,
  publishTestMessage: (connection, message) => publishSqsTestMessage(connection, message),
};
