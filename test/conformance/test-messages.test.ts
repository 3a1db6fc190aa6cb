// Send Test Message on a developer's behalf (agent/sessionStream/testPublisher.ts) against the real
// brokers: the message the agent publishes into the source must be one the engines route to the
// developer's own route, so "a test message comes back to you" holds for the message as it is
// on the broker (the agent sets `message-id` and `content-type` itself), never only for the
// headers the client asked for. The engines route with the same matcher the check uses
// (core/providers/<provider>/message.ts kafkaHeaders/amqpHeaders + core/filter.ts matches); their
// routing is proven by the rest of this suite.
import assert from 'node:assert/strict';
import { createTopicWithLeaders } from '../support/kafkaSplit';
import { after, before, test } from 'node:test';
import * as amqp from 'amqplib';
import { Kafka, logLevel, type Admin } from 'kafkajs';
import { TestPublisher } from '../../agent/sessionStream/testPublisher';
import type { AgentQueuePlan } from '../../core/agentProtocol';
import { matches, type HeaderFilter } from '../../core/filter';
import { kafkaHeaders } from '../../core/providers/kafka/message';
import { amqpHeaders } from '../../core/providers/rabbitmq/message';
import { pollUntil } from '../support/poll';
import { loadServices, uniqueName } from '../support/services';

const services = loadServices();
// The queue-agent pod's env as the controller copies it: names in the plan, values in the env.
process.env.QS_TEST_MSG_BROKERS = services.kafkaBrokers.join(',');
process.env.QS_TEST_MSG_AMQP = services.amqpUrl;
// The same broker under a second URL (the default vhost spelled out): what a split whose queues
// use different URLs gives the publisher.
process.env.QS_TEST_MSG_AMQP_2 = `${services.amqpUrl.replace(/\/$/, '')}/%2f`;
process.env.QS_TEST_MSG_MGMT = services.rabbitManagementUrl;

const kafka = new Kafka({
  clientId: 'qs-test-messages',
  brokers: services.kafkaBrokers,
  logLevel: logLevel.NOTHING,
});
let admin: Admin;
let conn: amqp.ChannelModel;

before(async () => {
  admin = kafka.admin();
  await admin.connect();
  conn = await amqp.connect(services.amqpUrl);
});
after(async () => {
  await admin?.disconnect();
  await conn?.close().catch(() => undefined);
});

function kafkaPlan(topic: string): AgentQueuePlan {
  return {
    name: 'orders',
    provider: 'kafka',
    source: topic,
    group: `${topic}-app`,
    env: { brokers: 'QS_TEST_MSG_BROKERS' },
    epoch: 0,
    names: { appShadow: 'unused' },
  } as AgentQueuePlan;
}

function rabbitPlan(queue: string, urlEnv = 'QS_TEST_MSG_AMQP', name = 'invoices'): AgentQueuePlan {
  return {
    name,
    provider: 'rabbitmq',
    source: queue,
    env: { url: urlEnv, managementUrl: 'QS_TEST_MSG_MGMT' },
    epoch: 0,
    names: { appShadow: 'unused' },
  } as AgentQueuePlan;
}

async function kafkaRecords(topic: string, expected: number) {
  const consumer = kafka.consumer({ groupId: uniqueName('qs-test-msg-reader') });
  const seen: ReturnType<typeof kafkaHeaders>[] = [];
  await consumer.connect();
  await consumer.subscribe({ topics: [topic], fromBeginning: true });
  await consumer.run({ eachMessage: async ({ message }) => void seen.push(kafkaHeaders(message.headers)) });
  await pollUntil(
    `${expected} records in ${topic}`,
    async () => seen.length,
    (n) => n >= expected,
    30_000,
  );
  await consumer.disconnect();
  return seen;
}

// Filters on the keys the agent sets itself: no test message can carry the value the client
// asked for, so each must be refused, and nothing may reach the source.
const overwritten: {
  what: string;
  filter: HeaderFilter;
  headers: Record<string, string>;
  contentType?: string;
}[] = [
  {
    what: 'message-id',
    filter: { 'x-queue-split-user': 'lee', 'message-id': 'lee-1' },
    headers: { 'x-queue-split-user': 'lee', 'message-id': 'lee-1' },
  },
  {
    what: 'content-type',
    filter: { 'x-queue-split-user': 'lee', 'content-type': 'text/lee' },
    headers: { 'x-queue-split-user': 'lee', 'content-type': 'text/lee' },
    contentType: 'application/json',
  },
];

