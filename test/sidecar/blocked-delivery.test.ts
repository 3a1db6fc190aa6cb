// A local handler that keeps failing one message (docs/design.md §8): with http delivery the
// sidecar retries it for as long as it fails, and every later message of that queue waits
// behind it (head of line). These cases hold the shipped sidecar bundle to what the developer
// must get then: the block visible on stdout (which message, why, which attempt, since when),
// a retry that ends the backoff wait at once, a reject that settles the message the way the
// app's own reject would (RabbitMQ: basic.reject without requeue, so the broker dead-letters it
// by the queue's arguments; Kafka: skipped, its offset committed past), and --reject-after for
// doing that by itself after N failed attempts. The queue-agent's session endpoint runs in the
// test process against the real brokers, as in agent-stream.test.ts; the session shadows are
// declared here (a RabbitMQ one with the x-dead-letter-exchange its source would give it).
import assert from 'node:assert/strict';
import * as http from 'node:http';
import type { AddressInfo } from 'node:net';
import * as path from 'node:path';
import { test } from 'node:test';
import { jsonLogger } from '../../agent/log';
import { SessionServer } from '../../agent/sessionStream/sessionServer';
import type { AgentRoute, DesiredState } from '../../core/agentProtocol';
import type { QueueSplit } from '../../core/crd/queueSplitSchema';
import { SESSION_PATH } from '../../core/sessionStream';
import { pollUntil } from '../support/poll';
import { getQueue } from '../support/rabbitManagement';
import { loadServices, uniqueName } from '../support/services';
import { createTopic, kafkaClient } from '../support/kafkaSplit';
import { sidecarFixture } from './fixture';
import { IN_CLUSTER_KAFKA, SidecarProcess, activateWhenAsked, agentBrokerEnv, agentDesired } from './support';

const fx = sidecarFixture({
  name: 'blocked',
  clientId: 'qs-blocked-test',
  // --transport broker reads the workload's AMQP URL, which is in a Secret.
  developers: { dev: false, 'dev-secrets': true },
});
const services = fx.services;
const AGENT_POD_UID = 'blocked-delivery-test-pod';
const AGENT_ENV = agentBrokerEnv('QS_BLOCKED_TEST', services);

let agent: { server: SessionServer; url: string };

fx.setup(async () => {
  const server = new SessionServer(jsonLogger().child({ component: 'blocked-test' }), AGENT_POD_UID);
  const httpServer = http.createServer((_req, res) => res.writeHead(404).end());
  server.attach(httpServer);
  await new Promise<void>((resolve) => httpServer.listen(0, '127.0.0.1', resolve));
  agent = { server, url: `ws://127.0.0.1:${(httpServer.address() as AddressInfo).port}${SESSION_PATH}` };
  fx.defer(async () => {
    await server.close();
    httpServer.close();
  });
});

const desiredFor = (split: QueueSplit, shadows: AgentRoute['shadows']): DesiredState =>
  agentDesired(fx.workload, AGENT_ENV, split, shadows);

/** Through the in-process queue-agent (the default transport), or `broker`: its own consumers. */
function startSidecar(args: readonly string[], transport: 'agent' | 'broker' = 'agent'): SidecarProcess {
  const sidecar = new SidecarProcess(
    fx.bundle,
    [
      ...[
        '--kubeconfig',
        transport === 'agent' ? fx.kubeconfig('dev') : fx.kubeconfig('dev-secrets'),
        '-n',
        fx.namespace,
      ],
      ...['-w', `deployment/${fx.workload.name}`, '--owner', 'alice'],
      ...['--lease-seconds', '10', '--poll-interval', '250', '--detach-timeout', '30'],
      ...['--state-file', path.join(fx.stateDir, `${uniqueName('state')}.json`)],
      ...(transport === 'agent'
        ? ['--agent-url', agent.url]
        : ['--transport', 'broker', '--map-address', `${IN_CLUSTER_KAFKA}=${services.kafkaBrokers[0]}`]),
      ...args,
    ],
    { ...process.env, XDG_STATE_HOME: fx.stateDir },
  );
  fx.running.push(sidecar);
  return sidecar;
}

