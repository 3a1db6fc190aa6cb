// The raw header capture (agent/rabbitmq/rawHeaders.ts) rests on two amqplib internals; this
// pins the version it was checked against and proves it on the real broker: every message a
// capturing connection receives, many per socket read and with large bodies between them,
// carries its header table with each value's AMQP type.
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import path from 'node:path';
import { after, test } from 'node:test';
import * as amqp from 'amqplib';
import { CHECKED_AMQPLIB_VERSION, captureRawHeaders, typedHeaders } from '../../agent/rabbitmq/rawHeaders';
import { loadServices, uniqueName } from '../support/services';

const services = loadServices();
const connections: amqp.ChannelModel[] = [];
after(() => Promise.all(connections.map((c) => c.close().catch(() => undefined))));

async function connect(capture: boolean): Promise<amqp.ChannelModel> {
  const c = await amqp.connect(services.amqpUrl);
  c.on('error', () => undefined);
  if (capture) captureRawHeaders(c);
  connections.push(c);
  return c;
}

test('the raw header capture is checked against the amqplib version installed', () => {
  const manifest = path.join(require.resolve('amqplib'), '..', 'package.json');
  const { version } = JSON.parse(readFileSync(manifest, 'utf8')) as { version: string };
  assert.equal(
    version,
    CHECKED_AMQPLIB_VERSION,
    'amqplib changed: re-check recvFrame()/rest in agent/rabbitmq/rawHeaders.ts, then update CHECKED_AMQPLIB_VERSION',
  );
});

test('a capturing connection gives every received header its AMQP type, across frames and reads', async () => {
  const queue = uniqueName('rq-raw');
  const producer = await (await connect(false)).createConfirmChannel();
  await producer.assertQueue(queue, { durable: false, autoDelete: false });
  try {
    const typed = {
      short: { '!': 'int16', value: 7 },
      ubyte: { '!': 'uint8', value: 200 },
      float: { '!': 'float', value: 1.5 },
      big: { '!': 'int64', value: 2n ** 62n + 1n },
      integral: { '!': 'double', value: 2 },
      table: { '!': 'object', value: { '!': 'bang', n: { '!': 'int32', value: 1 } } },
      list: [{ '!': 'uint16', value: 9 }, 'two', null],
      text: 'h\u00e9llo',
      bytes: Buffer.from([0, 255]),
    };
    const count = 60;
    for (let i = 0; i < count; i++) {
      // Large bodies every few messages: header frames then arrive split across socket reads.
      const body = i % 5 === 0 ? Buffer.alloc(300_000, i) : Buffer.from(`m${i}`);
      producer.publish('', queue, body, {
        messageId: `m${i}`,
        contentType: 'application/octet-stream',
        contentEncoding: 'identity',
        headers: i % 7 === 3 ? undefined : typed,
      });
    }
    await producer.waitForConfirms();
    const consumer = await (await connect(true)).createChannel();
    await consumer.prefetch(count);
    const seen: amqp.ConsumeMessage[] = [];
    await consumer.consume(queue, (m) => m && seen.push(m), { noAck: true });
    const deadline = Date.now() + 20_000;
    while (seen.length < count && Date.now() < deadline) await new Promise((r) => setTimeout(r, 50));
    assert.equal(seen.length, count, 'every message delivered');
    for (const [i, m] of seen.entries()) {
      const got = typedHeaders(m.properties);
      assert.ok(got, `${String(m.properties.messageId)}: no raw headers captured`);
      if (i % 7 === 3) {
        assert.deepEqual(got, {}, `${String(m.properties.messageId)}: no headers sent`);
        continue;
      }
      assert.deepEqual(
        got,
        { ...typed, bytes: Buffer.from([0, 255]) },
        `${String(m.properties.messageId)}: typed headers`,
      );
    }
  } finally {
    await producer.deleteQueue(queue).catch(() => undefined);
  }
});
