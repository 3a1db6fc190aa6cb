// The SQS provider harness, for a standard or a FIFO source queue, against the environment's ElasticMQ
// (test/env/elasticmq.ts). It talks to SQS with its own AWS SDK client, never through engine
// code, so the suite checks the engine rather than agreeing with it.
//
// Mapping of the provider-neutral notions:
// - "acknowledge" = delete; "hold unacknowledged" = received with a long visibility timeout and
//   not deleted; a killed consumer's held messages are released (visibility 0), as SQS does
//   with them once their visibility timeout passes.
// - The test id travels in the `x-message-id` String attribute, the content type in
//   `content-type`, the timestamp (ms) in the Number attribute `timestamp`; headers are String
//   attributes and NON_STRING a Binary one.
// - SQS bodies are text of XML characters, at least one: a body SQS cannot hold (empty, binary,
//   not UTF-8) is carried as `base64:<base64>` text with the `x-body-encoding: base64` attribute, and read
//   back decoded. The engine copies body text byte for byte either way.
// - SQS refuses an empty String attribute value: a header whose value is '' is not sent (the
//   message has no such attribute, which no filter matches either).
// - `backlog` = visible + in flight + delayed, exact on ElasticMQ.
// - `preempt` cuts the engine's client off the network (every request fails as a network error
//   would) until its lock message's visibility has run out twice, then lets it reconnect.
import {
  ChangeMessageVisibilityCommand,
  CreateQueueCommand,
  DeleteMessageCommand,
  DeleteQueueCommand,
  GetQueueAttributesCommand,
  GetQueueUrlCommand,
  ReceiveMessageCommand,
  SendMessageCommand,
  SQSClient,
  type Message,
  type MessageAttributeValue,
} from '@aws-sdk/client-sqs';
import type { Engine, RouteSpec } from '../../../agent/engine/contract';
import type { SqsEngineConfig, SqsTiming } from '../../../agent/sqs/config';
import { SqsEngine } from '../../../agent/sqs/engine';
import { pollUntil, sleep } from '../../support/poll';
import { loadServices, uniqueName } from '../../support/services';
import {
  NON_STRING,
  type ChildSpec,
  type ConsumerHandle,
  type EngineOptions,
  type Observed,
  type ProviderHarness,
  type TestMessage,
  type Topology,
} from '../harness';

/** ElasticMQ's account: queue URLs are `<endpoint>/000000000000/<name>`. */
const ACCOUNT = '000000000000';
export const ID_ATTRIBUTE = 'x-message-id';
const CONTENT_TYPE = 'content-type';
const TIMESTAMP = 'timestamp';
const BODY_ENCODING = 'x-body-encoding';
/** Before the base64 of an encoded body, so an empty one is still a body SQS holds. */
const ENCODED_PREFIX = 'base64:';
/** Short so proofs (a window longer than it) take seconds; held messages use HOLD_SECONDS. */
export const SOURCE_VISIBILITY_SECONDS = 2;
const HOLD_SECONDS = 120;
/** A reader is done once every expected id arrived and nothing came for this long. */
const QUIET_MS = 1_500;

export const sqsTestTiming: Partial<SqsTiming> = {
  stepTimeoutMs: 20_000,
  countsLagMs: 300,
  pollIntervalMs: 200,
  pumpVisibilitySeconds: 3,
  receiveWaitSeconds: 1,
  lockVisibilitySeconds: 4,
  retryInitialMs: 100,
  retryMaxMs: 1_000,
};

export function sqsQueueUrl(name: string): string {
  return `${loadServices().sqs.endpoint}/${ACCOUNT}/${name}`;
}

export interface SqsTopology extends Topology {
  readonly lockQueue: string;
  readonly activationId: string;
  readonly names: Set<string>;
}

export interface SqsHarness extends ProviderHarness {
  /** The harness's own client (never an engine's). */
  readonly client: SQSClient;
  /** The engine configuration `engine` builds for a topology. */
  config(t: Topology, options?: EngineOptions): SqsEngineConfig;
}

/** Characters an SQS body may hold (#x9 #xA #xD #x20-#xD7FF #xE000-#xFFFD #x10000-#x10FFFF). */
// eslint-disable-next-line no-control-regex -- tab, LF and CR are exactly the control characters SQS allows
const SQS_TEXT = /^[\u0009\u000A\u000D\u0020-\uD7FF\uE000-\uFFFD\u{10000}-\u{10FFFF}]+$/u;

function bodyOf(m: TestMessage): { text: string; encoded: boolean } {
  const bytes = m.body ?? Buffer.from(`body of ${m.id}`);
  const text = new TextDecoder('utf-8', { fatal: false }).decode(bytes);
  const exact = Buffer.from(text, 'utf8').equals(bytes);
  return exact && SQS_TEXT.test(text)
    ? { text, encoded: false }
    : { text: `${ENCODED_PREFIX}${bytes.toString('base64')}`, encoded: true };
}

