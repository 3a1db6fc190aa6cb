// Session delivery through the queue-agent (core/sessionStream.ts), the default for http and
// relay: the agent's session endpoint (agent/session/, run here in the test process against the
// real brokers, as the agent runs it in its pod) reads the route's session shadows and streams
// them to the shipped sidecar bundle, which is given no broker address and may not read the
// workload's Secrets. The port-forward leg (sidecar/agentPortForward.ts) is proven on the real
// node by the cluster suite (test/cluster/session-stream.test.ts); here the sidecar connects with
// --agent-url, through a TCP relay the tests can cut.
import assert from 'node:assert/strict';
import * as fs from 'node:fs';
import * as http from 'node:http';
import * as net from 'node:net';
import type { AddressInfo } from 'node:net';
import * as os from 'node:os';
import * as path from 'node:path';
import { after, before, test } from 'node:test';
import type { KubeConfig } from '@kubernetes/client-node';
import * as amqp from 'amqplib';
import { Kafka, logLevel, type Admin, type Producer } from 'kafkajs';
import WebSocket from 'ws';
import { jsonLogger } from '../../agent/engine/log';
import { SessionServer } from '../../agent/session/sessionServer';
import { DESIRED_API_VERSION, type AgentRoute, type DesiredState } from '../../core/agentProtocol';
import { QUEUE_SPLIT_GROUP, type QueueSplit } from '../../core/crd/queueSplitSchema';
import { newSessionSecret, secretHash } from '../../core/sessionSecret';
import {
  SESSION_PATH,
  SESSION_SUBPROTOCOL,
  decodeAgentFrame,
  encodeFrame,
  type AgentFrame,
} from '../../core/sessionStream';
import { runDir } from '../env/paths';
import { adminConfig, createNamespace, deleteNamespace } from '../support/kube';
import { pollUntil } from '../support/poll';
import { getQueue } from '../support/rabbitManagement';
import { loadServices, uniqueName } from '../support/services';
import { startGroupProxy, type GroupProxy } from './groupProxy';
import {
  PRIVATE_GROUP,
  SidecarProcess,
  activateWhenAsked,
  createWorkload,
  developerKubeconfig,
  ensureCrd,
  listSplits,
  patchMetadata,
  sidecarBundle,
  type WorkloadSetup,
} from './support';

const services = loadServices();
const kafka = new Kafka({
  clientId: 'qs-stream-test',
  brokers: services.kafkaBrokers,
  logLevel: logLevel.NOTHING,
});
// The agent pod's env as the controller copies it: names in the plan, values in the env.
process.env.QS_STREAM_TEST_BROKERS = services.kafkaBrokers.join(',');
process.env.QS_STREAM_TEST_AMQP = services.amqpUrl;
process.env.QS_STREAM_TEST_MGMT = services.rabbitManagementUrl;

let admin: KubeConfig;
let namespace: string;
let bundle: string;
let noSecrets: string;
let workload: WorkloadSetup;
let stateDir: string;
let kadmin: Admin;
let producer: Producer;
let amqpModel: amqp.ChannelModel;
let channel: amqp.ConfirmChannel;
let proxy: GroupProxy;
const running: SidecarProcess[] = [];
const cleanups: (() => Promise<void> | void)[] = [];

before(async () => {
  admin = adminConfig(services.kubeconfig);
  [bundle] = await Promise.all([sidecarBundle(), ensureCrd(admin)]);
  proxy = await startGroupProxy(
    admin.getCurrentCluster()!.server,
    path.join(runDir, 'k8s', 'pki', 'ca.crt'),
    QUEUE_SPLIT_GROUP,
    PRIVATE_GROUP,
  );
  namespace = await createNamespace(admin, 'stream-suite');
  // No Secret access: the agent transport reads none (the workload's AMQP URL is in a Secret).
  noSecrets = await developerKubeconfig(admin, namespace, 'no-secrets', false, proxy.url);
  workload = await createWorkload(admin, namespace, 'orders', services.amqpUrl, uniqueName('w'));
  stateDir = fs.mkdtempSync(path.join(os.tmpdir(), 'qs-stream-state-'));
  kadmin = kafka.admin();
  await kadmin.connect();
  producer = kafka.producer({ allowAutoTopicCreation: false });
  await producer.connect();
  amqpModel = await amqp.connect(services.amqpUrl);
  channel = await amqpModel.createConfirmChannel();
});

