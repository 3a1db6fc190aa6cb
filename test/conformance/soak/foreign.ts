// The soak scenario's producers: clients this project did not write, one per provider, so the
// engine sees records as real producers send them. Kafka: the Apache Kafka Java client
// (`../kafka/foreign.ts`). RabbitMQ: the management HTTP API's publish, which the broker turns
// into an AMQP message itself (no amqplib encoding on the way in).
import { ID_HEADER } from '../kafka/messages';
import { produceWithJava, type ForeignHeader } from '../kafka/foreign';
import { PARTITIONS } from '../kafka/harness';
import type { ProviderHarness, Topology } from '../harness';
import { loadServices } from '../../support/services';
import { boto3Send, type Boto3Message } from '../../support/boto3Sqs';
import { ID_ATTRIBUTE, sqsQueueUrl } from '../sqs/harness';

/** One soak record, described so each provider's foreign client can send it. */
export interface SoakRecord {
  readonly id: string;
  /** Kafka: picks the partition, as a keyed producer would; RabbitMQ: unused. */
  readonly lane: number;
  /** Kafka record key (duplicates on purpose); RabbitMQ: sent as the correlation id. */
  readonly key: string | null;
  /** `null`: a Kafka tombstone / an empty AMQP body. */
  readonly body: string | Buffer | null;
  /** In order; a name may repeat (Kafka) and a value may be null or raw bytes. */
  readonly headers: readonly ForeignHeader[];
  /** RabbitMQ: a `CC` header naming the source queue (sender-selected distribution, as a
   * producer copying to an audit queue would send); a copy that kept it would re-enter the
   * source. Kafka has no such header semantics and ignores it. */
  readonly ccSource: boolean;
}

/** What a provider's foreign client can carry; the scenario generates only that. */
export interface ForeignCaps {
  /** `CC` headers (an AMQP array value). */
  readonly ccHeaders: boolean;
  /** Raw (non-UTF-8) bodies. */
  readonly binaryBodies: boolean;
  /** Header values that are raw bytes or null, and repeated header names. */
  readonly rawHeaders: boolean;
}

export interface ForeignProducer {
  readonly caps: ForeignCaps;
  send(t: Topology, records: readonly SoakRecord[]): Promise<void>;
}

export function foreignProducer(h: ProviderHarness): ForeignProducer {
  const services = loadServices();
  switch (h.provider) {
    case 'kafka':
      return {
        // The Java producer reads text lines: bodies are text, headers may be bytes or null.
        caps: { binaryBodies: false, rawHeaders: true, ccHeaders: false },
        send: async (t, records) =>
          produceWithJava(
            services.kafkaBrokers,
            t.source,
            records.map((r) => {
              if (Buffer.isBuffer(r.body)) throw new Error('soak: the Java producer sends text bodies only');
              return {
                partition: r.lane % PARTITIONS,
                key: r.key,
                value: r.body,
                headers: [...r.headers, [ID_HEADER, r.id]],
              };
            }),
          ),
      };
    case 'rabbitmq':
      return {
        // The management API takes headers as JSON: text and numbers, no bytes, no repeats.
        caps: { binaryBodies: true, rawHeaders: false, ccHeaders: true },
        send: async (t, records) => {
          for (const r of records) await publishViaManagement(services.rabbitManagementUrl, t.source, r);
        },
      };
    case 'sqs':
      return {
        // boto3 (SQS's query/XML protocol): text bodies and String attributes, no repeats.
        caps: { binaryBodies: false, rawHeaders: false, ccHeaders: false },
        send: async (t, records) => {
          const fifo = t.source.endsWith('.fifo');
          await boto3Send(
            sqsQueueUrl(t.source),
            // FIFO: the record key is the message group (keys repeat on purpose).
            records.map((r) => ({
              ...toSqsMessage(r),
              ...(fifo ? { group: r.key ?? r.id, dedup: r.id } : {}),
            })),
          );
        },
      };
    default:
      throw new Error(`soak: no foreign producer for provider ${h.provider}`);
  }
}

async function publishViaManagement(managementUrl: string, queue: string, r: SoakRecord): Promise<void> {
  const url = new URL(managementUrl);
  const auth = Buffer.from(`${decodeURIComponent(url.username)}:${decodeURIComponent(url.password)}`);
  const headers: Record<string, string | string[]> = r.ccSource ? { CC: [queue] } : {};
  for (const [name, value] of r.headers) {
    if (typeof value !== 'string') throw new Error(`soak: header ${name} is not text (management API)`);
    headers[name] = value;
  }
  const body = r.body === null ? Buffer.alloc(0) : Buffer.from(r.body);
  const res = await fetch(`${url.origin}/api/exchanges/%2F/amq.default/publish`, {
    method: 'POST',
    headers: { authorization: `Basic ${auth.toString('base64')}`, 'content-type': 'application/json' },
    body: JSON.stringify({
      routing_key: queue,
      properties: {
        message_id: r.id,
        delivery_mode: 2,
        headers,
        ...(r.key === null ? {} : { correlation_id: r.key }),
      },
      payload: body.toString('base64'),
      payload_encoding: 'base64',
    }),
    signal: AbortSignal.timeout(10_000),
  });
  const answer = (await res.json().catch(() => ({}))) as { routed?: boolean };
  // The management publish is not confirmed like an AMQP publish, but `routed` says the queue
  // took it: anything else is a test setup failure, not an engine loss.
  if (!res.ok || answer.routed !== true)
    throw new Error(
      `soak: management publish to ${queue} failed (HTTP ${res.status}, routed=${answer.routed})`,
    );
}

/** SQS holds at most 256 KiB of body and attributes together. */
const SQS_MAX_BODY = 250_000;

/** A soak record as an SQS producer can send it: SQS has no empty bodies (a null body is sent
 * as the record id), holds at most 256 KiB (a larger planned body is cut to it) and refuses an
 * empty String attribute (such a header is left out). The soak asserts where records go, not
 * their bodies. */
function toSqsMessage(r: SoakRecord): Boto3Message {
  const attributes: NonNullable<Boto3Message['attributes']> = {};
  for (const [name, value] of r.headers) {
    if (typeof value !== 'string') throw new Error(`soak: header ${name} is not text (SQS String attribute)`);
    if (value !== '') attributes[name] = { type: 'String', value };
  }
  attributes[ID_ATTRIBUTE] = { type: 'String', value: r.id };
  if (Buffer.isBuffer(r.body)) throw new Error('soak: the SQS producer sends text bodies only');
  const body = r.body === null || r.body === '' ? r.id : r.body.slice(0, SQS_MAX_BODY);
  return { body, attributes };
}