function attributesOf(m: TestMessage, encoded: boolean): Record<string, MessageAttributeValue> {
  const typed = ((m.extra?.headers ?? {}) as Record<string, TypedValue>) ?? {};
  const out: Record<string, MessageAttributeValue> = {};
  for (const [k, v] of Object.entries(typed)) {
    out[k] =
      'BinaryValue' in v
        ? { DataType: v.DataType, BinaryValue: v.BinaryValue }
        : { DataType: v.DataType, StringValue: v.StringValue };
  }
  for (const [k, v] of Object.entries(m.headers ?? {})) {
    if (v === NON_STRING) out[k] = { DataType: 'Binary', BinaryValue: Buffer.from([0xff, 0xfe]) };
    else if (typeof v === 'string' && v !== '') out[k] = { DataType: 'String', StringValue: v };
  }
  out[ID_ATTRIBUTE] = { DataType: 'String', StringValue: m.id };
  if (m.contentType !== undefined) out[CONTENT_TYPE] = { DataType: 'String', StringValue: m.contentType };
  if (m.timestamp !== undefined) out[TIMESTAMP] = { DataType: 'Number', StringValue: String(m.timestamp) };
  if (encoded) out[BODY_ENCODING] = { DataType: 'String', StringValue: 'base64' };
  return out;
}

/** A typed attribute as the field scenario sends and reads it (String values read as text). */
type TypedValue =
  | { readonly DataType: string; readonly StringValue: string }
  | { readonly DataType: string; readonly BinaryValue: Buffer };

function observe(m: Message): Observed {
  const attrs = m.MessageAttributes ?? {};
  const headers: Record<string, unknown> = {};
  for (const [k, a] of Object.entries(attrs)) {
    if (a.DataType === 'String') headers[k] = a.StringValue;
    else if (a.BinaryValue !== undefined)
      headers[k] = { DataType: a.DataType, BinaryValue: Buffer.from(a.BinaryValue) };
    else headers[k] = { DataType: a.DataType, StringValue: a.StringValue };
  }
  const encoded = attrs[BODY_ENCODING]?.StringValue === 'base64';
  const text = m.Body ?? '';
  const body = encoded ? Buffer.from(text.slice(ENCODED_PREFIX.length), 'base64') : Buffer.from(text, 'utf8');
  const trace = m.Attributes?.AWSTraceHeader;
  return {
    id: String(attrs[ID_ATTRIBUTE]?.StringValue),
    body,
    headers,
    contentType: attrs[CONTENT_TYPE]?.StringValue,
    timestamp: attrs[TIMESTAMP]?.StringValue === undefined ? undefined : Number(attrs[TIMESTAMP].StringValue),
    extra: trace === undefined ? {} : { AWSTraceHeader: trace },
  };
}

const RECEIVE = {
  MessageAttributeNames: ['All'],
  MessageSystemAttributeNames: ['AWSTraceHeader' as const],
};

export interface SqsHarnessOptions {
  /** A FIFO source (and so FIFO shadows). Each test message is its own message group unless
   * its `extra.MessageGroupId` names one: the neutral scenarios hold messages unacknowledged,
   * which on FIFO holds back the rest of a group. Its deduplication id is its test id. */
  readonly fifo?: boolean;
}

