// Amazon SQS to the sidecar (sidecar/providers/contract.ts): the session shadow's consumer, and
// the relay into a local SQS-compatible endpoint (ElasticMQ, LocalStack) — the body as received,
// every message attribute with its data type, AWSTraceHeader, and on a FIFO destination the
// message group. Not kept: the message id, timestamps and receive count (SQS sets its own, as for
// every copy: docs/providers/sqs.md "What a copy carries").
// The relay value is the endpoint URL; keys for an endpoint that checks them go in its user
// info (http://KEY:SECRET@127.0.0.1:4566), the region in `?region=` (us-east-1 by default).
import {
  GetQueueUrlCommand,
  SendMessageCommand,
  SQSClient,
  type MessageAttributeValue,
  type MessageSystemAttributeValue,
} from '@aws-sdk/client-sqs';
import type { ShadowMessage } from '../../core/shadowMessage';
import { SidecarError, errorText, usageError } from '../../laptop/errors';
import { redactUrl } from '../../laptop/redact';
import { SqsShadowConsumer } from '../consumers/sqs';
import type { AttemptResult } from '../delivery/retry';
import type { RelayDestination, RelayPublisher, SidecarProvider } from './contract';

const FLAG = '--relay-sqs-endpoint';
const SETTING = 'queueSplit.delivery.relaySqsEndpoint';

interface LocalEndpoint {
  endpoint: string;
  region: string;
  credentials: { accessKeyId: string; secretAccessKey: string };
}

function parseEndpoint(text: string): LocalEndpoint {
  const url = new URL(text);
  const region = url.searchParams.get('region') || 'us-east-1';
  // Local SQS-compatible servers accept any keys; the SDK still signs with some.
  const credentials =
    url.username !== ''
      ? { accessKeyId: decodeURIComponent(url.username), secretAccessKey: decodeURIComponent(url.password) }
      : { accessKeyId: 'queue-split-local', secretAccessKey: 'queue-split-local' };
  return { endpoint: `${url.protocol}//${url.host}`, region, credentials };
}

/** The attributes a relayed copy carries: every attribute with its type, else the headers. */
function attributesOf(message: ShadowMessage): Record<string, MessageAttributeValue> {
  const out: Record<string, MessageAttributeValue> = {};
  if (message.broker.provider === 'sqs') {
    for (const [name, a] of Object.entries(message.broker.attributes))
      out[name] = {
        DataType: a.dataType,
        ...(a.stringValue !== undefined ? { StringValue: a.stringValue } : {}),
        ...(a.binaryValue !== undefined ? { BinaryValue: a.binaryValue } : {}),
      };
    return out;
  }
  for (const [name, value] of message.filterHeaders)
    if (value !== '') out[name] = { DataType: 'String', StringValue: value };
  return out;
}

/** A FIFO deduplication id from the message id: at most 128 of SQS's allowed characters. */
const dedupId = (id: string) =>
  id.replace(/[^A-Za-z0-9!"#$%&'()*+,\-./:;<=>?@[\\\]^_`{|}~]/g, '_').slice(0, 128) || 'qs';

class SqsRelay implements RelayPublisher {
  private client: SQSClient | undefined;
  private readonly urls = new Map<string, string>();
  readonly subject: string;

  constructor(private readonly text: string | undefined) {
    this.subject = `The local SQS endpoint (${text ? redactUrl(text) : '-'})`;
  }

  describe(d: RelayDestination): string {
    return `local SQS queue ${d.name} (${redactUrl(this.text ?? '')})`;
  }

  private clientOf(): SQSClient {
    if (!this.client) {
      const local = parseEndpoint(this.text ?? '');
      this.client = new SQSClient(local);
    }
    return this.client;
  }

  async open(destinations: readonly RelayDestination[]): Promise<void> {
    const client = this.clientOf();
    for (const d of destinations) {
      try {
        const answer = await client.send(new GetQueueUrlCommand({ QueueName: d.name }));
        if (answer.QueueUrl) this.urls.set(d.queue, answer.QueueUrl);
      } catch (err) {
        const name = String((err as { name?: unknown })?.name);
        if (/QueueDoesNotExist|NonExistentQueue/.test(name))
          throw new SidecarError(
            'relay-destination-missing',
            `The local SQS queue ${d.name} (relay destination of queue "${d.queue}") does not exist on ${redactUrl(this.text ?? '')}.`,
            `Create it (or start your service once so it does), or choose another in the queueSplit.delivery.relayTo setting (sidecar: --relay-to ${d.queue}=<queue>).`,
          );
        throw new SidecarError(
          'broker-unreachable',
          `Cannot reach the local SQS endpoint ${redactUrl(this.text ?? '')}: ${name !== 'undefined' ? name : errorText(err)}.`,
          `Start your local SQS-compatible server (ElasticMQ, LocalStack), or fix the ${SETTING} setting (sidecar: ${FLAG}).`,
          FLAG,
        );
      }
    }
  }

  async publish(destination: RelayDestination, message: ShadowMessage): Promise<AttemptResult> {
    try {
      let url = this.urls.get(destination.queue);
      if (url === undefined) {
        await this.open([destination]);
        url = this.urls.get(destination.queue);
      }
      if (url === undefined) return { ok: false, reason: `no URL for local queue ${destination.name}` };
      const received = message.broker.provider === 'sqs' ? message.broker.system : undefined;
      const trace = received?.AWSTraceHeader;
      const system: Record<string, MessageSystemAttributeValue> | undefined = trace
        ? { AWSTraceHeader: { DataType: 'String', StringValue: trace } }
        : undefined;
      const fifo = destination.name.endsWith('.fifo');
      await this.clientOf().send(
        new SendMessageCommand({
          QueueUrl: url,
          MessageBody: message.body.toString('utf8'),
          MessageAttributes: attributesOf(message),
          ...(system ? { MessageSystemAttributes: system } : {}),
          ...(fifo
            ? {
                MessageGroupId: received?.MessageGroupId ?? destination.queue,
                MessageDeduplicationId: dedupId(message.id),
              }
            : {}),
        }),
      );
      return { ok: true };
    } catch (err) {
      return { ok: false, reason: err instanceof SidecarError ? err.message : errorText(err) };
    }
  }

  close(): Promise<void> {
    this.client?.destroy();
    return Promise.resolve();
  }
}

export const sqsSidecar: SidecarProvider<'sqs'> = {
  provider: 'sqs',
  consumer: ({ queue, shadow, connection, reporter, onFatal }) =>
    new SqsShadowConsumer({ queue, shadowQueue: shadow.source, connection, reporter, onFatal }),
  relay: {
    flag: FLAG,
    arg: '<url>',
    help: 'relay: local SQS-compatible endpoint (ElasticMQ, LocalStack) to republish SQS queues into',
    example: 'http://127.0.0.1:9324',
    check: (text) => {
      let ok = false;
      try {
        const url = new URL(text);
        ok =
          (url.protocol === 'http:' || url.protocol === 'https:') && url.pathname.replace(/\/+$/, '') === '';
      } catch {
        ok = false;
      }
      if (!ok)
        throw usageError(
          FLAG,
          'is not an http:// or https:// endpoint URL without a path.',
          `e.g. ${FLAG} http://127.0.0.1:9324`,
        );
    },
    redact: (text, redactor) => redactor.addUrl(text),
    publisher: (text) => new SqsRelay(text),
  },
  // Its attributes are the carried headers; it adds nothing of its own.
  cloudEvents: { headers: () => [] },
};