test('Send Test Message cannot inject into the app on Kafka: the message is checked as it will be published', async () => {
  const topic = uniqueName('test-msg');
  await createTopicWithLeaders(kafka, { topic, numPartitions: 1 });
  const publisher = new TestPublisher();
  try {
    for (const c of overwritten) {
      const outcome = await publisher.publish(kafkaPlan(topic), c.filter, {
        queue: 'orders',
        headers: c.headers,
        body: Buffer.from('{}'),
        ...(c.contentType ? { contentType: c.contentType } : {}),
      });
      assert.equal(outcome.ok, false, `a filter on ${c.what} must refuse the message`);
      assert.match(outcome.ok ? '' : outcome.reason, new RegExp(c.what));
    }
    // One that matches as published goes through, and is what the engine routes to the route.
    const filter = { 'x-queue-split-user': 'lee' };
    const good = await publisher.publish(kafkaPlan(topic), filter, {
      queue: 'orders',
      headers: { 'x-queue-split-user': 'lee' },
      body: Buffer.from('{}'),
      contentType: 'application/json',
    });
    assert.ok(good.ok, good.ok ? '' : good.reason);
    const offsets = await admin.fetchTopicOffsets(topic);
    assert.equal(offsets[0]?.high, '1', 'only the accepted message reached the source');
    const [record] = await kafkaRecords(topic, 1);
    assert.ok(matches(filter, record!), 'the published record matches the route that asked for it');
    assert.equal(record!.get('message-id'), good.messageId);
  } finally {
    await publisher.close();
    await admin.deleteTopics({ topics: [topic] }).catch(() => undefined);
  }
});

test('Send Test Message cannot inject into the app on RabbitMQ: the message is checked as it will be published', async () => {
  const queue = uniqueName('test-msg');
  const ch = await conn.createChannel();
  await ch.assertQueue(queue, { durable: true });
  const publisher = new TestPublisher();
  try {
    // AMQP routes on the headers table alone: message-id and content-type are properties, so a
    // header of that name is published as the client gave it and still matches.
    for (const c of overwritten) {
      const outcome = await publisher.publish(rabbitPlan(queue), c.filter, {
        queue: 'invoices',
        headers: c.headers,
        body: Buffer.from('{}'),
        ...(c.contentType ? { contentType: c.contentType } : {}),
      });
      assert.ok(outcome.ok, outcome.ok ? '' : outcome.reason);
      const got = await pollUntil(
        `the ${c.what} message in ${queue}`,
        () => ch.get(queue, { noAck: true }),
        (m) => m !== false,
        10_000,
      );
      assert.ok(got, 'published');
      assert.ok(
        matches(c.filter, amqpHeaders(got.properties.headers)),
        `the ${c.what} message as published matches the route that asked for it`,
      );
    }
  } finally {
    await publisher.close();
    await ch.deleteQueue(queue).catch(() => undefined);
    await ch.close().catch(() => undefined);
  }
});

async function testMessageConnections(): Promise<number> {
  const url = new URL(services.rabbitManagementUrl);
  const auth = Buffer.from(
    `${decodeURIComponent(url.username)}:${decodeURIComponent(url.password)}`,
  ).toString('base64');
  const res = await fetch(`${url.origin}/api/connections?columns=name,client_properties`, {
    headers: { authorization: `Basic ${auth}` },
    signal: AbortSignal.timeout(5000),
  });
  assert.ok(res.ok, `management API GET connections: HTTP ${res.status}`);
  const all = (await res.json()) as { client_properties?: { connection_name?: string } }[];
  return all.filter((c) => c.client_properties?.connection_name === 'queue-split test messages').length;
}

test('the test publisher keeps one AMQP connection per URL and closes them all: queues of one split on different URLs', async () => {
  const [a, b] = [uniqueName('test-msg-a'), uniqueName('test-msg-b')];
  const ch = await conn.createChannel();
  for (const q of [a, b]) await ch.assertQueue(q, { durable: true });
  const publisher = new TestPublisher();
  const filter = { 'x-queue-split-user': 'lee' };
  const plans = [rabbitPlan(a, 'QS_TEST_MSG_AMQP', 'a'), rabbitPlan(b, 'QS_TEST_MSG_AMQP_2', 'b')];
  try {
    for (let round = 0; round < 3; round++) {
      for (const plan of plans) {
        const outcome = await publisher.publish(plan, filter, {
          queue: plan.name,
          headers: { 'x-queue-split-user': 'lee' },
          body: Buffer.from('{}'),
        });
        assert.ok(outcome.ok, outcome.ok ? '' : outcome.reason);
      }
    }
    // The management API lists a connection once it is open; a closed one may linger a moment.
    await pollUntil(
      'two test-message connections, one per URL',
      testMessageConnections,
      (n) => n === 2,
      15_000,
    );
  } finally {
    await publisher.close();
  }
  await pollUntil('no test-message connection after close()', testMessageConnections, (n) => n === 0, 15_000);
  for (const q of [a, b]) await ch.deleteQueue(q).catch(() => undefined);
  await ch.close().catch(() => undefined);
});
