// The harness consumer stands in for an application reading a shadow; its kill() is "the session
// ends" in the soak and the lifecycle scenarios, and every id in its `acked` counts as delivered
// there. AMQP 0-9-1 never answers a basic.ack, and a connection closed in the same moment as the
// acks loses them on RabbitMQ (3.10.8 here: nearly always on a quorum queue, sometimes on a
// classic one; rabbitmq-server#10327): the queue keeps the messages, and a route's drain then
// moves them to the application shadow, so an id this consumer counted as acked reaches a second
// destination (soak rabbitmq-quorum seed 694446420: soak-…-6-9 in the route's shadow and the app's,
// acked 7 ms before the kill). A synchronous method on the channel after the acks proves the
// broker has them, as the engine's session reader does (agent/rabbitmq/sessionReader.ts).
import assert from 'node:assert/strict';
import { after, test } from 'node:test';
import * as amqp from 'amqplib';
import { loadServices } from '../support/services';
import { rabbitHarness } from './rabbitmq/harness';
import { batch } from './delivery';
import { waitFor } from './support';

const h = rabbitHarness('quorum');
after(() => h.close());

async function ready(queue: string): Promise<number> {
  const conn = await amqp.connect(loadServices().amqpUrl);
  try {
    const ch = await conn.createChannel();
    return (await ch.checkQueue(queue)).messageCount;
  } finally {
    await conn.close();
  }
}

test('a consumer killed right after its acks keeps them: nothing it acked is back in a quorum queue', async () => {
  const t = await h.topology();
  try {
    await h.inject(t.source, batch('kill', 5));
    const c = await h.consume(t.source, { prefetch: 50, ackFirst: 0 });
    await waitFor(
      'every message delivered (held)',
      async () => c.received.length,
      (n) => n === 5,
      10_000,
    );
    c.ackAll();
    await c.kill(); // in the same moment as the acks, as a session that ends on its last message
    await new Promise((r) => setTimeout(r, 500));
    const left = await ready(t.source);
    assert.equal(
      left,
      0,
      `${left} of the ${c.acked.length} messages the consumer acked are back in ${t.source}`,
    );
  } finally {
    await h.dispose(t);
  }
});