export function sqsHarness(options: SqsHarnessOptions = {}): SqsHarness {
  const fifo = options.fifo === true;
  const suffix = fifo ? '.fifo' : '';
  const services = loadServices();
  const { endpoint, region } = services.sqs;
  const credentials = { accessKeyId: 'queuesplit-test', secretAccessKey: 'queuesplit-test' };
  const client = new SQSClient({ endpoint, region, credentials });
  /** Engine clients whose network the test has cut. */
  const cut = new Set<SQSClient>();
  const engineClients = new WeakMap<Engine, SQSClient>();
  const made: SQSClient[] = [];
  const timers = new Set<NodeJS.Timeout>();

  const engineClient = (): SQSClient => {
    const c = new SQSClient({ endpoint, region, credentials, maxAttempts: 1 });
    c.middlewareStack.add(
      (next) => async (args) => {
        if (cut.has(c))
          throw Object.assign(new Error('connect ECONNREFUSED (network cut by the test)'), {
            name: 'NetworkingError',
          });
        return next(args);
      },
      { step: 'finalizeRequest', name: 'testNetworkCut' },
    );
    made.push(c);
    return c;
  };

  const createQueue = async (name: string) => {
    await client.send(
      new CreateQueueCommand({
        QueueName: name,
        Attributes: {
          VisibilityTimeout: String(SOURCE_VISIBILITY_SECONDS),
          ...(name.endsWith('.fifo') ? { FifoQueue: 'true' } : {}),
        },
      }),
    );
  };

  const asTopology = (t: Topology): SqsTopology => t as SqsTopology;

  const config = (t: SqsTopology, options: EngineOptions = {}): SqsEngineConfig => ({
    activationId: t.activationId,
    epoch: 1,
    region,
    endpoint,
    credentials,
    sourceQueueUrl: sqsQueueUrl(t.source),
    appShadow: t.appShadow,
    lockQueue: t.lockQueue,
    ...(options.prefetch === undefined ? {} : { prefetch: options.prefetch }),
    timing: {
      ...sqsTestTiming,
      ...(options.stepTimeoutMs === undefined ? {} : { stepTimeoutMs: options.stepTimeoutMs }),
    },
  });

  const publish = async (queue: string, messages: readonly TestMessage[]) => {
    for (const m of messages) {
      const { text, encoded } = bodyOf(m);
      const trace = m.extra?.AWSTraceHeader;
      const group = m.extra?.MessageGroupId;
      await client.send(
        new SendMessageCommand({
          QueueUrl: sqsQueueUrl(queue),
          MessageBody: text,
          MessageAttributes: attributesOf(m, encoded),
          ...(queue.endsWith('.fifo')
            ? { MessageGroupId: typeof group === 'string' ? group : m.id, MessageDeduplicationId: m.id }
            : {}),
          ...(typeof trace === 'string'
            ? { MessageSystemAttributes: { AWSTraceHeader: { DataType: 'String', StringValue: trace } } }
            : {}),
        }),
      );
    }
  };

  const receive = async (queue: string, max: number, visibility?: number, wait = 1) =>
    (
      await client.send(
        new ReceiveMessageCommand({
          QueueUrl: sqsQueueUrl(queue),
          MaxNumberOfMessages: Math.max(1, Math.min(10, max)),
          WaitTimeSeconds: wait,
          ...(visibility === undefined ? {} : { VisibilityTimeout: visibility }),
          ...RECEIVE,
        }),
      )
    ).Messages ?? [];

  const remove = (queue: string, m: Message) =>
    client.send(new DeleteMessageCommand({ QueueUrl: sqsQueueUrl(queue), ReceiptHandle: m.ReceiptHandle }));
  const release = (queue: string, m: Message) =>
    client
      .send(
        new ChangeMessageVisibilityCommand({
          QueueUrl: sqsQueueUrl(queue),
          ReceiptHandle: m.ReceiptHandle,
          VisibilityTimeout: 0,
        }),
      )
      .then(
        () => undefined,
        () => undefined,
      );

  return {
    client,
    config: (t, options) => config(asTopology(t), options),
    name: fifo ? 'sqs-fifo' : 'sqs-standard',
    provider: 'sqs',
    cleanupRetainsShadows: false,
    countsConsumers: false,
    richProperties: {
      AWSTraceHeader: 'Root=1-5759e988-bd862e3fe1be46a994272793;Parent=53995c3f42cd8ad8;Sampled=1',
      headers: {
        'x-amount': { DataType: 'Number', StringValue: '1.50' },
        'x-blob': { DataType: 'Binary', BinaryValue: Buffer.from([0, 1, 254, 255]) },
        'x-uuid': { DataType: 'String.uuid', StringValue: '0b5c1c4e-63a1-4b8f-9f3a-2f4c0d9d8e11' },
      },
    },
    notPreserved: [
      'MessageId: SQS gives every copy its own (the test id travels as an attribute)',
      'SentTimestamp, ApproximateFirstReceiveTimestamp: the copy’s own (when it was sent to and first received from the shadow)',
      'ApproximateReceiveCount: restarts at each hop (the shadow counts the application’s receives toward the same redrive policy afresh)',
      'SenderId: the queue-agent’s identity sent the copy',
      "delay: the source's DelaySeconds (or a message timer) is applied once, at the source; shadows do not delay again",
      ...(fifo
        ? [
            'SequenceNumber: the shadow’s own',
            'MessageDeduplicationId: the copy’s is the engine’s, qs-<source MessageId>-<receive count> (unique per source message and hold; MessageGroupId is kept)',
          ]
        : []),
    ],

    async topology() {
      const label = uniqueName(fifo ? 'cf-sqsf' : 'cf-sqs');
      const names = new Set<string>();
      const name = (role: string, kind = suffix) => {
        const n = `${label}-${role}${kind}`;
        names.add(n);
        return n;
      };
      const source = name('source');
      await createQueue(source);
      const t: SqsTopology = {
        label,
        source,
        appShadow: name('app'),
        lockQueue: name('lock', ''),
        activationId: label,
        names,
        route: (routeId, filter) => ({ routeId, filter, shadow: name(`r-${routeId}`) }),
      };
      return t;
    },

    engine(t, options = {}) {
      const c = engineClient();
      const engine = new SqsEngine(config(asTopology(t), options), {
        client: c,
        ...(options.logger ? { logger: options.logger } : {}),
        ...(options.hooks ? { hooks: options.hooks } : {}),
      });
      engineClients.set(engine, c);
      return engine;
    },

    childSpec(t, generation, routes: readonly RouteSpec[], options = {}): ChildSpec {
      return { provider: 'sqs', config: config(asTopology(t), options), generation, routes };
    },

    produce: (t, messages) => publish(t.source, messages),
    inject: (destination, messages) => publish(destination, messages),

    async read(destination, expectIds, timeoutMs = 20_000) {
      const seen: Observed[] = [];
      let lastAt = Date.now();
      const want = new Set(expectIds);
      const deadline = Date.now() + timeoutMs;
      while (Date.now() < deadline) {
        const missing = [...want].some((id) => !seen.some((o) => o.id === id));
        if (!missing && Date.now() - lastAt > QUIET_MS) break;
        const got = await receive(destination, 10, undefined, 1);
        for (const m of got) {
          seen.push(observe(m));
          lastAt = Date.now();
          await remove(destination, m);
        }
      }
      return seen;
    },

    async consume(destination, { prefetch, ackFirst }) {
      const received: string[] = [];
      const acked: string[] = [];
      const held: Message[] = [];
      let ackEverything = false;
      let stopped = false;
      const ack = async (m: Message) => {
        await remove(destination, m);
        acked.push(observe(m).id);
      };
      const loop = (async () => {
        while (!stopped) {
          const room = ackEverything ? 10 : prefetch - held.length;
          if (room <= 0) {
            await sleep(100);
            continue;
          }
          const got = await receive(destination, room, HOLD_SECONDS, 1).catch(async () => {
            await sleep(500);
            return [];
          });
          for (const m of got) {
            received.push(observe(m).id);
            if (ackEverything || acked.length < ackFirst) await ack(m);
            else held.push(m);
          }
        }
      })();
      const handle: ConsumerHandle = {
        received,
        acked,
        ackAll() {
          ackEverything = true;
          for (const m of held.splice(0)) void ack(m);
        },
        async kill() {
          stopped = true;
          await loop;
          for (const m of held.splice(0)) await release(destination, m);
        },
      };
      return handle;
    },

    async holdOne(destination) {
      const [m] = await receive(destination, 1, HOLD_SECONDS, 2);
      if (!m) throw new Error(`holdOne: ${destination} is empty`);
      return { id: observe(m).id, release: () => release(destination, m) };
    },

    async backlog(name) {
      const { Attributes: a = {} } = await client.send(
        new GetQueueAttributesCommand({
          QueueUrl: sqsQueueUrl(name),
          AttributeNames: [
            'ApproximateNumberOfMessages',
            'ApproximateNumberOfMessagesNotVisible',
            'ApproximateNumberOfMessagesDelayed',
          ],
        }),
      );
      return (
        Number(a.ApproximateNumberOfMessages ?? 0) +
        Number(a.ApproximateNumberOfMessagesNotVisible ?? 0) +
        Number(a.ApproximateNumberOfMessagesDelayed ?? 0)
      );
    },

    async exists(name) {
      try {
        await client.send(new GetQueueUrlCommand({ QueueName: name }));
        return true;
      } catch (err) {
        const n = (err as { name?: string }).name ?? '';
        if (n === 'QueueDoesNotExist' || n.endsWith('NonExistentQueue')) return false;
        throw err;
      }
    },

    async deleteBehindEngine(name) {
      await client.send(new DeleteQueueCommand({ QueueUrl: sqsQueueUrl(name) }));
    },

    async recreate(name) {
      await createQueue(name);
    },

    async preempt(engine) {
      const c = engineClients.get(engine);
      if (!c) throw new Error('preempt: this engine was not made by this harness');
      cut.add(c);
      await pollUntil(
        `${engine.provider} engine noticed the loss`,
        async () => engine.status().connected,
        (up) => !up,
        10_000,
      );
      const lockSeconds = sqsTestTiming.lockVisibilitySeconds ?? 4;
      const timer = setTimeout(
        () => {
          timers.delete(timer);
          cut.delete(c);
        },
        2 * lockSeconds * 1000,
      );
      timers.add(timer);
    },

    async dispose(t) {
      for (const name of asTopology(t).names) {
        await client.send(new DeleteQueueCommand({ QueueUrl: sqsQueueUrl(name) })).catch(() => undefined);
      }
    },

    async close() {
      for (const timer of timers) clearTimeout(timer);
      for (const c of made) c.destroy();
      client.destroy();
    },
  };
}
