// Session delivery through the queue-agent (core/sessionStream.ts), the default for http and
// relay: the agent's session endpoint (agent/sessionStream/, run here in the test process against the
// real brokers, as the agent runs it in its pod) reads the route's session shadows and streams
// them to the shipped sidecar bundle, which is given no broker address and may not read the
// workload's Secrets. The port-forward leg (sidecar/agentPortForward.ts) is proven on the real
// node by the cluster suite (test/cluster/session-stream.test.ts); here the sidecar connects with
// --agent-url, through a fault proxy (test/support/faultProxy.ts) the tests can cut; the agent's
// own broker links can go through one too (a slow connect, a stalled or cut link).
import assert from 'node:assert/strict';
import * as fs from 'node:fs';
import * as http from 'node:http';
import type { AddressInfo } from 'node:net';
import * as path from 'node:path';
import { Writable } from 'node:stream';
import { test } from 'node:test';
import WebSocket, { WebSocketServer } from 'ws';
import { jsonLogger } from '../../agent/log';
import { SessionServer } from '../../agent/sessionStream/sessionServer';
import type { AgentRoute, DesiredState } from '../../core/agentProtocol';
import type { QueueSplit } from '../../core/crd/queueSplitSchema';
import { newNonce, newSessionSecret, sessionPublicKey } from '../../core/sessionSecret';
import { answerChallenge, challengeOf, helloFor } from '../support/sessionHello';
import { frameHeader, rawUpgrade } from '../support/rawSession';
import {
  SESSION_PATH,
  SESSION_SUBPROTOCOL,
  decodeAgentFrame,
  decodeClientFrame,
  encodeFrame,
  type AgentFrame,
} from '../../core/sessionStream';
import { startFaultProxy, type FaultProxy } from '../support/faultProxy';
import { AgentStream } from '../../sidecar/agentStream';
import type { SidecarError } from '../../laptop/errors';
import { Reporter } from '../../sidecar/output';
import { pollUntil } from '../support/poll';
import { getQueue } from '../support/rabbitManagement';
import { loadServices, uniqueName } from '../support/services';
import { createTopic, kafkaClient } from '../support/kafkaSplit';
import { sidecarFixture } from './fixture';
import { SidecarProcess, activateWhenAsked, agentBrokerEnv, agentDesired } from './support';

// No Secret access: the agent transport reads none (the workload's AMQP URL is in a Secret).
const fx = sidecarFixture({
  name: 'stream',
  clientId: 'qs-stream-test',
  developers: { 'no-secrets': false },
});
const services = fx.services;
/** The uid the in-process agent answers to, as a queue-agent pod's own uid. */
const AGENT_POD_UID = 'agent-stream-test-pod';
const AGENT_ENV = agentBrokerEnv('QS_STREAM_TEST', services);

/** The agent's session endpoint on a local HTTP server, with a TCP relay in front the tests can cut. */
async function startAgent(): Promise<{
  server: SessionServer;
  url: string;
  agentUrl: string;
  cut: () => void;
  connections: () => number;
}> {
  const server = new SessionServer(jsonLogger().child({ component: 'session-test' }), AGENT_POD_UID);
  const httpServer = http.createServer((_req, res) => res.writeHead(404).end());
  server.attach(httpServer);
  await new Promise<void>((resolve) => httpServer.listen(0, '127.0.0.1', resolve));
  const agentPort = (httpServer.address() as AddressInfo).port;
  const relay = await startFaultProxy({ host: '127.0.0.1', port: agentPort });
  fx.defer(async () => {
    await server.close();
    await relay.close();
    httpServer.close();
  });
  return {
    server,
    url: `ws://127.0.0.1:${agentPort}${SESSION_PATH}`,
    agentUrl: `ws://127.0.0.1:${relay.port}${SESSION_PATH}`,
    cut: () => relay.cut(),
    connections: () => relay.connections(),
  };
}

let proxiedEnv = 0;
/**
 * The agent's links to one broker through a fault proxy: the name of an env var holding the
 * proxied address, for a plan's env (the agent reads connections from env, as in its pod).
 */
async function brokerProxy(broker: 'kafka' | 'amqp'): Promise<{ proxy: FaultProxy; env: string }> {
  const target =
    broker === 'amqp' ? new URL(services.amqpUrl) : new URL(`kafka://${services.kafkaBrokers[0]!}`);
  const port = Number(target.port || (broker === 'amqp' ? 5672 : 9092));
  const proxy = await startFaultProxy({ host: target.hostname, port });
  fx.defer(() => proxy.close());
  const env = `QS_STREAM_TEST_PROXIED_${++proxiedEnv}`;
  process.env[env] = broker === 'amqp' ? proxy.url(services.amqpUrl) : `${proxy.host}:${proxy.port}`;
  return { proxy, env };
}

/** The desired document for one route of `split`; `env` names other env vars for the agent's
 * broker connections (brokerProxy). */
function desiredFor(
  split: QueueSplit,
  shadows: AgentRoute['shadows'],
  phase: AgentRoute['phase'] = 'ACTIVE',
  env: { brokers?: string; amqp?: string } = {},
): DesiredState {
  const names = { ...AGENT_ENV, brokers: env.brokers ?? AGENT_ENV.brokers, amqp: env.amqp ?? AGENT_ENV.amqp };
  return agentDesired(fx.workload, names, split, shadows, phase);
}

function startSidecar(args: readonly string[], agentUrl: string): SidecarProcess {
  const sidecar = new SidecarProcess(
    fx.bundle,
    [
      ...[
        '--kubeconfig',
        fx.kubeconfig('no-secrets'),
        '-n',
        fx.namespace,
        '-w',
        `deployment/${fx.workload.name}`,
        '--owner',
        'alice',
      ],
      ...['--lease-seconds', '10', '--poll-interval', '250', '--detach-timeout', '30'],
      ...['--state-file', path.join(fx.stateDir, `${uniqueName('state')}.json`), '--agent-url', agentUrl],
      ...args,
    ],
    { ...process.env, XDG_STATE_HOME: fx.stateDir },
  );
  fx.running.push(sidecar);
  return sidecar;
}