after(async () => {
  await Promise.all(running.map((s) => s.ensureDead()));
  for (const c of cleanups.reverse()) await c();
  for (const split of await listSplits(admin, namespace).catch(() => [])) {
    if (split.metadata.finalizers?.length)
      await patchMetadata(admin, namespace, split.metadata.name, { finalizers: null }).catch(() => undefined);
  }
  await deleteNamespace(admin, namespace);
  await producer?.disconnect();
  await kadmin?.disconnect();
  await amqpModel?.close().catch(() => undefined);
  await proxy?.close();
  fs.rmSync(stateDir, { recursive: true, force: true });
  if (!process.env.QS_SIDECAR_BUNDLE) fs.rmSync(path.dirname(bundle), { recursive: true, force: true });
  if (noSecrets) fs.rmSync(noSecrets, { force: true });
});

/** The agent's session endpoint on a local HTTP server, with a TCP relay in front the tests can cut. */
async function startAgent(): Promise<{
  server: SessionServer;
  url: string;
  agentUrl: string;
  cut: () => void;
  connections: () => number;
}> {
  const server = new SessionServer(jsonLogger().child({ component: 'session-test' }));
  const httpServer = http.createServer((_req, res) => res.writeHead(404).end());
  server.attach(httpServer);
  await new Promise<void>((resolve) => httpServer.listen(0, '127.0.0.1', resolve));
  const agentPort = (httpServer.address() as AddressInfo).port;
  const sockets = new Set<net.Socket>();
  let accepted = 0;
  const relay = net.createServer((client) => {
    accepted++;
    const upstream = net.connect(agentPort, '127.0.0.1');
    for (const s of [client, upstream]) {
      sockets.add(s);
      s.on('error', () => undefined);
      s.on('close', () => {
        sockets.delete(s);
        client.destroy();
        upstream.destroy();
      });
    }
    client.pipe(upstream).pipe(client);
  });
  await new Promise<void>((resolve) => relay.listen(0, '127.0.0.1', resolve));
  const relayPort = (relay.address() as AddressInfo).port;
  cleanups.push(async () => {
    await server.close();
    for (const s of sockets) s.destroy();
    relay.close();
    httpServer.close();
  });
  return {
    server,
    url: `ws://127.0.0.1:${agentPort}${SESSION_PATH}`,
    agentUrl: `ws://127.0.0.1:${relayPort}${SESSION_PATH}`,
    cut: () => {
      for (const s of sockets) s.destroy();
    },
    connections: () => accepted,
  };
}

/** The desired document the controller would write for one active route of `split`. */
function desiredFor(
  split: QueueSplit,
  shadows: AgentRoute['shadows'],
  phase: AgentRoute['phase'] = 'ACTIVE',
): DesiredState {
  return {
    apiVersion: DESIRED_API_VERSION,
    activationId: 'test/uid',
    generation: 2,
    phase: 'ACTIVE',
    queues: [
      {
        name: 'orders',
        provider: 'kafka',
        source: workload.ordersTopic,
        group: workload.kafkaGroup,
        env: { brokers: 'QS_STREAM_TEST_BROKERS' },
        epoch: 0,
        names: { appShadow: 'unused' },
      },
      {
        name: 'invoices',
        provider: 'rabbitmq',
        source: workload.invoiceQueue,
        env: { url: 'QS_STREAM_TEST_AMQP', managementUrl: 'QS_STREAM_TEST_MGMT' },
        epoch: 0,
        names: { appShadow: 'unused' },
      },
    ],
    routes: [
      {
        routeId: split.spec.routeId,
        filter: split.spec.filter,
        queues: split.spec.queues,
        phase,
        generation: 2,
        shadows,
        ...(split.spec.session ? { secretHash: split.spec.session.secretHash } : {}),
      },
    ],
  };
}

function startSidecar(args: readonly string[], agentUrl: string): SidecarProcess {
  const sidecar = new SidecarProcess(
    bundle,
    [
      ...[
        '--kubeconfig',
        noSecrets,
        '-n',
        namespace,
        '-w',
        `deployment/${workload.name}`,
        '--owner',
        'alice',
      ],
      ...['--lease-seconds', '10', '--poll-interval', '250', '--detach-timeout', '30'],
      ...['--state-file', path.join(stateDir, `${uniqueName('state')}.json`), '--agent-url', agentUrl],
      ...args,
    ],
    { ...process.env, XDG_STATE_HOME: stateDir },
  );
  running.push(sidecar);
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
  cleanups.push(() => new Promise<void>((resolve) => server.close(() => resolve())));
  return {
    url: `http://127.0.0.1:${(server.address() as AddressInfo).port}/events`,
    received,
    maxInFlight: () => maxInFlight,
  };
}

