// The SQS session reader (agent/sqs/sessionReader.ts) against the environment's SQS (ElasticMQ):
// what the sidecar acks is deleted and settled, what it rejects is released (received again, one
// receive more toward the redrive policy), nothing beyond the stream's window is held, a message
// reaches the stream with its attributes and their types, and what was never answered goes back
// to the shadow at once when the stream stops.
import assert from 'node:assert/strict';
import { after, test } from 'node:test';
import { SendMessageCommand } from '@aws-sdk/client-sqs';
import { SqsSessionReader } from '../../agent/sqs/sessionReader';
import { RouteStream, SettledMemory } from '../../agent/sessionStream/routeStream';
import { decodeAgentFrame, type AgentFrame } from '../../core/sessionStream';
import { fromWireMessage } from '../../core/shadowMessage';
import { partOf } from '../support/brokerPart';
import { pollUntil } from '../support/poll';
import { SqsQueues, sqsClient } from '../support/sqs';

const client = sqsClient();
const queues = new SqsQueues(client);
after(async () => {
  await queues.deleteAll();
  client.destroy();
});

/** A RouteStream over a socket that only records the frames the agent sends. */
function recordingStream(window: number): { stream: RouteStream; frames: AgentFrame[] } {
  const frames: AgentFrame[] = [];
  const ws = {
    OPEN: 1,
    readyState: 1,
    send: (bytes: Uint8Array) => {
      const decoded = decodeAgentFrame(bytes);
      assert.ok(decoded.ok, decoded.ok ? '' : decoded.problem);
      frames.push(decoded.frame);
    },
  };
  // The stream touches only readyState, OPEN and send of its socket.
  const stream = new RouteStream(
    ws as unknown as ConstructorParameters<typeof RouteStream>[0],
    'r1',
    window,
    new SettledMemory(),
  );
  return { stream, frames };
}

const messages = (frames: readonly AgentFrame[]) =>
  frames.flatMap((f) =>
    f.type === 'message' ? [{ tag: f.tag, message: fromWireMessage(f.queue, f.message) }] : [],
  );
const settled = (frames: readonly AgentFrame[]) =>
  frames.flatMap((f) => (f.type === 'settled' ? f.tags : []));

test('ack deletes, reject releases, the window bounds what is held, and a stop releases the rest', async () => {
  const shadow = await queues.create('sr-shadow', { VisibilityTimeout: '30' });
  for (const [i, id] of ['a', 'b', 'c'].entries())
    await client.send(
      new SendMessageCommand({
        QueueUrl: shadow,
        MessageBody: `body ${id}`,
        MessageAttributes: {
          'x-id': { DataType: 'String', StringValue: id },
          n: { DataType: 'Number', StringValue: `${i}.50` },
          bin: { DataType: 'Binary', BinaryValue: Buffer.from([i, 255]) },
        },
      }),
    );
  const { stream, frames } = recordingStream(2);
  const reader = new SqsSessionReader({
    queue: 'orders',
    shadowUrl: shadow,
    client,
    snsEnvelope: 'auto',
    ownsClient: false,
    countsLagMs: 0,
  });
  const failures: unknown[] = [];
  await reader.start(stream, (err) => failures.push(err));
  const first = await pollUntil(
    'two messages sent (the window)',
    async () => messages(frames),
    (m) => m.length >= 2,
    20_000,
  );
  await new Promise((r) => setTimeout(r, 1_500));
  assert.equal(messages(frames).length, 2, 'no more than the window before an answer');
  const [one, two] = first as [(typeof first)[number], (typeof first)[number]];
  assert.equal(partOf(one.message, 'sqs')?.attributes.n?.dataType, 'Number');
  assert.deepEqual([...(partOf(one.message, 'sqs')?.attributes.bin?.binaryValue ?? [])].slice(1), [255]);
  assert.ok(one.message.filterHeaders.has('x-id') && !one.message.filterHeaders.has('bin'));

  stream.onAck([one.tag]);
  stream.onReject([two.tag]);
  await pollUntil(
    'both settled',
    async () => settled(frames),
    (s) => s.includes(one.tag) && s.includes(two.tag),
    20_000,
  );
  // The rejected one is visible again at once and comes back; the third arrives with the credit.
  const all = await pollUntil(
    'the rejected one and the third are sent',
    async () => messages(frames),
    (m) => m.length >= 4,
    20_000,
  );
  const ids = all.map((m) => m.message.filterHeaders.get('x-id'));
  const acked = one.message.filterHeaders.get('x-id');
  const rejected = two.message.filterHeaders.get('x-id');
  assert.equal(ids.filter((id) => id === acked).length, 1, 'the acked one never comes again');
  assert.equal(ids.filter((id) => id === rejected).length, 2, 'the rejected one comes again');
  const again = all.slice(2).find((m) => m.message.filterHeaders.get('x-id') === rejected);
  assert.equal(
    again && partOf(again.message, 'sqs')?.system.ApproximateReceiveCount,
    '2',
    'one receive more',
  );

  // Stop without answering: both held messages are visible again at once.
  stream.stop('test');
  await reader.stop();
  const back = await queues.receive(shadow, { waitSeconds: 2 });
  // Never answered: the rejected one's second delivery and the third message.
  const unanswered = [...new Set(ids.filter((id) => id !== acked))].sort();
  assert.deepEqual(
    back.map((m) => m.MessageAttributes?.['x-id']?.StringValue).sort(),
    unanswered,
    'what was never answered is back in the shadow',
  );
  assert.deepEqual(failures, []);
});