/** A local service that records each POST, answering after `delayMs`. */
async function httpTarget(delayMs = 0) {
  const received: { id: string; body: string }[] = [];
  let inFlight = 0;
  let maxInFlight = 0;
  const server = http.createServer((req, res) => {
    const chunks: Buffer[] = [];
    inFlight++;
    maxInFlight = Math.max(maxInFlight, inFlight);
    req.on('data', (c: Buffer) => chunks.push(c));
    req.on('end', () => {
      received.push({ id: String(req.headers['ce-id']), body: Buffer.concat(chunks).toString('utf8') });
      setTimeout(() => {
        inFlight--;
        res.writeHead(200).end();
      }, delayMs);
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  fx.defer(() => new Promise<void>((resolve) => server.close(() => resolve())));
  return {
    url: `http://127.0.0.1:${(server.address() as AddressInfo).port}/events`,
    received,
    maxInFlight: () => maxInFlight,
  };
}

async function kafkaTopic(prefix: string, partitions: number): Promise<string> {
  const topic = uniqueName(prefix);
  await createTopic(kafkaClient(loadServices(), 'qs-sidecar-topics'), topic, partitions);
  return topic;
}

async function committed(group: string, topic: string): Promise<Record<number, string>> {
  const offsets = await fx.kadmin.fetchOffsets({ groupId: group, topics: [topic] });
  return Object.fromEntries(offsets[0]!.partitions.map((p) => [p.partition, p.offset]));
}

async function produce(topic: string, partition: number, values: readonly string[]): Promise<void> {
  await fx.producer.send({
    topic,
    acks: -1,
    messages: values.map((value) => ({ partition, value, headers: { 'x-queue-split-user': 'alice' } })),
  });
}

async function publishAmqp(queue: string, values: readonly string[]): Promise<void> {
  for (const value of values)
    fx.channel.sendToQueue(queue, Buffer.from(value), {
      persistent: true,
      messageId: value,
      headers: { 'x-queue-split-user': 'alice' },
    });
  await fx.channel.waitForConfirms();
}

const ids = (prefix: string, n: number) => Array.from({ length: n }, (_, i) => `${prefix}-${i}`);

test('http through the queue-agent (Kafka + RabbitMQ): streamed in order per partition, each committed or acked before it is reported delivered; the sidecar reads no Secret and dials no broker', async () => {
  const agent = await startAgent();
  const topic = await kafkaTopic('stream-k', 3);
  const group = uniqueName('stream-g');
  const queue = uniqueName('stream-q');
  await fx.channel.assertQueue(queue, { durable: true });
  const byPartition = [ids('p0', 40), ids('p1', 40), ids('p2', 40)];
  for (const [p, values] of byPartition.entries()) await produce(topic, p, values);
  const invoices = ids('inv', 60);
  await publishAmqp(queue, invoices);

  const target = await httpTarget(2);
  const sidecar = startSidecar(['--target', target.url], agent.agentUrl);
  const split = await activateWhenAsked(fx.admin, sidecar, [
    { name: 'orders', phase: 'Active', shadow: { source: topic, group } },
    { name: 'invoices', phase: 'Active', shadow: { source: queue } },
  ]);
  assert.match(split.spec.session?.publicKey ?? '', /^ed25519:/, 'the spec carries the public key only');
  await agent.server.update(
    desiredFor(split, { orders: { shadow: topic, sessionGroup: group }, invoices: { shadow: queue } }),
  );
  const ready = await sidecar.waitFor('ready');
  assert.deepEqual(
    ready.queues.map((q) => [q.name, q.via]),
    [
      ['orders', 'agent'],
      ['invoices', 'agent'],
    ],
  );
  const all = [...byPartition.flat(), ...invoices];
  await pollUntil(
    'every message reported delivered',
    async () => sidecar.of('delivered').length,
    (n) => n >= all.length,
    60_000,
  );
  const bodies = target.received.map((r) => r.body);
  assert.deepEqual([...bodies].sort(), [...all].sort(), 'each message once');
  for (const values of [...byPartition, invoices])
    assert.deepEqual(
      bodies.filter((b) => values.includes(b)),
      values,
      'order kept per partition and per queue',
    );
  assert.deepEqual(await committed(group, topic), { 0: '40', 1: '40', 2: '40' }, 'every delivery committed');
  await pollUntil(
    'the RabbitMQ session shadow empty, every delivery acked',
    () => getQueue(services.rabbitManagementUrl, queue),
    (s) => s.messages_ready === 0 && s.messages_unacknowledged === 0,
    30_000,
  );
  // No broker connection from the sidecar: nothing it said names a broker, and it never read the Secret.
  const said = `${sidecar.rawStdout.join('\n')}\n${sidecar.stderr}`;
  assert.ok(!said.includes(':9092') && !said.includes(':5672'), 'no broker address on the sidecar side');
  assert.ok(!said.includes('guest'), 'no broker credential');

  sidecar.kill('SIGTERM');
  const detached = await sidecar.waitFor('detached');
  assert.equal(detached.drained, true);
  assert.equal((await sidecar.exited).code, 0);
  assert.equal(agent.server.streamingRoutes().length, 0, 'the agent ended the stream and its readers');
});

test('the secret: a client without it is refused, and a teammate who reads the spec cannot attach', async () => {
  const agent = await startAgent();
  const topic = await kafkaTopic('stream-auth', 1);
  const target = await httpTarget();
  const sidecar = startSidecar(['--queue', 'orders', '--target', target.url], agent.agentUrl);
  const split = await activateWhenAsked(fx.admin, sidecar, [
    { name: 'orders', phase: 'Active', shadow: { source: topic, group: uniqueName('g') } },
  ]);
  await agent.server.update(desiredFor(split, { orders: { shadow: topic, sessionGroup: uniqueName('g') } }));
  await sidecar.waitFor('ready');

  // What a teammate can do: read the spec (route id, hash) and try any secret.
  const refused = await rawHello(agent.url, split.spec.routeId, newSessionSecret());
  assert.equal(refused.type, 'refused');
  assert.equal(refused.type === 'refused' && refused.code, 'unauthorized');
  const unknown = await rawHello(agent.url, 'r-not-a-route', newSessionSecret());
  assert.equal(unknown.type === 'refused' && unknown.code, 'route-not-active');
  assert.deepEqual(agent.server.streamingRoutes(), [split.spec.routeId], "the owner's stream is untouched");

  sidecar.kill('SIGTERM');
  await sidecar.waitFor('detached');
});

async function rawHello(url: string, routeId: string, secret: string): Promise<AgentFrame> {
  const ws = new WebSocket(url, SESSION_SUBPROTOCOL);
  try {
    return await new Promise<AgentFrame>((resolve, reject) => {
      void answerChallenge(ws, routeId, secret, 8).catch(reject);
      ws.on('message', (data: Buffer) => {
        const decoded = decodeAgentFrame(data);
        if (decoded.ok && decoded.frame.type !== 'challenge') resolve(decoded.frame);
        else if (!decoded.ok) reject(new Error(decoded.problem));
      });
      ws.on('error', reject);
    });
  } finally {
    ws.terminate();
  }
}

test('the window: the agent never has more than the granted number of unacknowledged messages out', async () => {
  const agent = await startAgent();
  const topic = await kafkaTopic('stream-win', 2);
  const group = uniqueName('stream-win-g');
  await produce(topic, 0, ids('w0', 30));
  await produce(topic, 1, ids('w1', 30));
  const secret = newSessionSecret();
  const split = {
    spec: {
      routeId: 'r-window-test-0001',
      filter: { 'x-queue-split-user': 'alice' },
      queues: ['orders'],
      session: { publicKey: sessionPublicKey(secret) },
    },
  } as unknown as QueueSplit;
  await agent.server.update(desiredFor(split, { orders: { shadow: topic, sessionGroup: group } }));
  // A client that acks nothing: exactly `window` messages arrive, then nothing.
  const ws = new WebSocket(agent.url, SESSION_SUBPROTOCOL);
  const frames: AgentFrame[] = [];
  ws.on('message', (data: Buffer) => {
    const decoded = decodeAgentFrame(data);
    if (decoded.ok) frames.push(decoded.frame);
  });
  await answerChallenge(ws, split.spec.routeId, secret, 7);
  const messages = () =>
    frames.filter((f): f is Extract<AgentFrame, { type: 'message' }> => f.type === 'message');
  await pollUntil(
    'the window filled',
    async () => messages().length,
    (n) => n === 7,
    30_000,
  );
  await new Promise((r) => setTimeout(r, 2_000));
  assert.equal(messages().length, 7, 'no more than the window while nothing is acked');
  // Acking three frees three credits; only the acked are committed and settled.
  ws.send(
    encodeFrame({
      type: 'ack',
      tags: messages()
        .slice(0, 3)
        .map((m) => m.tag),
    }),
  );
  await pollUntil(
    'three more',
    async () => messages().length,
    (n) => n === 10,
    30_000,
  );
  const settled = await pollUntil(
    'the acked three settled',
    async () =>
      frames.filter((f) => f.type === 'settled').flatMap((f) => (f.type === 'settled' ? f.tags : [])),
    (tags) => tags.length === 3,
    30_000,
  );
  assert.deepEqual(
    [...settled].sort(),
    messages()
      .slice(0, 3)
      .map((m) => m.tag)
      .sort(),
  );
  ws.send(encodeFrame({ type: 'bye' }));
  await new Promise<void>((resolve) => ws.on('close', () => resolve()));
  const c = await committed(group, topic);
  const total = Number(c[0] ?? -1) + Number(c[1] ?? -1);
  assert.ok(total >= 1 && total <= 3, `only acked messages were committed: ${JSON.stringify(c)}`);
});

test('a dropped stream resumes: nothing lost, and only messages not yet settled come again', async () => {
  const agent = await startAgent();
  const topic = await kafkaTopic('stream-drop', 2);
  const group = uniqueName('stream-drop-g');
  const values = [ids('d0', 150), ids('d1', 150)];
  await produce(topic, 0, values[0]!);
  await produce(topic, 1, values[1]!);
  const target = await httpTarget(5);
  const sidecar = startSidecar(['--queue', 'orders', '--target', target.url], agent.agentUrl);
  const split = await activateWhenAsked(fx.admin, sidecar, [
    { name: 'orders', phase: 'Active', shadow: { source: topic, group } },
  ]);
  await agent.server.update(desiredFor(split, { orders: { shadow: topic, sessionGroup: group } }));
  await sidecar.waitFor('ready');
  await pollUntil(
    'some delivered',
    async () => sidecar.of('delivered').length,
    (n) => n >= 40,
    30_000,
  );
  agent.cut(); // the port-forward drops
  await sidecar.waitFor('warning', (w) => w.code === 'stream-interrupted');
  await pollUntil(
    'every message reported delivered',
    async () => sidecar.of('delivered').length,
    (n) => n >= 300,
    90_000,
  );
  assert.ok(agent.connections() >= 2, 'the sidecar reconnected');
  const reported = sidecar.of('delivered').map((d) => d.messageId);
  assert.equal(new Set(reported).size, reported.length, 'each message reported delivered once');
  const got = target.received.map((r) => r.body);
  for (const v of values.flat()) assert.ok(got.includes(v), `${v} delivered`);
  const duplicates = got.length - new Set(got).size;
  assert.ok(duplicates <= 64, `duplicates only of unsettled messages (window 64): ${duplicates}`);
  for (const partition of values)
    assert.deepEqual(
      [...new Set(got.filter((b) => partition.includes(b)))],
      partition,
      'first deliveries in order per partition',
    );
  assert.deepEqual(await committed(group, topic), { 0: '150', 1: '150' });
  sidecar.kill('SIGTERM');
  await sidecar.waitFor('detached');
});

test('SIGTERM during a burst: every message reported delivered is committed, the rest stays in the shadow', async () => {
  const agent = await startAgent();
  const topic = await kafkaTopic('stream-term', 1);
  const group = uniqueName('stream-term-g');
  await produce(topic, 0, ids('t', 400));
  const target = await httpTarget(3);
  const sidecar = startSidecar(['--queue', 'orders', '--target', target.url], agent.agentUrl);
  const split = await activateWhenAsked(fx.admin, sidecar, [
    { name: 'orders', phase: 'Active', shadow: { source: topic, group } },
  ]);
  await agent.server.update(desiredFor(split, { orders: { shadow: topic, sessionGroup: group } }));
  await pollUntil(
    'a burst under way',
    async () => sidecar.of('delivered').length,
    (n) => n >= 20,
    30_000,
  );
  sidecar.kill('SIGTERM');
  await sidecar.waitFor('detached');
  const reported = sidecar.of('delivered').length;
  const offset = Number((await committed(group, topic))[0]);
  assert.ok(offset >= reported, `committed ${offset} ≥ reported delivered ${reported}`);
  assert.ok(offset <= target.received.length, 'nothing committed that was not delivered');
  assert.ok(offset < 400, 'the rest stays in the shadow for the drain');
});

test('Send Test Message through the agent: published into the source when it matches the filter, refused otherwise', async () => {
  const agent = await startAgent();
  const topic = await kafkaTopic('stream-pub', 1);
  const target = await httpTarget();
  const sidecar = startSidecar(['--queue', 'orders', '--target', target.url], agent.agentUrl);
  const split = await activateWhenAsked(fx.admin, sidecar, [
    { name: 'orders', phase: 'Active', shadow: { source: topic, group: uniqueName('g') } },
  ]);
  // The plan's source is the workload's topic: create it so the publish has a destination.
  await createTopic(kafkaClient(loadServices(), 'qs-sidecar-topics'), fx.workload.ordersTopic, 1);
  await agent.server.update(desiredFor(split, { orders: { shadow: topic, sessionGroup: uniqueName('g') } }));
  await sidecar.waitFor('ready');
  const publish = (id: string, user: string, body: string) =>
    sidecar.send(
      JSON.stringify({ type: 'publish', id, queue: 'orders', headers: { 'x-queue-split-user': user }, body }),
    );
  publish('ok-1', 'alice', 'hello');
  publish('no-1', 'bob', 'not mine');
  const ok = await sidecar.waitFor('publish-result', (m) => m.id === 'ok-1');
  const no = await sidecar.waitFor('publish-result', (m) => m.id === 'no-1');
  assert.equal(ok.published, true);
  assert.match(ok.messageId ?? '', /^qs-test-/, 'the published message is named');
  assert.equal(no.published, false);
  assert.match(no.reason ?? '', /do not match your split's filter/);
  assert.ok(!(no.reason ?? '').includes('bob'), 'no header value in the answer');
  const source = await fx.kadmin.fetchTopicOffsets(fx.workload.ordersTopic);
  assert.equal(source[0]?.high, '1', 'exactly the matching message reached the source');
  sidecar.kill('SIGTERM');
  await sidecar.waitFor('detached');
});

test('a route leaving ACTIVE ends its stream and the agent stops reading its shadow before the drain', async () => {
  const agent = await startAgent();
  const queue = uniqueName('stream-drain');
  await fx.channel.assertQueue(queue, { durable: true });
  await publishAmqp(queue, ids('dr', 5));
  const target = await httpTarget();
  const sidecar = startSidecar(['--queue', 'invoices', '--target', target.url], agent.agentUrl);
  const split = await activateWhenAsked(fx.admin, sidecar, [
    { name: 'invoices', phase: 'Active', shadow: { source: queue } },
  ]);
  await agent.server.update(desiredFor(split, { invoices: { shadow: queue } }));
  await pollUntil(
    'delivered',
    async () => sidecar.of('delivered').length,
    (n) => n === 5,
    30_000,
  );
  await agent.server.update(desiredFor(split, { invoices: { shadow: queue } }, 'DRAINING'));
  assert.deepEqual(agent.server.streamingRoutes(), [], 'the stream ended with update()');
  const consumers = await pollUntil(
    'no consumer on the session shadow',
    async () => (await getQueue(services.rabbitManagementUrl, queue))?.consumers,
    (n) => n === 0,
    30_000,
  );
  assert.equal(consumers, 0);
  await sidecar.ensureDead();
});

/** A raw session client: every frame it got, and how its WebSocket closed. */
async function rawClient(url: string) {
  const ws = new WebSocket(url, SESSION_SUBPROTOCOL);
  const frames: AgentFrame[] = [];
  ws.on('message', (data: Buffer) => {
    const decoded = decodeAgentFrame(data);
    if (decoded.ok) frames.push(decoded.frame);
  });
  const closed = new Promise<number>((resolve) => ws.on('close', (code) => resolve(code)));
  const challenged = challengeOf(ws);
  await new Promise<void>((resolve, reject) => {
    ws.on('open', () => resolve());
    ws.on('error', reject);
  });
  const challenge = await challenged;
  fx.defer(() => ws.terminate());
  return {
    ws,
    frames,
    closed,
    hello: (routeId: string, secret: string, window = 8) =>
      ws.send(helloFor(challenge, routeId, secret, window)),
    welcomed: () => frames.some((f) => f.type === 'welcome'),
    refusal: () => frames.find((f): f is Extract<AgentFrame, { type: 'refused' }> => f.type === 'refused'),
    messages: () => frames.filter((f): f is Extract<AgentFrame, { type: 'message' }> => f.type === 'message'),
  };
}

/** A route the test serves without a sidecar (no QueueSplit): its id, secret and spec. */
function rawRoute(queues: string[]): { split: QueueSplit; secret: string } {
  const secret = newSessionSecret();
  const split = {
    spec: {
      routeId: `r-${uniqueName('raw')
        .replace(/[^a-z0-9]/g, '')
        .slice(-14)}`,
      filter: { 'x-queue-split-user': 'alice' },
      queues,
      session: { publicKey: sessionPublicKey(secret) },
    },
  } as unknown as QueueSplit;
  return { split, secret };
}

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

/** What the route's drain waits for on the RabbitMQ shadow: no consumer (live, not statistics). */
async function shadowConsumers(queue: string): Promise<number> {
  return (await fx.channel.checkQueue(queue)).consumerCount;
}

/** Plays the route's drain on a RabbitMQ shadow: takes every message in it (none held elsewhere). */
async function drainRabbit(queue: string): Promise<string[]> {
  const got: string[] = [];
  for (;;) {
    const msg = await fx.channel.get(queue, { noAck: true });
    if (msg === false) return got;
    got.push(msg.content.toString('utf8'));
  }
}

async function groupMembers(group: string): Promise<number> {
  const { groups } = await fx.kadmin.describeGroups([group]);
  return groups[0]?.members.length ?? 0;
}

test('a session reader outlives its stream: a stream closed 300 ms after hello, while the agent is still connecting to the broker, leaves no consumer on the RabbitMQ shadow and no member in the Kafka session group, and the route drains', async () => {
  const agent = await startAgent();
  const CONNECT_DELAY_MS = 2_000;
  const amqpLink = await brokerProxy('amqp');
  const kafkaLink = await brokerProxy('kafka');
  amqpLink.proxy.delayConnect(CONNECT_DELAY_MS);
  kafkaLink.proxy.delayConnect(CONNECT_DELAY_MS);
  const queue = uniqueName('stream-late-q');
  await fx.channel.assertQueue(queue, { durable: true });
  await publishAmqp(queue, ids('late', 5));
  const topic = await kafkaTopic('stream-late-k', 1);
  await produce(topic, 0, ids('late-k', 5));
  const group = uniqueName('stream-late-g');
  const env = { amqp: amqpLink.env, brokers: kafkaLink.env };

  // One route per broker: the server starts a route's readers one after the other.
  for (const [name, shadows] of [
    ['invoices', { invoices: { shadow: queue } }],
    ['orders', { orders: { shadow: topic, sessionGroup: group } }],
  ] as const) {
    const { split, secret } = rawRoute([name]);
    await agent.server.update(desiredFor(split, shadows, 'ACTIVE', env));
    const client = await rawClient(agent.url);
    client.hello(split.spec.routeId, secret);
    await pollUntil(`${name}: welcomed`, async () => client.welcomed(), Boolean, 10_000);
    await sleep(300);
    client.ws.close();
    await pollUntil(
      `${name}: session.closed`,
      async () => agent.server.streamingRoutes(),
      (routes) => !routes.includes(split.spec.routeId),
      40_000,
    );
    // By now a reader started anyway would be attached: the delayed connect is long over.
    await sleep(CONNECT_DELAY_MS + 3_000);
    if (name === 'invoices') {
      assert.equal(await shadowConsumers(queue), 0, 'no consumer left on the RabbitMQ session shadow');
    } else {
      assert.equal(await groupMembers(group), 0, 'no member left in the Kafka session group');
    }
    await agent.server.update(desiredFor(split, shadows, 'DRAINING', env));
  }
  // The drain: everything is still in the shadows, nothing held by a reader of ours.
  assert.deepEqual((await drainRabbit(queue)).sort(), ids('late', 5).sort(), 'the drain takes every message');
  const c = await committed(group, topic);
  assert.ok(Number(c[0] ?? '-1') <= 0, `nothing committed for the session group: ${JSON.stringify(c)}`);
  assert.equal(await groupMembers(group), 0, 'the drain finds the session group empty');
});

test('two streams can serve one route: of two hellos with the same secret in one tick exactly one is served and the other refused as replaced, the stream they replace is told so, and the route drains with no reader left', async () => {
  const agent = await startAgent();
  const queue = uniqueName('stream-twice-q');
  await fx.channel.assertQueue(queue, { durable: true });
  await publishAmqp(queue, ids('twice', 20));
  const { split, secret } = rawRoute(['invoices']);
  const shadows = { invoices: { shadow: queue } };
  await agent.server.update(desiredFor(split, shadows));
  const first = await rawClient(agent.url);
  first.hello(split.spec.routeId, secret);
  await pollUntil('first stream welcomed', async () => first.welcomed(), Boolean, 10_000);
  await pollUntil(
    'first stream receives',
    async () => first.messages().length,
    (n) => n > 0,
    10_000,
  );

  const [a, b] = await Promise.all([rawClient(agent.url), rawClient(agent.url)]);
  a.hello(split.spec.routeId, secret);
  b.hello(split.spec.routeId, secret);
  await pollUntil(
    'both answered',
    async () => [a, b].filter((c) => c.welcomed() || c.refusal()).length,
    (n) => n === 2,
    20_000,
  );
  await sleep(1_000);
  const served = [a, b].filter((c) => c.welcomed() && !c.refusal());
  assert.equal(served.length, 1, 'exactly one of the two hellos is served');
  const other = served[0] === a ? b : a;
  assert.equal(other.refusal()?.code, 'replaced', 'the other is refused as replaced');
  assert.equal(await other.closed, 4409);
  assert.equal(first.refusal()?.code, 'replaced', 'the replaced stream is told why it ends');
  assert.equal(await first.closed, 4409);
  assert.deepEqual(agent.server.streamingRoutes(), [split.spec.routeId]);

  await agent.server.update(desiredFor(split, shadows, 'DRAINING'));
  assert.equal(await shadowConsumers(queue), 0, 'no reader of ours left on the session shadow');
  assert.deepEqual(
    (await drainRabbit(queue)).sort(),
    ids('twice', 20).sort(),
    'the drain takes every message',
  );
});

/** The session secret a running sidecar keeps in its state file. */
function sidecarSecret(): string {
  for (const file of fs.readdirSync(fx.stateDir)) {
    if (!file.endsWith('.json')) continue;
    const state = JSON.parse(fs.readFileSync(path.join(fx.stateDir, file), 'utf8')) as {
      sessionSecret?: string;
    };
    if (state.sessionSecret) return state.sessionSecret;
  }
  throw new Error('no session secret in the state files');
}

test('two streams can serve one route: a sidecar whose stream another client took over reports the refusal once and does not take the route back', async () => {
  for (const file of fs.readdirSync(fx.stateDir)) fs.rmSync(path.join(fx.stateDir, file), { force: true });
  const agent = await startAgent();
  const queue = uniqueName('stream-taken-q');
  await fx.channel.assertQueue(queue, { durable: true });
  const target = await httpTarget();
  const sidecar = startSidecar(['--queue', 'invoices', '--target', target.url], agent.agentUrl);
  // The agent knows the route before the split is Active (CI: a sidecar that saw Active first
  // was refused route-not-active, reconnected, and the count below said 2).
  const split = await activateWhenAsked(
    fx.admin,
    sidecar,
    [{ name: 'invoices', phase: 'Active', shadow: { source: queue } }],
    (pending) => agent.server.update(desiredFor(pending, { invoices: { shadow: queue } })),
  );
  await sidecar.waitFor('ready');
  const other = await rawClient(agent.url);
  other.hello(split.spec.routeId, sidecarSecret());
  await pollUntil('the other client served', async () => other.welcomed(), Boolean, 10_000);
  const refused = await sidecar.waitFor('error', (e) => e.code === 'session-refused', 10_000);
  assert.match(refused.message, /another client/);
  await sleep(3_000);
  assert.equal(other.refusal(), undefined, 'the other client keeps the route');
  assert.equal(agent.connections(), 1, 'the sidecar did not reconnect');
  assert.equal(sidecar.of('error').length, 1, 'reported once');
  assert.equal(
    sidecar.of('warning').filter((w) => w.code === 'stream-interrupted').length,
    0,
    'not taken for a dropped stream',
  );
  assert.deepEqual(agent.server.streamingRoutes(), [split.spec.routeId]);
  await sidecar.ensureDead();
});

test('RabbitMQ settles before the broker has the ack: with the agent’s broker link stalled and then cut right after acks, no message reported delivered is delivered again', async () => {
  const agent = await startAgent();
  const amqpLink = await brokerProxy('amqp');
  const queue = uniqueName('stream-ackcut-q');
  await fx.channel.assertQueue(queue, { durable: true });
  const all = ids('ackcut', 300);
  await publishAmqp(queue, all);
  const target = await httpTarget(5);
  const sidecar = startSidecar(['--queue', 'invoices', '--target', target.url], agent.agentUrl);
  const split = await activateWhenAsked(fx.admin, sidecar, [
    { name: 'invoices', phase: 'Active', shadow: { source: queue } },
  ]);
  await agent.server.update(
    desiredFor(split, { invoices: { shadow: queue } }, 'ACTIVE', { amqp: amqpLink.env }),
  );
  await pollUntil(
    'some delivered',
    async () => sidecar.of('delivered').length,
    (n) => n >= 20,
    30_000,
  );
  // The agent's acks from now on never reach the broker; deliveries of what it prefetched go on.
  amqpLink.proxy.stall();
  const atStall = target.received.length;
  await pollUntil(
    'deliveries acked while the link is stalled',
    async () => target.received.length,
    (n) => n >= atStall + 10,
    30_000,
  );
  await sleep(1_000);
  const reportedBeforeCut = new Set(sidecar.of('delivered').map((d) => d.messageId));
  const receivedBeforeCut = target.received.length;
  amqpLink.proxy.cut();
  await pollUntil(
    'every message reported delivered',
    async () => new Set(sidecar.of('delivered').map((d) => d.messageId)).size,
    (n) => n >= all.length,
    90_000,
  );
  const again = target.received.slice(receivedBeforeCut).filter((r) => reportedBeforeCut.has(r.body));
  assert.deepEqual(
    again.map((r) => r.body),
    [],
    'a message reported delivered before the cut is never delivered again',
  );
  const reported = sidecar.of('delivered').map((d) => d.messageId);
  assert.equal(new Set(reported).size, reported.length, 'each message reported delivered once');
  assert.equal((await fx.channel.checkQueue(queue)).messageCount, 0, 'nothing left for the drain');
  sidecar.kill('SIGTERM');
  await sidecar.waitFor('detached');
});

test('an ack the broker took whose proof never came back (RabbitMQ, the replies of the agent’s broker link stalled, then cut): each message is reported delivered once, and none reported delivered is delivered again', async () => {
  const agent = await startAgent();
  const amqpLink = await brokerProxy('amqp');
  const queue = uniqueName('stream-proofcut-q');
  await fx.channel.assertQueue(queue, { durable: true });
  const all = ids('proofcut', 120);
  await publishAmqp(queue, all);
  const target = await httpTarget(5);
  const sidecar = startSidecar(['--queue', 'invoices', '--target', target.url], agent.agentUrl);
  const split = await activateWhenAsked(fx.admin, sidecar, [
    { name: 'invoices', phase: 'Active', shadow: { source: queue } },
  ]);
  await agent.server.update(
    desiredFor(split, { invoices: { shadow: queue } }, 'ACTIVE', { amqp: amqpLink.env }),
  );
  await pollUntil(
    'some delivered',
    async () => sidecar.of('delivered').length,
    (n) => n >= 20,
    30_000,
  );
  // The broker still gets the agent's acks, but its answers (the proofs that it has them) and
  // new deliveries never come back; what the agent already holds is still delivered and acked.
  amqpLink.proxy.stallReplies();
  const atStall = target.received.length;
  await pollUntil(
    'deliveries acked while the replies are stalled',
    async () => target.received.length,
    (n) => n >= atStall + 5,
    30_000,
  );
  await sleep(1_000);
  const reportedBeforeCut = new Set(sidecar.of('delivered').map((d) => d.messageId));
  const receivedBeforeCut = target.received.length;
  amqpLink.proxy.cut();
  await pollUntil(
    'every message reported delivered',
    async () => new Set(sidecar.of('delivered').map((d) => d.messageId)).size,
    (n) => n >= all.length,
    60_000,
  ).catch((err: unknown) => {
    const reported = new Set(sidecar.of('delivered').map((d) => d.messageId));
    const missing = all.filter((id) => !reported.has(id));
    throw new Error(
      `${err instanceof Error ? err.message : String(err)}; ${reported.size} of ${all.length} reported, never reported: ${missing.slice(0, 10).join(', ')}${missing.length > 10 ? ', …' : ''} (the broker has their acks: they are not in ${queue})`,
    );
  });
  const again = target.received.slice(receivedBeforeCut).filter((r) => reportedBeforeCut.has(r.body));
  assert.deepEqual(
    again.map((r) => r.body),
    [],
    'a message reported delivered before the cut is never delivered again',
  );
  const reported = sidecar.of('delivered').map((d) => d.messageId);
  assert.equal(new Set(reported).size, reported.length, 'each message reported delivered once');
  assert.equal((await fx.channel.checkQueue(queue)).messageCount, 0, 'nothing left for the drain');
  sidecar.kill('SIGTERM');
  await sidecar.waitFor('detached');
});

for (const queueType of ['classic', 'quorum'] as const) {
  test(`one message stalls a route forever (${queueType}): an AMQP timestamp of 2**53 is carried with its time normalised, the messages after it flow, and the stream never reconnects`, async () => {
    const agent = await startAgent();
    const queue = uniqueName(`stream-ts-${queueType}`);
    await fx.channel.assertQueue(queue, { durable: true, arguments: { 'x-queue-type': queueType } });
    const values = ids(`ts-${queueType}`, 5);
    for (const [i, value] of values.entries())
      fx.channel.sendToQueue(queue, Buffer.from(value), {
        persistent: true,
        messageId: value,
        headers: { 'x-queue-split-user': 'alice' },
        ...(i === 1 ? { timestamp: 2 ** 53 } : {}),
      });
    await fx.channel.waitForConfirms();
    const target = await httpTarget();
    const sidecar = startSidecar(['--queue', 'invoices', '--target', target.url], agent.agentUrl);
    await activateWhenAsked(
      fx.admin,
      sidecar,
      [{ name: 'invoices', phase: 'Active', shadow: { source: queue } }],
      (pending) => agent.server.update(desiredFor(pending, { invoices: { shadow: queue } })),
    );
    await pollUntil(
      'every message reported delivered',
      async () => sidecar.of('delivered').length,
      (n) => n >= values.length,
      30_000,
    );
    assert.deepEqual(
      target.received.map((r) => r.body),
      values,
      'each once, in order',
    );
    assert.equal(agent.connections(), 1, 'no reconnect');
    assert.equal(sidecar.of('warning').filter((w) => w.code === 'stream-interrupted').length, 0);
    assert.equal((await fx.channel.checkQueue(queue)).messageCount, 0);
    sidecar.kill('SIGTERM');
    await sidecar.waitFor('detached');
  });
}

test('the agent can be run out of memory: idle and half-sent connections are capped and cut, and a slow reader of large messages holds at most the byte budget unacknowledged', async () => {
  const agent = await startAgent();

  // 1. Forty idle upgrades at once: only SESSION_BOUNDS.maxPreAuth (16) are let in, the rest get
  // 503; an idle one is refused at the hello timeout and its socket is gone soon after (not the
  // 30 s ws waits for a close the peer never answers).
  const idle = await Promise.all(Array.from({ length: 40 }, () => rawUpgrade(agent.url)));
  const admitted = idle.filter((c) => c.status === 101);
  assert.equal(admitted.length, 16, `admitted ${admitted.length} of 40 idle upgrades`);
  assert.ok(
    idle.every((c) => c.status === 101 || c.status === 503),
    `statuses: ${idle.map((c) => c.status)}`,
  );
  for (const c of idle.filter((c) => c.status !== 101)) c.socket.destroy();
  const lifetimes = await Promise.all(admitted.map((c) => c.closed));
  assert.ok(Math.max(...lifetimes) < 15_000, `idle sockets lived up to ${Math.max(...lifetimes)} ms`);

  // 2. 200 connections that each send 1 MiB of a frame announced as 2 MiB, before any hello:
  // each is cut past 256 KiB, so what the agent buffers stays small (old: ~200 MiB held).
  const payload = Buffer.alloc(1024 * 1024, 7);
  const rssBefore = process.memoryUsage().rss;
  let halfSentAdmitted = 0;
  await Promise.all(
    Array.from({ length: 200 }, async () => {
      const c = await rawUpgrade(agent.url);
      if (c.status !== 101) return c.socket.destroy();
      halfSentAdmitted++;
      c.socket.write(frameHeader(2 * 1024 * 1024));
      c.socket.write(payload); // one buffer for all: the test's own memory must not count
      const lived = await c.closed;
      assert.ok(lived < 10_000, `a half-sent connection lived ${lived} ms`);
    }),
  );
  const grown = (process.memoryUsage().rss - rssBefore) / 2 ** 20;
  assert.ok(halfSentAdmitted > 0, 'some half-sent connections were admitted (and then cut)');
  assert.ok(grown < 64, `the process grew ${grown.toFixed(0)} MiB while 200 half-sent frames came in`);

  // 3. The owner still gets in, and reads slowly: twelve 4 MiB messages, window 64, nothing
  // acked. Exactly 16 MiB (four) are sent, and the broker pushed the agent few more than that.
  const queue = uniqueName('stream-big');
  await fx.channel.assertQueue(queue, { durable: true });
  // Just under 4 MiB, so that four frames (body and envelope) fit the 16 MiB budget.
  const big = Buffer.alloc(4 * 1024 * 1024 - 4096, 1);
  for (let i = 0; i < 12; i++)
    fx.channel.sendToQueue(queue, big, {
      persistent: true,
      messageId: `big-${i}`,
      headers: { 'x-queue-split-user': 'alice' },
    });
  await fx.channel.waitForConfirms();
  const secret = newSessionSecret();
  const split = {
    spec: {
      routeId: 'r-budget-test-0001',
      filter: { 'x-queue-split-user': 'alice' },
      queues: ['invoices'],
      session: { publicKey: sessionPublicKey(secret) },
    },
  } as unknown as QueueSplit;
  await agent.server.update(desiredFor(split, { invoices: { shadow: queue } }));
  const ws = new WebSocket(agent.url, SESSION_SUBPROTOCOL);
  const frames: AgentFrame[] = [];
  ws.on('message', (data: Buffer) => {
    const decoded = decodeAgentFrame(data);
    if (decoded.ok) frames.push(decoded.frame);
  });
  await answerChallenge(ws, split.spec.routeId, secret, 64);
  const messages = () =>
    frames.filter((f): f is Extract<AgentFrame, { type: 'message' }> => f.type === 'message');
  await pollUntil(
    'the byte budget filled',
    async () => messages().length,
    (n) => n === 4,
    30_000,
  );
  await new Promise((r) => setTimeout(r, 2_000));
  assert.equal(messages().length, 4, 'no more than 16 MiB out while nothing is acked');
  const held = await pollUntil(
    'the broker figures caught up',
    () => getQueue(services.rabbitManagementUrl, queue),
    (q) => (q.messages_unacknowledged ?? 0) + (q.messages_ready ?? 0) === 12,
    30_000,
  );
  assert.ok(
    (held.messages_unacknowledged ?? 0) <= 8,
    `the agent holds ${held.messages_unacknowledged} unacked deliveries of 4 MiB (prefetch follows the sizes)`,
  );
  // Acking frees the budget: every message comes, none twice.
  const acked = new Set<number>();
  const ackAll = setInterval(() => {
    const tags = messages()
      .map((m) => m.tag)
      .filter((t) => !acked.has(t));
    tags.forEach((t) => acked.add(t));
    if (tags.length > 0) ws.send(encodeFrame({ type: 'ack', tags }));
  }, 50);
  await pollUntil(
    'all twelve',
    async () => messages().length,
    (n) => n >= 12,
    60_000,
  );
  clearInterval(ackAll);
  assert.equal(new Set(messages().map((m) => m.message.id)).size, 12);
  ws.send(encodeFrame({ type: 'bye' }));
  await new Promise<void>((resolve) => ws.on('close', () => resolve()));
});

test('the sidecar sends its raw secret to any pod with the agent’s labels: a look-alike that records what it is sent learns nothing it can replay, and one that relays the real agent’s challenge is refused before anything is signed', async () => {
  const agent = await startAgent();
  const { split, secret } = rawRoute(['invoices']);
  const queue = uniqueName('stream-decoy');
  await fx.channel.assertQueue(queue, { durable: true });
  await agent.server.update(desiredFor(split, { invoices: { shadow: queue } }));
  const silent = new Reporter(
    new Writable({ write: (_c, _e, done) => done() }),
    new Writable({ write: (_c, _e, done) => done() }),
  );
  const handler = {
    deliver: async () => ({ settle: 'ack' as const, attempts: 1 }),
    settled: () => undefined,
  };
  const streamTo = (url: string, podUid?: string) =>
    new AgentStream({
      routeId: split.spec.routeId,
      secret,
      endpoint: {
        open: async () => ({
          url,
          describe: `decoy ${url}`,
          ...(podUid ? { podUid } : {}),
          close: () => undefined,
        }),
      },
      handlers: new Map([['invoices', handler]]),
      reporter: silent,
      onFatal: () => undefined,
      startTimeoutMs: 2_000,
    });

  // 1. A recorder: it challenges like an agent and keeps every byte it is sent.
  const recorded: Buffer[] = [];
  const decoy = new WebSocketServer({
    port: 0,
    host: '127.0.0.1',
    handleProtocols: () => SESSION_SUBPROTOCOL,
  });
  fx.defer(() => new Promise<void>((resolve) => decoy.close(() => resolve())));
  await new Promise((resolve) => decoy.once('listening', resolve));
  decoy.on('connection', (ws) => {
    ws.send(encodeFrame({ type: 'challenge', nonce: newNonce(), podUid: 'decoy-pod' }));
    ws.on('message', (data: Buffer) => {
      recorded.push(data);
      ws.close(); // it has what it came for
    });
  });
  const decoyUrl = `ws://127.0.0.1:${(decoy.address() as AddressInfo).port}${SESSION_PATH}`;
  await assert.rejects(streamTo(decoyUrl, 'decoy-pod').start());
  const hello = recorded.map((b) => decodeClientFrame(b)).find((d) => d.ok && d.frame.type === 'hello');
  assert.ok(hello?.ok && hello.frame.type === 'hello', 'the recorder got a hello');
  assert.ok(!recorded.some((b) => b.toString('latin1').includes(secret)), 'the secret itself was never sent');
  // Replayed to the real agent (which challenges afresh), the recorded hello is refused.
  const replay = new WebSocket(agent.url, SESSION_SUBPROTOCOL);
  const replayed = new Promise<AgentFrame>((resolve, reject) => {
    replay.on('message', (data: Buffer) => {
      const decoded = decodeAgentFrame(data);
      if (!decoded.ok) return reject(new Error(decoded.problem));
      if (decoded.frame.type === 'challenge') replay.send(recorded.find((b) => decodeClientFrame(b).ok)!);
      else resolve(decoded.frame);
    });
  });
  const refusal = await replayed;
  replay.terminate();
  assert.equal(refusal.type === 'refused' && refusal.code, 'unauthorized', JSON.stringify(refusal));

  // 2. A relay in front of the real agent, reached as pod "decoy-pod": the challenge it passes
  // on names the real agent's pod, so the sidecar refuses to sign it and says why.
  const relay = await startFaultProxy({ host: '127.0.0.1', port: Number(new URL(agent.url).port) });
  fx.defer(() => relay.close());
  const relayUrl = `ws://127.0.0.1:${relay.port}${SESSION_PATH}`;
  await assert.rejects(streamTo(relayUrl, 'decoy-pod').start(), (err: unknown) => {
    assert.equal((err as SidecarError).code, 'agent-impostor');
    assert.match((err as Error).message, /relays another pod's challenge: it is not the queue-agent/);
    return true;
  });
  assert.deepEqual(agent.server.streamingRoutes(), [], 'the real agent serves no stream to the relay');
  // The same path, reached as the pod it is, streams.
  const genuine = streamTo(relayUrl, AGENT_POD_UID);
  await genuine.start();
  assert.deepEqual(agent.server.streamingRoutes(), [split.spec.routeId]);
  await genuine.stop();
});