async function kafkaTopic(prefix: string, partitions: number): Promise<string> {
  const topic = uniqueName(prefix);
  await kadmin.createTopics({ waitForLeaders: true, topics: [{ topic, numPartitions: partitions }] });
  return topic;
}

async function committed(group: string, topic: string): Promise<Record<number, string>> {
  const offsets = await kadmin.fetchOffsets({ groupId: group, topics: [topic] });
  return Object.fromEntries(offsets[0]!.partitions.map((p) => [p.partition, p.offset]));
}

async function produce(topic: string, partition: number, values: readonly string[]): Promise<void> {
  await producer.send({
    topic,
    acks: -1,
    messages: values.map((value) => ({ partition, value, headers: { 'x-queue-split-user': 'alice' } })),
  });
}

async function publishAmqp(queue: string, values: readonly string[]): Promise<void> {
  for (const value of values)
    channel.sendToQueue(queue, Buffer.from(value), {
      persistent: true,
      messageId: value,
      headers: { 'x-queue-split-user': 'alice' },
    });
  await channel.waitForConfirms();
}

const ids = (prefix: string, n: number) => Array.from({ length: n }, (_, i) => `${prefix}-${i}`);

test('http through the queue-agent (Kafka + RabbitMQ): streamed in order per partition, each committed or acked before it is reported delivered; the sidecar reads no Secret and dials no broker', async () => {
  const agent = await startAgent();
  const topic = await kafkaTopic('stream-k', 3);
  const group = uniqueName('stream-g');
  const queue = uniqueName('stream-q');
  await channel.assertQueue(queue, { durable: true });
  const byPartition = [ids('p0', 40), ids('p1', 40), ids('p2', 40)];
  for (const [p, values] of byPartition.entries()) await produce(topic, p, values);
  const invoices = ids('inv', 60);
  await publishAmqp(queue, invoices);

  const target = await httpTarget(2);
  const sidecar = startSidecar(['--target', target.url], agent.agentUrl);
  const split = await activateWhenAsked(admin, sidecar, [
    { name: 'orders', phase: 'Active', shadow: { source: topic, group } },
    { name: 'invoices', phase: 'Active', shadow: { source: queue } },
  ]);
  assert.ok(split.spec.session?.secretHash.startsWith('sha256:'), 'the spec carries the secret hash only');
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
  const split = await activateWhenAsked(admin, sidecar, [
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
      ws.on('open', () => ws.send(encodeFrame({ type: 'hello', routeId, secret, window: 8 })));
      ws.on('message', (data: Buffer) => {
        const decoded = decodeAgentFrame(data);
        if (decoded.ok) resolve(decoded.frame);
        else reject(new Error(decoded.problem));
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
      session: { secretHash: secretHash(secret) },
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
  await new Promise<void>((resolve) => ws.on('open', () => resolve()));
  ws.send(encodeFrame({ type: 'hello', routeId: split.spec.routeId, secret, window: 7 }));
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
  const split = await activateWhenAsked(admin, sidecar, [
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
  const split = await activateWhenAsked(admin, sidecar, [
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
  const split = await activateWhenAsked(admin, sidecar, [
    { name: 'orders', phase: 'Active', shadow: { source: topic, group: uniqueName('g') } },
  ]);
  // The plan's source is the workload's topic: create it so the publish has a destination.
  await kadmin.createTopics({
    waitForLeaders: true,
    topics: [{ topic: workload.ordersTopic, numPartitions: 1 }],
  });
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
  const source = await kadmin.fetchTopicOffsets(workload.ordersTopic);
  assert.equal(source[0]?.high, '1', 'exactly the matching message reached the source');
  sidecar.kill('SIGTERM');
  await sidecar.waitFor('detached');
});

test('a route leaving ACTIVE ends its stream and the agent stops reading its shadow before the drain', async () => {
  const agent = await startAgent();
  const queue = uniqueName('stream-drain');
  await channel.assertQueue(queue, { durable: true });
  await publishAmqp(queue, ids('dr', 5));
  const target = await httpTarget();
  const sidecar = startSidecar(['--queue', 'invoices', '--target', target.url], agent.agentUrl);
  const split = await activateWhenAsked(admin, sidecar, [
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
