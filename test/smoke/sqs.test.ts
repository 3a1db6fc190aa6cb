// Proves the SQS of `npm run env:up` (ElasticMQ) has the behaviour an SQS split will rest on
// (docs/providers/sqs.md): what a copy can carry, visibility and receive counts, redrive, FIFO
// groups and deduplication. Where ElasticMQ and AWS differ, the test says so.
import assert from 'node:assert/strict';
import { after, before, test } from 'node:test';
import {
  ChangeMessageVisibilityCommand,
  DeleteMessageCommand,
  SendMessageCommand,
  type Message,
  type MessageAttributeValue,
} from '@aws-sdk/client-sqs';
import { boto3Receive, boto3Send, type Boto3Attribute } from '../support/boto3Sqs';
import { sleep } from '../support/poll';
import { SqsQueues, sqsClient } from '../support/sqs';

const client = sqsClient();
const queues = new SqsQueues(client);

before(async () => {
  await queues.attributes(await queues.create('smoke-sqs-reach'));
});
after(async () => {
  await queues.deleteAll();
  client.destroy();
});

const send = (
  url: string,
  body: string,
  extra: Partial<ConstructorParameters<typeof SendMessageCommand>[0]> = {},
) => client.send(new SendMessageCommand({ QueueUrl: url, MessageBody: body, ...extra }));

const only = (messages: Message[], what: string): Message => {
  assert.equal(messages.length, 1, `${what}: ${messages.length} messages`);
  return messages[0]!;
};

test('a copy carries what a consumer reads: the body as sent, attributes of every type (String, Number as written, Binary, custom types), AWSTraceHeader; message id, timestamps and receive count are its own', async () => {
  const source = await queues.create('smoke-sqs-src');
  const shadow = await queues.create('smoke-sqs-shadow');
  const attributes: Record<string, MessageAttributeValue> = {
    user: { DataType: 'String', StringValue: 'alice' },
    amount: { DataType: 'Number', StringValue: '1.50' },
    blob: { DataType: 'Binary', BinaryValue: new Uint8Array([0, 1, 127, 255]) },
    trace: { DataType: 'String.uuid', StringValue: '0b5c1c4e-63a1-4b8f-9f3a-2f4c0d9d8e11' },
    count: { DataType: 'Number.int', StringValue: '7' },
  };
  const body = '{"order":"ü-7","note":"tab\\tand emoji \u{1F600}"}';
  const traceHeader = 'Root=1-5759e988-bd862e3fe1be46a994272793;Sampled=1';
  await send(source, body, {
    MessageAttributes: attributes,
    MessageSystemAttributes: { AWSTraceHeader: { DataType: 'String', StringValue: traceHeader } },
  });
  const original = only(await queues.receive(source), 'the source');

  // The copy as a pump would send it: body, message attributes and the trace header as received.
  await send(shadow, original.Body!, {
    MessageAttributes: original.MessageAttributes,
    MessageSystemAttributes: {
      AWSTraceHeader: { DataType: 'String', StringValue: original.Attributes!.AWSTraceHeader },
    },
  });
  const copy = only(await queues.receive(shadow), 'the shadow');

  assert.equal(copy.Body, body);
  assert.equal(copy.MD5OfBody, original.MD5OfBody);
  assert.equal(copy.MD5OfMessageAttributes, original.MD5OfMessageAttributes);
  assert.deepEqual(copy.MessageAttributes, original.MessageAttributes);
  assert.deepEqual(
    copy.MessageAttributes!.amount,
    { DataType: 'Number', StringValue: '1.50' },
    'a Number keeps its text',
  );
  assert.deepEqual([...copy.MessageAttributes!.blob!.BinaryValue!], [0, 1, 127, 255]);
  assert.equal(copy.Attributes!.AWSTraceHeader, traceHeader);
  // What a copy cannot keep (the fidelity list): SQS assigns these to every message it stores.
  assert.notEqual(copy.MessageId, original.MessageId);
  assert.equal(copy.Attributes!.ApproximateReceiveCount, '1');
  assert.ok(Number(copy.Attributes!.SentTimestamp) >= Number(original.Attributes!.SentTimestamp));
});

test('a body SQS cannot hold is refused at the send (InvalidMessageContents), never stored altered', async () => {
  const url = await queues.create('smoke-sqs-invalid');
  await assert.rejects(send(url, 'nul \u0000 byte'), /InvalidMessageContents|invalid/i);
  assert.equal((await queues.attributes(url)).ApproximateNumberOfMessages, '0');
});

test('a received message neither deleted nor released comes back after its visibility timeout with its receive count one higher; ChangeMessageVisibility 0 releases it at once; the counts tell visible from in flight', async () => {
  const url = await queues.create('smoke-sqs-visibility', { VisibilityTimeout: '1' });
  await send(url, 'm');
  const first = only(await queues.receive(url), 'first receive');
  const inFlight = await queues.attributes(url);
  assert.equal(inFlight.ApproximateNumberOfMessages, '0');
  assert.equal(inFlight.ApproximateNumberOfMessagesNotVisible, '1');
  assert.equal((await queues.receive(url, { waitSeconds: 0 })).length, 0, 'hidden while in flight');

  await sleep(1_500); // past the 1 s visibility timeout
  const again = only(await queues.receive(url, { visibility: 30 }), 'after the timeout');
  assert.equal(again.MessageId, first.MessageId);
  assert.equal(again.Attributes!.ApproximateReceiveCount, '2');

  await client.send(
    new ChangeMessageVisibilityCommand({
      QueueUrl: url,
      ReceiptHandle: again.ReceiptHandle,
      VisibilityTimeout: 0,
    }),
  );
  const released = only(await queues.receive(url), 'after the release');
  assert.equal(
    released.Attributes!.ApproximateReceiveCount,
    '3',
    'a release is not free: the receive counted',
  );
});

