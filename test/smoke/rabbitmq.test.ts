// Proves the RabbitMQ from `npm run env:up` is a real broker with the behaviour the engines
// rely on: queue types, the confirm + mandatory + basic.return dance for unroutable
// publishes, manual acks, and management statistics that lag but arrive.
import assert from 'node:assert/strict';
import { after, before, test } from 'node:test';
import * as amqp from 'amqplib';
import { pollUntil } from '../support/poll';
import { getQueue } from '../support/rabbitManagement';
import { loadServices, uniqueName } from '../support/services';

const services = loadServices();
let conn: amqp.ChannelModel;
const created: string[] = [];

before(async () => {
  conn = await amqp.connect(services.amqpUrl);
  conn.on('error', () => undefined); // connection errors surface through the failing operation
});
after(async () => {
  const ch = await conn.createChannel();
  for (const q of created) await ch.deleteQueue(q);
  await conn.close();
});

for (const type of ['classic', 'quorum'] as const) {
  test(`a durable ${type} queue: confirmed publish, manual ack, management counts`, async () => {
    const queue = uniqueName(`smoke-${type}`);
    created.push(queue);
    const ch = await conn.createConfirmChannel();
    await ch.assertQueue(queue, { durable: true, arguments: { 'x-queue-type': type } });

    for (let i = 0; i < 3; i++) {
      ch.publish('', queue, Buffer.from(`m${i}`), {
        mandatory: true,
        persistent: true,
        messageId: `id-${i}`,
      });
    }
    await ch.waitForConfirms();

    const info = await pollUntil(
      `${queue} shows 3 ready`,
      () => getQueue(services.rabbitManagementUrl, queue),
      (q) => q.messages_ready === 3,
    );
    assert.equal(info.type, type);
    assert.equal(info.durable, true);
    assert.deepEqual(info.arguments, { 'x-queue-type': type });

    await ch.prefetch(2);
    const received: amqp.ConsumeMessage[] = [];
    const { consumerTag } = await ch.consume(queue, (msg) => msg && received.push(msg), { noAck: false });
    await pollUntil(
      'two deliveries under prefetch 2',
      async () => received.length,
      (n) => n === 2,
    );
    await pollUntil(
      `${queue} shows 1 consumer, 2 unacked, 1 ready`,
      () => getQueue(services.rabbitManagementUrl, queue),
      (q) => q.consumers === 1 && q.messages_unacknowledged === 2 && q.messages_ready === 1,
    );
    // Manual acks: only what we ack leaves the queue.
    ch.ack(received[0]!);
    await pollUntil(
      'third delivery after one ack',
      async () => received.length,
      (n) => n === 3,
    );
    await ch.cancel(consumerTag);
    ch.ack(received[1]!);
    ch.nack(received[2]!, false, true);
    await pollUntil(
      `${queue} shows 0 consumers, 1 ready after cancel`,
      () => getQueue(services.rabbitManagementUrl, queue),
      (q) => q.consumers === 0 && q.messages_unacknowledged === 0 && q.messages_ready === 1,
    );
    assert.deepEqual(
      received.map((m) => m.properties.messageId),
      ['id-0', 'id-1', 'id-2'],
    );
    await ch.close();
  });
}

test('an unroutable mandatory publish is confirmed yet returned with 312 NO_ROUTE', async () => {
  const ch = await conn.createConfirmChannel();
  const returned: amqp.Message[] = [];
  ch.on('return', (msg: amqp.Message) => returned.push(msg));
  const missing = uniqueName('smoke-missing');
  const confirmed = await new Promise<boolean>((resolve) => {
    ch.publish('', missing, Buffer.from('lost?'), { mandatory: true, messageId: 'unroutable-1' }, (err) =>
      resolve(err == null),
    );
  });
  assert.equal(confirmed, true, 'the broker confirms positively even though nothing was routed');
  await pollUntil(
    'basic.return arrives',
    async () => returned.length,
    (n) => n === 1,
    5000,
  );
  // @types/amqplib does not describe basic.return's fields; amqplib does deliver them.
  const fields = returned[0]!.fields as unknown as { replyCode: number; replyText: string };
  assert.equal(fields.replyCode, 312);
  assert.equal(fields.replyText, 'NO_ROUTE');
  assert.equal(returned[0]!.properties.messageId, 'unroutable-1');
  await ch.close();
});
