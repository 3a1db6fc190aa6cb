// The sidecar's SQS side against the environment's SQS (ElasticMQ): the broker-transport consumer
// (`--transport broker`) deletes what was delivered, releases what the developer rejected and what
// a stop interrupted; relay republishes into a local queue with every attribute's type, the trace
// header, and on a FIFO destination the message's group.
import assert from 'node:assert/strict';
import { PassThrough } from 'node:stream';
import { after, test } from 'node:test';
import { SendMessageCommand } from '@aws-sdk/client-sqs';
import { loadServices } from '../support/services';
import { sqsShadowMessage } from '../../core/providers/sqs/message';
import type { ShadowMessage } from '../../core/shadowMessage';
import type { SqsConnection } from '../../laptop/sqs';
import { SqsShadowConsumer } from '../../sidecar/consumers/sqs';
import type { Delivery } from '../../sidecar/consumers/types';
import { Reporter } from '../../sidecar/output';
import { sqsSidecar } from '../../sidecar/providers/sqs';
import { pollUntil } from '../support/poll';
import { SqsQueues, sqsClient } from '../support/sqs';

const client = sqsClient();
const queues = new SqsQueues(client);
after(async () => {
  await queues.deleteAll();
  client.destroy();
});

const reporter = () => new Reporter(new PassThrough(), new PassThrough());
const nameOf = (url: string) => url.slice(url.lastIndexOf('/') + 1);

function connection(sourceUrl: string): SqsConnection {
  const { endpoint, region } = loadServices().sqs;
  return {
    provider: 'sqs',
    sourceUrl,
    region,
    endpoint,
    credentials: { accessKeyId: 'queuesplit-test', secretAccessKey: 'queuesplit-test' },
    display: `sqs ${endpoint}`,
  };
}

const send = (url: string, id: string) =>
  client.send(
    new SendMessageCommand({
      QueueUrl: url,
      MessageBody: `body ${id}`,
      MessageAttributes: { 'x-id': { DataType: 'String', StringValue: id } },
    }),
  );

test('broker transport: delivered is deleted, rejected and interrupted are released', async () => {
  const source = await queues.create('sc-src');
  const shadow = await queues.create('sc-ses', { VisibilityTimeout: '30' });
  for (const id of ['ok', 'no', 'late']) await send(shadow, id);
  const seen: string[] = [];
  const settled: string[] = [];
  let release: () => void = () => undefined;
  const consumer = new SqsShadowConsumer({
    queue: 'orders',
    shadowQueue: nameOf(shadow),
    connection: connection(source),
    reporter: reporter(),
    onFatal: (err) => assert.fail(err.message),
  });
  await consumer.start({
    deliver: (m: ShadowMessage): Promise<Delivery> => {
      const id = m.filterHeaders.get('x-id') ?? '';
      seen.push(id);
      if (id === 'ok') return Promise.resolve({ settle: 'ack', attempts: 1 });
      if (id === 'no' && seen.filter((x) => x === 'no').length === 1)
        return Promise.resolve({ settle: 'reject', attempts: 3, rejectedBy: 'request' });
      // Held until the stop: the delivery rejects, as on a sidecar shutdown.
      return new Promise((_, reject) => (release = () => reject(new Error('stopping'))));
    },
    settled: (m, d) => settled.push(`${m.filterHeaders.get('x-id')}:${d.settle}`),
  });
  await pollUntil(
    'a delivery is held',
    async () => seen.length,
    (n) => n >= 3,
    20_000,
  );
  const stopping = consumer.stop();
  release();
  await stopping;
  assert.ok(settled.includes('ok:ack') && settled.includes('no:reject'), settled.join());
  const left = await queues.receive(shadow, { waitSeconds: 2 });
  const ids = left.map((m) => m.MessageAttributes?.['x-id']?.StringValue).sort();
  assert.ok(!ids.includes('ok'), 'the delivered one was deleted');
  assert.equal(left.length, 2, `the rejected and the interrupted are visible again: ${ids.join()}`);
});

test('relay: into a local queue with the attribute types and the trace header; FIFO keeps the group', async () => {
  const local = await queues.create('sc-local');
  const localFifo = await queues.create('sc-localf', { FifoQueue: 'true' });
  const message = sqsShadowMessage(
    'orders',
    {
      MessageId: 'm-1',
      Body: 'héllo',
      Attributes: { AWSTraceHeader: 'Root=1-5759e988-bd862e3fe1be46a994272793', MessageGroupId: 'g-7' },
      MessageAttributes: {
        n: { DataType: 'Number', StringValue: '1.50' },
        u: { DataType: 'String.uuid', StringValue: '4f1c' },
        b: { DataType: 'Binary', BinaryValue: new Uint8Array([0, 255]) },
      },
    },
    'auto',
  );
  const { endpoint } = loadServices().sqs;
  sqsSidecar.relay.check(endpoint);
  const relay = sqsSidecar.relay.publisher(endpoint, reporter());
  const plain = { queue: 'orders', provider: 'sqs' as const, name: nameOf(local) };
  const fifo = { queue: 'orders-fifo', provider: 'sqs' as const, name: nameOf(localFifo) };
  await relay.open([plain, fifo]);
  assert.deepEqual(await relay.publish(plain, message), { ok: true });
  assert.deepEqual(await relay.publish(fifo, message), { ok: true });
  for (const url of [local, localFifo]) {
    const [got] = await queues.receive(url, { waitSeconds: 2 });
    assert.ok(got, url);
    assert.equal(got.Body, 'héllo');
    assert.deepEqual(got.MessageAttributes?.n, { DataType: 'Number', StringValue: '1.50' });
    assert.equal(got.MessageAttributes?.u?.DataType, 'String.uuid');
    assert.deepEqual([...(got.MessageAttributes?.b?.BinaryValue ?? [])], [0, 255]);
    assert.equal(got.Attributes?.AWSTraceHeader, 'Root=1-5759e988-bd862e3fe1be46a994272793');
    if (url === localFifo) assert.equal(got.Attributes?.MessageGroupId, 'g-7');
  }
  await assert.rejects(
    relay.open([{ queue: 'x', provider: 'sqs', name: 'qs-no-such-local-queue' }]),
    /does not exist/,
  );
  await relay.close();
});