test('every receive counts toward the redrive policy: past maxReceiveCount the message moves to the dead-letter queue', async () => {
  const dlq = await queues.create('smoke-sqs-dlq');
  const url = await queues.create('smoke-sqs-redrive', {
    RedrivePolicy: JSON.stringify({ deadLetterTargetArn: await queues.arn(dlq), maxReceiveCount: 2 }),
  });
  await send(url, 'poison');
  for (let i = 1; i <= 2; i++) {
    const m = only(await queues.receive(url, { max: 1, visibility: 30 }), `receive ${i}`);
    await client.send(
      new ChangeMessageVisibilityCommand({
        QueueUrl: url,
        ReceiptHandle: m.ReceiptHandle,
        VisibilityTimeout: 0,
      }),
    );
  }
  assert.equal((await queues.receive(url)).length, 0, 'a third receive finds it moved');
  const dead = only(await queues.receive(dlq), 'the dead-letter queue');
  assert.equal(dead.Body, 'poison');
});

test('a receipt handle of an earlier receive does not delete the message once it was received again (ElasticMQ refuses it; AWS may answer success and keep the message)', async () => {
  const url = await queues.create('smoke-sqs-stale', { VisibilityTimeout: '1' });
  await send(url, 'm');
  const first = only(await queues.receive(url), 'first receive');
  await sleep(1_500);
  only(await queues.receive(url, { visibility: 30 }), 'second receive');
  await assert.rejects(
    client.send(new DeleteMessageCommand({ QueueUrl: url, ReceiptHandle: first.ReceiptHandle })),
    /ReceiptHandleIsInvalid|not valid/,
  );
  assert.equal((await queues.attributes(url)).ApproximateNumberOfMessagesNotVisible, '1', 'still stored');
});

test('a FIFO queue holds a group back while one of its messages is in flight, and serves the other groups', async () => {
  const url = await queues.create('smoke-sqs-groups', { FifoQueue: 'true', VisibilityTimeout: '30' });
  for (const [group, body] of [
    ['g1', 'g1-a'],
    ['g1', 'g1-b'],
    ['g2', 'g2-a'],
  ] as const)
    await send(url, body, { MessageGroupId: group, MessageDeduplicationId: body });
  const first = only(await queues.receive(url, { max: 1 }), 'the first receive');
  assert.equal(first.Body, 'g1-a');
  assert.deepEqual(
    (await queues.receive(url)).map((m) => m.Body),
    ['g2-a'],
    "g1-b waits behind g1-a; g2's message is served",
  );
  await client.send(new DeleteMessageCommand({ QueueUrl: url, ReceiptHandle: first.ReceiptHandle }));
  assert.deepEqual(
    (await queues.receive(url)).map((m) => m.Body),
    ['g1-b'],
  );
});

test('FIFO deduplication is per queue: a second send with the same id is dropped (even after the first was deleted), a same-body resend under content-based deduplication too, while the same id in another queue is kept', async () => {
  const a = await queues.create('smoke-sqs-dedup-a', { FifoQueue: 'true' });
  const b = await queues.create('smoke-sqs-dedup-b', {
    FifoQueue: 'true',
    ContentBasedDeduplication: 'true',
  });
  await send(a, 'one', { MessageGroupId: 'g', MessageDeduplicationId: 'copy-1' });
  const got = only(await queues.receive(a), 'queue a');
  await client.send(new DeleteMessageCommand({ QueueUrl: a, ReceiptHandle: got.ReceiptHandle }));
  await send(a, 'one again', { MessageGroupId: 'g', MessageDeduplicationId: 'copy-1' });
  assert.equal((await queues.receive(a)).length, 0, 'the resend with the same id was dropped');

  await send(b, 'one', { MessageGroupId: 'g', MessageDeduplicationId: 'copy-1' });
  await send(b, 'same body', { MessageGroupId: 'g' });
  await send(b, 'same body', { MessageGroupId: 'g' });
  assert.deepEqual(
    (await queues.receive(b)).map((m) => m.Body),
    ['one', 'same body'],
  );
});

test("a foreign client on SQS's other wire protocol (boto3, query/XML) and the SDK (JSON) read each other's messages alike: body and attributes of every type", async () => {
  const url = await queues.create('smoke-sqs-boto3');
  const attributes: Record<string, Boto3Attribute> = {
    user: { type: 'String', value: 'bob' },
    amount: { type: 'Number', value: '-0.250' },
    blob: { type: 'Binary', base64: Buffer.from([9, 0, 200]).toString('base64') },
    kind: { type: 'String.custom', value: 'ä' },
  };
  await boto3Send(url, [{ body: 'from boto3 ✓', attributes }]);
  const got = only(await queues.receive(url), 'the SDK reading boto3');
  assert.equal(got.Body, 'from boto3 ✓');
  assert.deepEqual(got.MessageAttributes, {
    user: { DataType: 'String', StringValue: 'bob' },
    amount: { DataType: 'Number', StringValue: '-0.250' },
    blob: { DataType: 'Binary', BinaryValue: new Uint8Array([9, 0, 200]) },
    kind: { DataType: 'String.custom', StringValue: 'ä' },
  });
  await client.send(new DeleteMessageCommand({ QueueUrl: url, ReceiptHandle: got.ReceiptHandle }));

  await send(url, 'from the SDK ✓', { MessageAttributes: got.MessageAttributes });
  assert.deepEqual(await boto3Receive(url, 1, 10), [{ body: 'from the SDK ✓', attributes }]);
});