/** The handler under debugging: 500 for every message whose body starts with `bad`, 200 otherwise. */
async function handler() {
  const posts: { id: string; body: string; at: number }[] = [];
  const server = http.createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on('data', (c: Buffer) => chunks.push(c));
    req.on('end', () => {
      const body = Buffer.concat(chunks).toString('utf8');
      posts.push({ id: String(req.headers['ce-id']), body, at: Date.now() });
      res.writeHead(body.startsWith('bad') ? 500 : 200).end();
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  fx.defer(() => new Promise<void>((resolve) => server.close(() => resolve())));
  return {
    url: `http://127.0.0.1:${(server.address() as AddressInfo).port}/events`,
    posts,
    okBodies: () => posts.filter((p) => !p.body.startsWith('bad')).map((p) => p.body),
  };
}

/**
 * A RabbitMQ session shadow as the source's rules make it (the agent declares it so from the
 * source's arguments): what is rejected goes to its dead-letter exchange, here into `dlq`.
 * Holds `values` (message-id = body), published as the queue-agent would route them.
 */
async function deadLetteringShadow(values: readonly string[]): Promise<{ shadow: string; dlq: string }> {
  const shadow = uniqueName('blocked-q');
  const dlx = uniqueName('blocked-dlx');
  const dlq = uniqueName('blocked-dlq');
  await fx.channel.assertExchange(dlx, 'fanout', { durable: false, autoDelete: true });
  await fx.channel.assertQueue(dlq, { durable: false, autoDelete: false });
  await fx.channel.bindQueue(dlq, dlx, '');
  await fx.channel.assertQueue(shadow, { durable: true, arguments: { 'x-dead-letter-exchange': dlx } });
  fx.defer(async () => {
    await fx.channel.deleteQueue(shadow).catch(() => undefined);
    await fx.channel.deleteQueue(dlq).catch(() => undefined);
    await fx.channel.deleteExchange(dlx).catch(() => undefined);
  });
  for (const value of values)
    fx.channel.sendToQueue(shadow, Buffer.from(value), {
      persistent: true,
      messageId: value,
      headers: { 'x-queue-split-user': 'alice' },
    });
  await fx.channel.waitForConfirms();
  return { shadow, dlq };
}

/** The first message of `dlq` with its x-death reason and queue (what the broker dead-lettered). */
async function deadLettered(dlq: string): Promise<{ body: string; reason?: string; queue?: string }> {
  const dead = await pollUntil(
    'the rejected message in the dead-letter queue',
    async () => fx.channel.get(dlq, { noAck: true }),
    (m) => m !== false,
    10_000,
  );
  assert.ok(dead !== false);
  const deaths = dead.properties.headers?.['x-death'] as { reason?: string; queue?: string }[] | undefined;
  const death = deaths?.[0];
  return {
    body: dead.content.toString(),
    ...(death?.reason !== undefined ? { reason: death.reason } : {}),
    ...(death?.queue !== undefined ? { queue: death.queue } : {}),
  };
}

/** Kafka: a one-partition session topic holding `values`, as the queue-agent would route them. */
async function kafkaShadow(values: readonly string[]): Promise<string> {
  const topic = uniqueName('blocked-k');
  await createTopic(kafkaClient(loadServices(), 'qs-sidecar-topics'), topic, 1);
  await fx.producer.send({
    topic,
    acks: -1,
    messages: values.map((value) => ({ partition: 0, value, headers: { 'x-queue-split-user': 'alice' } })),
  });
  return topic;
}

const committed = async (group: string, topic: string) =>
  (await fx.kadmin.fetchOffsets({ groupId: group, topics: [topic] }))[0]!.partitions[0]!.offset;

/** Every line of the sidecar's stdout, as text: what a leak would show up in. */
const said = (sidecar: SidecarProcess) => sidecar.rawStdout.join('\n');

test("an http handler that answers 500 for one message blocks the route visibly; reject from stdin dead-letters it per the source's rules and the next messages flow", async () => {
  const { shadow, dlq } = await deadLetteringShadow(['inv-0', 'bad-1', 'inv-2', 'inv-3']);

  const target = await handler();
  const sidecar = startSidecar(['--queue', 'invoices', '--target', target.url, '--retry-max-delay', '30000']);
  const split = await activateWhenAsked(fx.admin, sidecar, [
    { name: 'invoices', phase: 'Active', shadow: { source: shadow } },
  ]);
  await agent.server.update(desiredFor(split, { invoices: { shadow } }));
  await sidecar.waitFor('ready');

  // Blocked, and visibly so: which message, why, which attempt, since when.
  const third = await sidecar.waitFor('failed', (f) => f.messageId === 'bad-1' && f.attempt === 3);
  assert.equal(third.queue, 'invoices');
  assert.equal(third.reason, 'HTTP 500');
  assert.equal(typeof third.blockedSince, 'string', 'a failed line says since when the message blocks');
  const first = sidecar.of('failed').find((f) => f.messageId === 'bad-1' && f.attempt === 1)!;
  assert.equal(third.blockedSince, first.blockedSince, 'the block began with the first failed attempt');
  assert.ok(Date.parse(third.blockedSince) <= Date.parse(third.time));
  assert.deepEqual(target.okBodies(), ['inv-0'], 'head of line: nothing after it reached the handler');

  // A request naming another message changes nothing, and says so.
  sidecar.send(JSON.stringify({ type: 'reject', queue: 'invoices', messageId: 'inv-2' }));
  const ignored = await sidecar.waitFor('warning', (w) => w.code === 'request-ignored');
  assert.equal(ignored.queue, 'invoices');
  assert.match(ignored.message, /inv-2/);
  assert.match(ignored.message, /bad-1/, 'it names the message that is blocked');

  // Retry now: the backoff wait (2 s and more by now) ends at once.
  const waiting = await sidecar.waitFor('failed', (f) => f.messageId === 'bad-1' && f.retryInMs >= 1_500);
  const asked = Date.now();
  sidecar.send(JSON.stringify({ type: 'retry', queue: 'invoices', messageId: 'bad-1' }));
  const next = await sidecar.waitFor(
    'failed',
    (f) => f.messageId === 'bad-1' && f.attempt === waiting.attempt + 1,
  );
  assert.ok(
    Date.parse(next.time) - asked < waiting.retryInMs / 2,
    `the retry came at once (${Date.parse(next.time) - asked} ms after the request; the wait was ${waiting.retryInMs} ms)`,
  );

  // Reject: settled like the app's reject, then the next messages flow.
  sidecar.send(JSON.stringify({ type: 'reject', queue: 'invoices', messageId: 'bad-1' }));
  const rejected = await sidecar.waitFor('rejected', (r) => r.messageId === 'bad-1');
  assert.equal(rejected.queue, 'invoices');
  assert.equal(rejected.by, 'request');
  assert.ok(rejected.attempts >= next.attempt, `attempts counted: ${rejected.attempts}`);
  assert.equal(rejected.reason, 'HTTP 500');
  assert.match(rejected.message, /dead-letter/);
  await pollUntil(
    'the messages behind it delivered',
    async () => sidecar.of('delivered').map((d) => d.messageId),
    (delivered) => delivered.includes('inv-3'),
    10_000,
  );
  assert.deepEqual(
    sidecar.of('delivered').map((d) => d.messageId),
    ['inv-0', 'inv-2', 'inv-3'],
    'the rest, in order, once each',
  );
  // The broker dead-lettered it by the queue's x-dead-letter-exchange, reason `rejected`.
  assert.deepEqual(await deadLettered(dlq), { body: 'bad-1', reason: 'rejected', queue: shadow });
  // The management API's counts are sampled (every 5 s by default), so wait for a sample after the acks.
  await pollUntil(
    'the shadow is empty (ready + unacknowledged)',
    async () => {
      const info = await getQueue(services.rabbitManagementUrl, shadow);
      return (info.messages_ready ?? 0) + (info.messages_unacknowledged ?? 0);
    },
    (left) => left === 0,
    20_000,
  );
  assert.equal(
    target.posts.filter((p) => p.body === 'bad-1').length,
    rejected.attempts,
    'no attempt after the reject',
  );
  assert.ok(!said(sidecar).includes('x-queue-split-user":"alice'), 'no header value on stdout');

  sidecar.send(JSON.stringify({ type: 'stop' }));
  assert.equal((await sidecar.waitFor('detached')).drained, true);
  assert.equal((await sidecar.exited).code, 0);
});

test('--reject-after 3: a Kafka message its handler answers 500 for is rejected after 3 attempts (skipped: committed past), with a line saying so, and its partition flows', async () => {
  const topic = await kafkaShadow(['ord-0', 'bad-1', 'ord-2']);
  const group = uniqueName('blocked-g');
  const target = await handler();
  const sidecar = startSidecar([
    ...['--queue', 'orders', '--target', target.url],
    ...['--retry-max-delay', '250', '--reject-after', '3'],
  ]);
  const split = await activateWhenAsked(fx.admin, sidecar, [
    { name: 'orders', phase: 'Active', shadow: { source: topic, group } },
  ]);
  await agent.server.update(desiredFor(split, { orders: { shadow: topic, sessionGroup: group } }));
  await sidecar.waitFor('ready');

  const rejected = await sidecar.waitFor('rejected', (r) => r.messageId === '0-1', 20_000);
  assert.equal(rejected.queue, 'orders');
  assert.equal(rejected.by, 'reject-after');
  assert.equal(rejected.attempts, 3);
  assert.match(rejected.message, /3 failed attempts/);
  assert.match(rejected.message, /--reject-after/);
  assert.match(rejected.message, /skipped/);
  const failed = sidecar.of('failed').filter((f) => f.messageId === '0-1');
  assert.deepEqual(
    failed.map((f) => f.attempt),
    [1, 2],
    'the third failure is the reject, not one more wait',
  );
  assert.equal(failed[0]!.rejectAfter, 3, 'failed lines say when it will be rejected');
  assert.equal(target.posts.filter((p) => p.body === 'bad-1').length, 3, 'exactly 3 attempts');
  await sidecar.waitFor('delivered', (d) => d.messageId === '0-2', 10_000);
  assert.equal(await committed(group, topic), '3', 'committed past the rejected record');

  sidecar.send(JSON.stringify({ type: 'stop' }));
  assert.equal((await sidecar.waitFor('detached')).drained, true);
});

test("--transport broker (the sidecar's own consumers) rejects the same way: with --reject-after 2, RabbitMQ dead-letters the message by the queue's x-dead-letter-exchange, Kafka commits past it, and both queues flow", async () => {
  const { shadow, dlq } = await deadLetteringShadow(['inv-0', 'bad-inv', 'inv-2']);
  const topic = await kafkaShadow(['ord-0', 'bad-1', 'ord-2']);
  const group = uniqueName('blocked-g');
  const target = await handler();
  const sidecar = startSidecar(
    ['--target', target.url, '--retry-max-delay', '250', '--reject-after', '2'],
    'broker',
  );
  await activateWhenAsked(fx.admin, sidecar, [
    { name: 'orders', phase: 'Active', shadow: { source: topic, group } },
    { name: 'invoices', phase: 'Active', shadow: { source: shadow } },
  ]);
  await sidecar.waitFor('ready');
  await pollUntil(
    'everything else delivered',
    async () => sidecar.of('delivered').map((d) => d.messageId),
    (ids) => ids.includes('inv-2') && ids.includes('0-2'),
    20_000,
  );
  const rejected = sidecar.of('rejected').map((r) => [r.queue, r.messageId, r.attempts, r.by]);
  assert.deepEqual(rejected.sort(), [
    ['invoices', 'bad-inv', 2, 'reject-after'],
    ['orders', '0-1', 2, 'reject-after'],
  ]);
  assert.deepEqual(await deadLettered(dlq), { body: 'bad-inv', reason: 'rejected', queue: shadow });
  assert.equal(await committed(group, topic), '3', 'committed past the rejected record');
  assert.deepEqual(target.okBodies().sort(), ['inv-0', 'inv-2', 'ord-0', 'ord-2']);

  sidecar.send(JSON.stringify({ type: 'stop' }));
  assert.equal((await sidecar.waitFor('detached')).drained, true);
});
