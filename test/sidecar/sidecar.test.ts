// test-order: first (about 2 minutes, the longest of its suite)
// The sidecar against real brokers and the real API server, run as the shipped bundle with a
// developer's namespace-scoped credentials (through the group proxy, see groupProxy.ts). The controller is not part of this suite: the tests
// play its role (and the queue-agent's routing, with the shared filter semantics) — they create
// the session shadows, write the QueueSplit status through the status subresource, and hold a
// finalizer while "draining". Routing correctness and the drain itself belong to the agent and
// controller suites; here we prove what the sidecar does with what they hand it.
import assert from 'node:assert/strict';
import { spawn } from 'node:child_process';
import * as fs from 'node:fs';
import * as http from 'node:http';
import type { AddressInfo } from 'node:net';
import * as path from 'node:path';
import { test } from 'node:test';
import { AppsV1Api, CustomObjectsApi } from '@kubernetes/client-node';
import * as amqp from 'amqplib';
import type { IHeaders } from 'kafkajs';
import type { QueueSplit } from '../../core/crd/queueSplitSchema';
import { leaseExpiry } from '../../core/crd/validateQueueSplit';
import { WORKLOAD_STATUS_ANNOTATION } from '../../core/workloadStatus';
import { mergePatch } from '../../agent/kube/client';
import { matches } from '../../core/filter';
import { kafkaHeaders } from '../../core/providers/kafka/message';
import { amqpHeaders } from '../../core/providers/rabbitmq/message';
import { produceWithJava } from '../conformance/kafka/foreign';
import { freePort } from '../support/freePort';
import { pollUntil } from '../support/poll';
import { getQueue } from '../support/rabbitManagement';
import { uniqueName } from '../support/services';
import { sidecarFixture } from './fixture';
import {
  IN_CLUSTER_KAFKA,
  PRIVATE_GROUP,
  REF,
  SidecarProcess,
  activate,
  activateWhenAsked,
  condition,
  getSplit,
  listSplits,
  patchMetadata,
  patchStatus,
} from './support';

const fx = sidecarFixture({
  name: 'sidecar',
  clientId: 'qs-sidecar-test',
  developers: { developer: true, 'no-secrets': false },
});
const services = fx.services;
const kafka = fx.kafka;
const FILTER = { 'x-queue-split-user': 'alice' };

/** The flags every test's sidecar gets (developer credentials, short lease, private state). */
function sidecarArgs(
  args: readonly string[],
  options: { kubeconfig?: string; stateFile?: string } = {},
): string[] {
  const stateFile = options.stateFile ?? path.join(fx.stateDir, `${uniqueName('state')}.json`);
  return [
    ...[
      '--kubeconfig',
      options.kubeconfig ?? fx.kubeconfig('developer'),
      '-n',
      fx.namespace,
      '-w',
      `deployment/${fx.workload.name}`,
      '--owner',
      'alice',
    ],
    ...[
      '--lease-seconds',
      '10',
      '--poll-interval',
      '250',
      '--state-file',
      stateFile,
      '--detach-timeout',
      '30',
    ],
    ...['--map-address', `${IN_CLUSTER_KAFKA}=${services.kafkaBrokers[0]}`],
    // This file proves the sidecar's own broker consumers; agent-stream.test.ts the default,
    // where the queue-agent streams the session to the sidecar.
    ...['--transport', 'broker'],
    ...args,
  ];
}

function startSidecar(
  args: readonly string[],
  options: { kubeconfig?: string; stateFile?: string } = {},
): SidecarProcess {
  const sidecar = new SidecarProcess(fx.bundle, sidecarArgs(args, options), {
    ...process.env,
    XDG_STATE_HOME: fx.stateDir,
  });
  fx.running.push(sidecar);
  return sidecar;
}

async function stopAndDetach(sidecar: SidecarProcess): Promise<void> {
  sidecar.kill('SIGTERM');
  const detached = await sidecar.waitFor('detached');
  assert.equal(detached.drained, true);
  assert.deepEqual(await sidecar.exited, { code: 0, signal: null });
  assert.equal(
    await getSplit(fx.admin, fx.namespace, detached.split.name),
    undefined,
    'the QueueSplit is gone',
  );
}

/** No line the sidecar printed may carry a header value, a body or a credential. */
function assertNothingLeaked(sidecar: SidecarProcess, secrets: readonly string[]): void {
  const everything = `${sidecar.rawStdout.join('\n')}\n${sidecar.stderr}`;
  for (const secret of [...secrets, ':guest@'])
    assert.ok(!everything.includes(secret), `the sidecar printed ${JSON.stringify(secret)}`);
}

async function kafkaTopic(prefix: string, partitions: number): Promise<string> {
  const topic = uniqueName(prefix);
  await fx.kadmin.createTopics({ waitForLeaders: true, topics: [{ topic, numPartitions: partitions }] });
  return topic;
}

async function rabbitQueue(prefix: string): Promise<string> {
  const queue = uniqueName(prefix);
  await fx.channel.assertQueue(queue, { durable: true });
  return queue;
}

interface KafkaRecord {
  partition: number;
  key?: string;
  value: string;
  headers?: IHeaders;
}

/** The queue-agent's routing, as the tests play it: matching → session shadow, the rest → app shadow. */
async function routeKafka(records: readonly KafkaRecord[], session: string, app: string): Promise<void> {
  for (const r of records) {
    const topic = matches(FILTER, kafkaHeaders(r.headers)) ? session : app;
    await fx.producer.send({
      topic,
      acks: -1,
      messages: [
        {
          partition: topic === session ? r.partition : 0,
          key: r.key ?? null,
          value: r.value,
          headers: r.headers ?? {},
        },
      ],
    });
  }
}

async function routeAmqp(
  messages: readonly { body: string; options: amqp.Options.Publish }[],
  session: string,
  app: string,
): Promise<void> {
  for (const m of messages) {
    const queue = matches(FILTER, amqpHeaders(m.options.headers as Record<string, unknown> | undefined))
      ? session
      : app;
    fx.channel.sendToQueue(queue, Buffer.from(m.body), { persistent: true, ...m.options });
  }
  await fx.channel.waitForConfirms();
}

interface Received {
  headers: http.IncomingHttpHeaders;
  body: string;
  status: number;
}

/** A local service that records each POST and answers with `status(n)` (n counts from 1). */
async function httpTarget(
  status: (n: number) => number = () => 200,
  delayMs = 0,
): Promise<{ url: string; received: Received[]; close: () => Promise<void> }> {
  const received: Received[] = [];
  const server = http.createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on('data', (c: Buffer) => chunks.push(c));
    req.on('end', () => {
      const code = status(received.length + 1);
      received.push({ headers: req.headers, body: Buffer.concat(chunks).toString('utf8'), status: code });
      setTimeout(() => res.writeHead(code).end(), delayMs);
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as AddressInfo;
  return {
    url: `http://127.0.0.1:${port}/events`,
    received,
    close: () => new Promise((resolve) => server.close(() => resolve())),
  };
}

async function committed(group: string, topic: string): Promise<Record<number, string>> {
  const offsets = await fx.kadmin.fetchOffsets({ groupId: group, topics: [topic] });
  return Object.fromEntries(offsets[0]!.partitions.map((p) => [p.partition, p.offset]));
}

test('bad flags: a JSON error naming the flag, exit 2, nothing touched', async () => {
  const sidecar = new SidecarProcess(fx.bundle, ['-w', 'orders', '--mode', 'bogus'], process.env);
  const error = await sidecar.waitFor('error');
  assert.equal(error.code, 'usage');
  assert.equal(error.flag, '--mode');
  assert.match(error.suggestedAction, /--help/);
  assert.equal((await sidecar.exited).code, 2);
});

test('--help: every delivery mode has an example with --filter and --owner, and each example is a valid command line', async () => {
  const help = new SidecarProcess(fx.bundle, ['--help'], process.env);
  assert.equal((await help.exited).code, 0);
  const examples = help.rawStdout
    .map((line) => line.trim())
    .filter((line) => line.startsWith('queue-split-sidecar '))
    .map((line) => line.split(/\s+/).slice(1));
  const modeOf = (args: string[]): string =>
    args[args.findIndex((a) => a === '-m' || a === '--mode') + 1] ?? 'http';
  for (const mode of ['http', 'env', 'relay']) {
    const ofMode = examples.filter(
      (args) => (args.includes('-m') || args.includes('--mode') ? modeOf(args) : 'http') === mode,
    );
    assert.ok(
      ofMode.some((args) => (args.includes('-f') || args.includes('--filter')) && args.includes('--owner')),
      `no ${mode} example with --filter and --owner in:\n${help.rawStdout.join('\n')}`,
    );
  }
  // Valid: the flags pass validation and the sidecar gets as far as the (missing) kubeconfig.
  for (const args of examples) {
    const run = new SidecarProcess(
      fx.bundle,
      [...args, '--kubeconfig', path.join(fx.stateDir, 'none')],
      process.env,
    );
    const error = await run.waitFor('error');
    assert.equal(error.code, 'kube-config', `example ${args.join(' ')}: ${error.message}`);
    assert.equal((await run.exited).code, 1);
  }
});

test('http mode (Kafka): only the session shadow reaches the target, as CloudEvents, each committed after its 2xx', async () => {
  const session = await kafkaTopic('kses', 2);
  const group = uniqueName('ksesg');
  const appShadow = await kafkaTopic('kapp', 1);
  await routeKafka(
    [
      {
        partition: 0,
        key: 'k1',
        value: '{"marker":"body-marker-1"}',
        headers: {
          'x-queue-split-user': 'alice',
          'x-secret-token': 'tok-very-secret',
          traceparent: '00-abc-def-01',
          'content-type': 'application/json',
        },
      },
      { partition: 1, value: 'not mine', headers: { 'x-queue-split-user': 'bob' } },
      { partition: 0, key: 'k2', value: 'body-marker-2', headers: { 'x-queue-split-user': 'alice' } },
      { partition: 0, value: 'no header at all' },
      {
        partition: 1,
        key: 'k3',
        value: 'body-marker-3',
        headers: { 'x-queue-split-user': 'alice', 'tenant-id': 'zoë' },
      },
    ],
    session,
    appShadow,
  );
  const target = await httpTarget();
  const sidecar = startSidecar(['--queue', 'orders', '--target', target.url]);
  await activateWhenAsked(fx.admin, sidecar, [
    {
      name: 'orders',
      phase: 'Active',
      shadow: { source: session, group },
      envOverrides: { ORDERS_TOPIC: session, KAFKA_GROUP: group },
    },
  ]);
  const ready = await sidecar.waitFor('ready');
  assert.deepEqual(ready.queues, [
    { name: 'orders', provider: 'kafka', shadow: session, group, deliversTo: `POST ${target.url}` },
  ]);

  await pollUntil(
    '3 deliveries',
    async () => sidecar.of('delivered').length,
    (n) => n >= 3,
  );
  await new Promise((r) => setTimeout(r, 1_000)); // anything else would arrive now
  assert.deepEqual(target.received.map((r) => r.body).sort(), [
    'body-marker-2',
    'body-marker-3',
    '{"marker":"body-marker-1"}',
  ]);
  const p0 = target.received
    .filter((r) => r.headers['ce-id']?.toString().startsWith('0-'))
    .map((r) => r.body);
  assert.deepEqual(p0, ['{"marker":"body-marker-1"}', 'body-marker-2'], 'order kept within a partition');

  const first = target.received.find((r) => r.body.includes('body-marker-1'))!.headers;
  assert.equal(first['ce-specversion'], '1.0');
  assert.equal(first['ce-id'], '0-0');
  assert.equal(first['ce-source'], `queuesplit://${fx.namespace}/${fx.workload.name}/orders`);
  assert.equal(first['ce-type'], 'dev.queuesplit.message');
  assert.ok(!Number.isNaN(Date.parse(String(first['ce-time']))));
  assert.equal(first['content-type'], 'application/json');
  assert.equal(first['x-queue-split-user'], 'alice');
  assert.equal(first['ce-traceparent'], '00-abc-def-01');
  assert.equal(first['ce-partitionkey'], 'k1');
  const third = target.received.find((r) => r.body === 'body-marker-3')!.headers;
  assert.equal(decodeURIComponent(String(third['x-tenant-id'])), 'zoë');

  assert.deepEqual(
    await committed(group, session),
    { 0: '2', 1: '1' },
    'every delivered message committed, nothing more',
  );
  assert.deepEqual(
    sidecar.of('delivered').map((d) => d.counts.delivered),
    [1, 2, 3],
  );
  await stopAndDetach(sidecar);
  assertNothingLeaked(sidecar, ['tok-very-secret', 'body-marker', '00-abc-def-01', 'zoë']);
  await target.close();
});

test('http mode (Kafka): SIGTERM during a burst — every message reported delivered is committed before the detach', async () => {
  // The failure this guards: a message delivered while the consumer was stopping was reported delivered but
  // not committed, so the route drain (which moves the suffix after the session group's commits)
  // handed it to the app as well.
  const session = await kafkaTopic('kburst', 2);
  const group = uniqueName('kburstg');
  const appShadow = await kafkaTopic('kburstapp', 1);
  await routeKafka(
    Array.from({ length: 40 }, (_, i) => ({
      partition: i % 2,
      value: `burst-${i}`,
      headers: { 'x-queue-split-user': 'alice' },
    })),
    session,
    appShadow,
  );
  const target = await httpTarget(() => 200, 300); // slow: a POST is in flight at the signal
  const sidecar = startSidecar(['--queue', 'orders', '--target', target.url]);
  await activateWhenAsked(fx.admin, sidecar, [
    {
      name: 'orders',
      phase: 'Active',
      shadow: { source: session, group },
      envOverrides: { ORDERS_TOPIC: session, KAFKA_GROUP: group },
    },
  ]);
  await pollUntil(
    '3 deliveries',
    async () => sidecar.of('delivered').length,
    (n) => n >= 3,
  );
  await pollUntil(
    'a POST in flight',
    async () => target.received.length - sidecar.of('delivered').length,
    (n) => n >= 1,
  );
  await stopAndDetach(sidecar);
  const commits = await committed(group, session);
  const delivered = sidecar.of('delivered').map((d) => d.messageId);
  const uncommitted = delivered.filter((id) => {
    const [partition, offset] = id.split('-').map(Number);
    return !(BigInt(offset!) < BigInt(commits[partition!] ?? '-1'));
  });
  assert.deepEqual(
    uncommitted,
    [],
    `reported delivered but not committed (a drain hands them to the app too); commits ${JSON.stringify(commits)}`,
  );
  assert.ok(delivered.length < 40, 'the signal landed during the burst');
  await target.close();
});

test('http mode (Kafka): a handler paused longer than the group session timeout gets the message once', async () => {
  const session = await kafkaTopic('kses', 1);
  const group = uniqueName('ksesg');
  await routeKafka(
    [
      { partition: 0, value: 'paused-1', headers: FILTER },
      { partition: 0, value: 'paused-2', headers: FILTER },
    ],
    session,
    session,
  );
  // Like a breakpoint in the handler: the first request is answered after 20s (the sidecar's
  // Kafka session timeout is 15s), so only the heartbeats during delivery keep the partition.
  const received: string[] = [];
  const server = http.createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on('data', (c: Buffer) => chunks.push(c));
    req.on('end', () => {
      received.push(Buffer.concat(chunks).toString());
      setTimeout(() => res.writeHead(200).end(), received.length === 1 ? 20_000 : 0);
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const url = `http://127.0.0.1:${(server.address() as AddressInfo).port}/`;
  const sidecar = startSidecar(['--queue', 'orders', '--target', url]);
  await activateWhenAsked(fx.admin, sidecar, [
    { name: 'orders', phase: 'Active', shadow: { source: session, group } },
  ]);
  await pollUntil(
    'both delivered',
    async () => sidecar.of('delivered').length,
    (n) => n >= 2,
    40_000,
  );
  assert.deepEqual(received, ['paused-1', 'paused-2'], 'no redelivery while the handler was paused');
  assert.deepEqual(
    sidecar.of('delivered').map((d) => d.attempts),
    [1, 1],
  );
  assert.equal(sidecar.of('failed').length, 0);
  assert.deepEqual(await committed(group, session), { 0: '2' });
  await stopAndDetach(sidecar);
  server.closeAllConnections();
  server.close();
});

test('http mode (RabbitMQ): a target answering 500, 500, then 200 gets it acked once; nothing lost, order kept', async () => {
  const session = await rabbitQueue('rses');
  const appShadow = await rabbitQueue('rapp');
  await routeAmqp(
    [
      { body: 'inv-1-body', options: { messageId: 'inv-1', headers: { 'x-queue-split-user': 'alice' } } },
      { body: 'other', options: { messageId: 'other-1', headers: { 'x-queue-split-user': 'carol' } } },
      {
        body: 'inv-2-body',
        options: { messageId: 'inv-2', headers: { 'x-queue-split-user': 'alice', attempt: 1 } },
      },
    ],
    session,
    appShadow,
  );
  const target = await httpTarget((n) => (n <= 2 ? 500 : 200));
  const sidecar = startSidecar(['--queue', 'invoices', '--target', target.url, '--retry-max-delay', '1000']);
  await activateWhenAsked(fx.admin, sidecar, [
    {
      name: 'invoices',
      phase: 'Active',
      shadow: { source: session },
      envOverrides: { INVOICE_QUEUE: session },
    },
  ]);
  await pollUntil(
    '2 deliveries',
    async () => sidecar.of('delivered').length,
    (n) => n >= 2,
  );

  assert.deepEqual(
    target.received.map((r) => [r.headers['ce-id'], r.status]),
    [
      ['inv-1', 500],
      ['inv-1', 500],
      ['inv-1', 200],
      ['inv-2', 200],
    ],
  );
  assert.deepEqual(
    sidecar.of('delivered').map((d) => [d.messageId, d.attempts]),
    [
      ['inv-1', 3],
      ['inv-2', 1],
    ],
  );
  assert.deepEqual(
    sidecar.of('failed').map((f) => [f.messageId, f.attempt, f.reason]),
    [
      ['inv-1', 1, 'HTTP 500'],
      ['inv-1', 2, 'HTTP 500'],
    ],
  );
  assert.equal(
    sidecar.of('warning').filter((w) => w.code === 'target-down').length,
    1,
    'one warning per outage, not per retry',
  );
  assert.equal(sidecar.of('progress').filter((p) => p.stage === 'recovered').length, 1);
  assert.equal(target.received.find((r) => r.headers['ce-id'] === 'inv-2')!.headers['ce-attempt'], '1');

  // Acks vs broker state: 2 published to the session shadow, 2 acked, none left or unacked.
  const q = await pollUntil(
    'session shadow settled',
    () => getQueue(services.rabbitManagementUrl, session),
    (info) => info.messages_ready === 0 && info.messages_unacknowledged === 0,
  );
  assert.equal(q.messages_ready, 0);
  assert.equal(
    (await fx.channel.checkQueue(appShadow)).messageCount,
    1,
    "the app shadow's message was never touched",
  );
  await stopAndDetach(sidecar);
  assertNothingLeaked(sidecar, ['inv-1-body', 'inv-2-body']);
  await target.close();
});

test('http mode (RabbitMQ): a target that closes each kept-alive connection as the next message reuses it gets every message once, acked, in order; no failed line, no target-down', async () => {
  const session = await rabbitQueue('rkeep');
  const appShadow = await rabbitQueue('rkeepapp');
  const ids = Array.from({ length: 8 }, (_, i) => `keep-${i + 1}`);
  await routeAmqp(
    ids.map((id) => ({
      body: `${id}-body`,
      options: { messageId: id, headers: { 'x-queue-split-user': 'alice' } },
    })),
    session,
    appShadow,
  );
  // The second request on any connection finds it closed: a target's idle close racing the
  // sidecar's reuse, made certain (nothing is answered, the socket is reset).
  const handled: string[] = [];
  let dropped = 0;
  const perSocket = new WeakMap<object, number>();
  const server = http.createServer((req, res) => {
    const n = (perSocket.get(req.socket) ?? 0) + 1;
    perSocket.set(req.socket, n);
    if (n >= 2) {
      dropped++;
      req.socket.destroy();
      return;
    }
    req.resume();
    req.on('end', () => {
      handled.push(String(req.headers['ce-id']));
      res.writeHead(200).end();
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const url = `http://127.0.0.1:${(server.address() as AddressInfo).port}/events`;
  const sidecar = startSidecar(['--queue', 'invoices', '--target', url]);
  await activateWhenAsked(fx.admin, sidecar, [
    {
      name: 'invoices',
      phase: 'Active',
      shadow: { source: session },
      envOverrides: { INVOICE_QUEUE: session },
    },
  ]);
  await pollUntil(
    `${ids.length} deliveries`,
    async () => sidecar.of('delivered').length,
    (n) => n >= ids.length,
  );
  assert.deepEqual(handled, ids, 'each message handled once, in order');
  assert.ok(dropped > 0, 'kept-alive connections were reused and closed under the sidecar');
  assert.deepEqual(
    sidecar.of('delivered').map((d) => [d.messageId, d.attempts]),
    ids.map((id) => [id, 1]),
  );
  assert.deepEqual(sidecar.of('failed'), []);
  assert.deepEqual(
    sidecar.of('warning').filter((w) => w.code === 'target-down'),
    [],
  );
  await pollUntil(
    'session shadow settled',
    () => getQueue(services.rabbitManagementUrl, session),
    (info) => info.messages_ready === 0 && info.messages_unacknowledged === 0,
  );
  await stopAndDetach(sidecar);
  assertNothingLeaked(
    sidecar,
    ids.map((id) => `${id}-body`),
  );
  server.closeAllConnections();
  await new Promise<void>((resolve) => server.close(() => resolve()));
});

test('env mode: the session env on stdout (secrets only in the 0600 env file), the lease renewed, nothing consumed', async () => {
  const session = await kafkaTopic('kses', 1);
  const group = uniqueName('ksesg');
  const rses = await rabbitQueue('rses');
  await routeAmqp(
    [{ body: 'waits-for-the-debuggee', options: { headers: { 'x-queue-split-user': 'alice' } } }],
    rses,
    rses,
  );
  const envFile = path.join(fx.stateDir, `${uniqueName('env')}.env`);
  const sidecar = startSidecar(['--mode', 'env', '--env-out', envFile]);
  const split = await activateWhenAsked(fx.admin, sidecar, [
    {
      name: 'orders',
      phase: 'Active',
      shadow: { source: session, group },
      envOverrides: { ORDERS_TOPIC: session, KAFKA_GROUP: group },
    },
    { name: 'invoices', phase: 'Active', shadow: { source: rses }, envOverrides: { INVOICE_QUEUE: rses } },
  ]);
  const ready = await sidecar.waitFor('ready');
  assert.equal(ready.mode, 'env');
  assert.deepEqual(ready.env, {
    KAFKA_BROKERS: services.kafkaBrokers[0],
    ORDERS_TOPIC: session,
    KAFKA_GROUP: group,
    RABBITMQ_MANAGEMENT_URL: 'http://rabbitmq.rabbitmq.svc.cluster.local:15672',
    INVOICE_QUEUE: rses,
  });
  assert.deepEqual(ready.secretEnv, ['AMQP_URL']);
  assert.equal(ready.envFile, envFile);
  assert.equal(fs.statSync(envFile).mode & 0o777, 0o600);
  const fileLines = fs.readFileSync(envFile, 'utf8').split('\n');
  assert.ok(fileLines.includes(`AMQP_URL=${services.amqpUrl}`), 'the Secret-derived URL is in the env file');
  assert.ok(fileLines.includes(`ORDERS_TOPIC=${session}`));
  assert.ok(
    sidecar.of('warning').some((w) => w.code === 'advertised-address'),
    'warns that the address map cannot follow Kafka metadata',
  );

  const renewedFrom = split.spec.lease.renewTime;
  const renewed = await pollUntil(
    'lease renewed',
    () => getSplit(fx.admin, fx.namespace, split.metadata.name),
    (s) => s !== undefined && Date.parse(s.spec.lease.renewTime) > Date.parse(renewedFrom),
    10_000,
  );
  assert.equal(renewed!.spec.lease.durationSeconds, 10);
  assert.equal(renewed!.spec.delivery?.mode, 'env');
  const q = await fx.channel.checkQueue(rses);
  assert.deepEqual(
    [q.messageCount, q.consumerCount],
    [1, 0],
    'env mode leaves the shadow to the debugged process',
  );
  await stopAndDetach(sidecar);
  assert.equal(fs.existsSync(envFile), false, 'the env file (it holds the AMQP password) is removed on stop');
  assertNothingLeaked(sidecar, []);
});

test('relay mode: session messages republished into the local topic and queue with confirms, then acked', async () => {
  const kses = await kafkaTopic('kses', 2);
  const group = uniqueName('ksesg');
  const kapp = await kafkaTopic('kapp', 1);
  const localTopic = await kafkaTopic('local-orders', 2);
  const rses = await rabbitQueue('rses');
  const rapp = await rabbitQueue('rapp');
  const localQueue = await rabbitQueue('local-invoices');
  await routeKafka(
    [
      { partition: 1, key: 'a', value: 'r1', headers: { 'x-queue-split-user': 'alice', dup: ['x', 'y'] } },
      { partition: 0, value: 'r-other', headers: { 'x-queue-split-user': 'dave' } },
      { partition: 0, key: 'b', value: 'r2', headers: { 'x-queue-split-user': 'alice' } },
    ],
    kses,
    kapp,
  );
  await routeAmqp(
    [
      {
        body: 'q1',
        options: {
          messageId: 'rq-1',
          correlationId: 'c-1',
          contentType: 'text/plain',
          headers: { 'x-queue-split-user': 'alice', n: 5 },
        },
      },
      { body: 'q-other', options: { messageId: 'rq-x', headers: { 'x-queue-split-user': 'erin' } } },
    ],
    rses,
    rapp,
  );
  const sidecar = startSidecar([
    ...[
      '--mode',
      'relay',
      '--relay-kafka-brokers',
      services.kafkaBrokers.join(','),
      '--relay-amqp-url',
      services.amqpUrl,
    ],
    ...['--relay-to', `orders=${localTopic}`, '--relay-to', `invoices=${localQueue}`],
  ]);
  await activateWhenAsked(fx.admin, sidecar, [
    { name: 'orders', phase: 'Active', shadow: { source: kses, group } },
    { name: 'invoices', phase: 'Active', shadow: { source: rses } },
  ]);
  const ready = await sidecar.waitFor('ready');
  assert.match(
    ready.queues.find((q) => q.name === 'orders')!.deliversTo,
    new RegExp(`local Kafka topic ${localTopic}`),
  );
  await pollUntil(
    '3 relayed',
    async () => sidecar.of('delivered').length,
    (n) => n >= 3,
  );

  const relayed: { partition: number; key: string; value: string; headers: IHeaders }[] = [];
  const reader = kafka.consumer({ groupId: uniqueName('reader') });
  await reader.connect();
  await reader.subscribe({ topics: [localTopic], fromBeginning: true });
  await reader.run({
    eachMessage: async ({ partition, message }) =>
      void relayed.push({
        partition,
        key: message.key?.toString() ?? '',
        value: message.value?.toString() ?? '',
        headers: message.headers ?? {},
      }),
  });
  await pollUntil(
    'relayed records readable',
    async () => relayed.length,
    (n) => n >= 2,
  );
  await reader.disconnect();
  assert.deepEqual(relayed.map((r) => [r.value, r.partition, r.key]).sort(), [
    ['r1', 1, 'a'],
    ['r2', 0, 'b'],
  ]);
  const r1 = relayed.find((r) => r.value === 'r1')!;
  assert.deepEqual((r1.headers.dup as Buffer[]).map(String), ['x', 'y'], 'repeated header keys kept');

  const got = await fx.channel.get(localQueue, { noAck: true });
  assert.ok(got);
  assert.equal(got.content.toString(), 'q1');
  assert.equal(got.properties.messageId, 'rq-1');
  assert.equal(got.properties.correlationId, 'c-1');
  assert.equal(got.properties.contentType, 'text/plain');
  assert.equal((got.properties.headers as Record<string, unknown>).n, 5);
  assert.equal(await fx.channel.get(localQueue, { noAck: true }), false, 'only the session message');

  assert.deepEqual(await committed(group, kses), { 0: '1', 1: '1' });
  await pollUntil(
    'session queue acked',
    () => getQueue(services.rabbitManagementUrl, rses),
    (q) => q.messages_ready === 0 && q.messages_unacknowledged === 0,
  );
  await stopAndDetach(sidecar);
});

test("relay mode: a null Kafka header value (a Java producer's RecordHeader(k, null)) is relayed as null, not retried forever", async () => {
  const kses = await kafkaTopic('kses-null', 1);
  const group = uniqueName('ksesg-null');
  const localTopic = await kafkaTopic('local-null', 1);
  // kafkajs cannot send a null header value: the record comes from the Java client, as in the field.
  produceWithJava(services.kafkaBrokers, kses, [
    {
      partition: 0,
      key: 'n',
      value: 'with-null-header',
      headers: [
        ['x-queue-split-user', 'alice'],
        ['trace-flag', null],
      ],
    },
  ]);
  const sidecar = startSidecar([
    ...['--queue', 'orders', '--mode', 'relay', '--relay-kafka-brokers', services.kafkaBrokers.join(',')],
    ...['--relay-to', `orders=${localTopic}`],
  ]);
  await activateWhenAsked(fx.admin, sidecar, [
    { name: 'orders', phase: 'Active', shadow: { source: kses, group } },
  ]);
  await sidecar.waitFor('ready');
  await pollUntil(
    'the record relayed',
    async () => sidecar.of('delivered').length,
    (n) => n >= 1,
    30_000,
  );
  const relayed: IHeaders[] = [];
  const reader = kafka.consumer({ groupId: uniqueName('reader-null') });
  await reader.connect();
  await reader.subscribe({ topics: [localTopic], fromBeginning: true });
  await reader.run({ eachMessage: async ({ message }) => void relayed.push(message.headers ?? {}) });
  await pollUntil(
    'relayed record readable',
    async () => relayed.length,
    (n) => n >= 1,
  );
  await reader.disconnect();
  assert.ok('trace-flag' in relayed[0]!, 'the null-valued header is kept');
  assert.equal(relayed[0]!['trace-flag'], null, 'and its value is still null, not empty');
  assert.deepEqual(await committed(group, kses), { 0: '1' });
  await stopAndDetach(sidecar);
});

test('kill -9 and restart adopts the same QueueSplit; the lease stops advancing while the sidecar is dead', async () => {
  const session = await rabbitQueue('rses');
  const target = await httpTarget();
  const stateFile = path.join(fx.stateDir, `${uniqueName('adopt')}.json`);
  const args = ['--queue', 'invoices', '--target', target.url];
  const first = startSidecar(args, { stateFile });
  const split = await activateWhenAsked(fx.admin, first, [
    {
      name: 'invoices',
      phase: 'Active',
      shadow: { source: session },
      envOverrides: { INVOICE_QUEUE: session },
    },
  ]);
  await first.waitFor('ready');
  await routeAmqp(
    [{ body: 'before-kill', options: { messageId: 'k-1', headers: FILTER } }],
    session,
    session,
  );
  await first.waitFor('delivered', (d) => d.messageId === 'k-1');
  const aliveRenewal = await pollUntil(
    'lease renewed while alive',
    () => getSplit(fx.admin, fx.namespace, split.metadata.name),
    (s) => s !== undefined && Date.parse(s.spec.lease.renewTime) > Date.parse(split.spec.lease.renewTime),
    10_000,
  );

  first.kill('SIGKILL');
  assert.equal((await first.exited).signal, 'SIGKILL');
  await routeAmqp([{ body: 'while-dead', options: { messageId: 'k-2', headers: FILTER } }], session, session);

  // The sidecar's half of "lease expiry drains the route": renewals stop, the lease runs out.
  // (The drain that follows is the controller's, proven in its own suite.)
  const stalled = (await getSplit(fx.admin, fx.namespace, split.metadata.name))!;
  await new Promise((r) => setTimeout(r, 11_000));
  const expired = (await getSplit(fx.admin, fx.namespace, split.metadata.name))!;
  assert.equal(
    expired.spec.lease.renewTime,
    stalled.spec.lease.renewTime,
    'nobody renews a dead sidecar’s lease',
  );
  assert.ok(leaseExpiry(expired.spec) < Date.now(), 'the lease has expired');
  assert.ok(Date.parse(stalled.spec.lease.renewTime) >= Date.parse(aliveRenewal!.spec.lease.renewTime));

  const second = startSidecar(args, { stateFile });
  const adopting = await second.waitFor('progress', (p) => p.stage === 'adopting');
  assert.deepEqual(adopting.split, {
    name: split.metadata.name,
    namespace: fx.namespace,
    routeId: split.spec.routeId,
    uid: split.metadata.uid,
  });
  await second.waitFor('ready');
  await second.waitFor('delivered', (d) => d.messageId === 'k-2');
  const adopted = (await getSplit(fx.admin, fx.namespace, split.metadata.name))!;
  assert.equal(adopted.metadata.uid, split.metadata.uid, 'the same object');
  assert.ok(
    Date.parse(adopted.spec.lease.renewTime) > Date.parse(stalled.spec.lease.renewTime),
    'renewed on adoption',
  );
  const mine = (await listSplits(fx.admin, fx.namespace)).filter(
    (s) => s.spec.owner === 'alice' && s.metadata.deletionTimestamp === undefined,
  );
  assert.deepEqual(
    mine.map((s) => s.metadata.name),
    [split.metadata.name],
    'no second route was created',
  );
  assert.deepEqual(
    target.received.map((r) => r.body),
    ['before-kill', 'while-dead'],
    'nothing lost across the kill',
  );
  await stopAndDetach(second);
  assert.equal(fs.existsSync(stateFile), false, 'a detached route is forgotten');
  await target.close();
});

test('--split adopts a QueueSplit someone else created (the extension), renews it, and detaches it', async () => {
  const session = await rabbitQueue('rses');
  const name = `qs-split-ext-${uniqueName('x')}`.slice(0, 63);
  const created = (await fx.admin.makeApiClient(CustomObjectsApi).createNamespacedCustomObject({
    ...REF,
    namespace: fx.namespace,
    body: {
      apiVersion: `${PRIVATE_GROUP}/v1alpha1`,
      kind: 'QueueSplit',
      metadata: { name },
      spec: {
        workload: { kind: 'Deployment', name: fx.workload.name },
        queues: ['invoices'],
        filter: FILTER,
        owner: 'alice',
        routeId: 'abcdefghijklmnop',
        lease: {
          renewTime: new Date(Date.now() - 5_000).toISOString().replace(/\.\d+Z$/, 'Z'),
          durationSeconds: 30,
        },
      },
    },
  })) as QueueSplit;
  await activate(fx.admin, fx.namespace, name, [
    { name: 'invoices', phase: 'Active', shadow: { source: session } },
  ]);
  const sidecar = new SidecarProcess(
    fx.bundle,
    [
      '--kubeconfig',
      fx.kubeconfig('developer'),
      '-n',
      fx.namespace,
      '--split',
      name,
      '--mode',
      'env',
      '--lease-seconds',
      '10',
      '--poll-interval',
      '250',
    ],
    { ...process.env, XDG_STATE_HOME: fx.stateDir },
  );
  fx.running.push(sidecar);
  const adopting = await sidecar.waitFor('progress', (p) => p.stage === 'adopting');
  assert.deepEqual(adopting.split, {
    name,
    namespace: fx.namespace,
    routeId: 'abcdefghijklmnop',
    uid: created.metadata.uid,
  });
  const ready = await sidecar.waitFor('ready');
  assert.deepEqual(ready.env, {
    RABBITMQ_MANAGEMENT_URL: 'http://rabbitmq.rabbitmq.svc.cluster.local:15672',
    INVOICE_QUEUE: session,
  });
  assert.deepEqual(ready.secretEnv, ['AMQP_URL']);
  const adopted = (await getSplit(fx.admin, fx.namespace, name))!;
  assert.ok(
    Date.parse(adopted.spec.lease.renewTime) > Date.parse(created.spec.lease.renewTime),
    'renewed at once',
  );
  assert.equal(adopted.spec.delivery?.mode, 'env');
  await stopAndDetach(sidecar);
});

test('SIGTERM: stops consuming, deletes the split, reports the drain until the controller lets it go', async () => {
  const session = await rabbitQueue('rses');
  const stateFile = path.join(fx.stateDir, `${uniqueName('detach')}.json`);
  const sidecar = startSidecar(['--mode', 'env', '--queue', 'invoices'], { stateFile });
  const split = await activateWhenAsked(fx.admin, sidecar, [
    { name: 'invoices', phase: 'Active', shadow: { source: session } },
  ]);
  await sidecar.waitFor('ready');
  const name = split.metadata.name;
  await patchMetadata(fx.admin, fx.namespace, name, { finalizers: ['queuesplit.dev/test-drain'] }); // the controller's hold

  sidecar.kill('SIGTERM');
  await sidecar.waitFor('progress', (p) => p.stage === 'stopping');
  await pollUntil(
    'delete requested',
    () => getSplit(fx.admin, fx.namespace, name),
    (s) => s?.metadata.deletionTimestamp !== undefined,
  );
  await patchStatus(fx.admin, fx.namespace, name, {
    phase: 'Draining',
    lag: 2,
    conditions: [condition('Ready', 'False', 'Draining', 'Moving unconsumed session messages to the app.')],
  });
  const draining = await sidecar.waitFor('progress', (p) => p.stage === 'draining' && p.lag === 2);
  assert.equal(draining.phase, 'Draining');
  assert.equal(sidecar.of('detached').length, 0, 'not detached while the controller still drains');
  await patchStatus(fx.admin, fx.namespace, name, { lag: 0 });
  await sidecar.waitFor('progress', (p) => p.stage === 'draining' && p.lag === 0);
  await patchMetadata(fx.admin, fx.namespace, name, { finalizers: null });

  const detached = await sidecar.waitFor('detached');
  assert.equal(detached.drained, true);
  assert.equal(detached.split.name, name);
  assert.deepEqual(await sidecar.exited, { code: 0, signal: null });
  assert.equal(await getSplit(fx.admin, fx.namespace, name), undefined);
  assert.equal(fs.existsSync(stateFile), false);
});

test('a stop request on stdin (no signal, as on Windows) drains and detaches like SIGTERM, exit 0', async () => {
  const session = await rabbitQueue('rstdin');
  const stateFile = path.join(fx.stateDir, `${uniqueName('stdin')}.json`);
  const sidecar = startSidecar(['--mode', 'env', '--queue', 'invoices'], { stateFile });
  const split = await activateWhenAsked(fx.admin, sidecar, [
    { name: 'invoices', phase: 'Active', shadow: { source: session } },
  ]);
  await sidecar.waitFor('ready');
  sidecar.send('not a request'); // ignored, as unknown lines are
  sidecar.send('{"type":"stop"}');
  await sidecar.waitFor('progress', (p) => p.stage === 'stopping', 10_000);
  const detached = await sidecar.waitFor('detached');
  assert.equal(detached.drained, true);
  assert.equal(detached.split.name, split.metadata.name);
  assert.deepEqual(await sidecar.exited, { code: 0, signal: null });
  assert.equal(
    await getSplit(fx.admin, fx.namespace, split.metadata.name),
    undefined,
    'the QueueSplit is gone',
  );
  assert.equal(fs.existsSync(stateFile), false);
});

test('a queue-agent restart the controller reports is a warning, while active and while draining', async () => {
  const session = await rabbitQueue('rrestart');
  const sidecar = startSidecar(['--mode', 'env', '--queue', 'invoices']);
  const split = await activateWhenAsked(fx.admin, sidecar, [
    { name: 'invoices', phase: 'Active', shadow: { source: session } },
  ]);
  await sidecar.waitFor('ready');
  const name = split.metadata.name;
  // Condition times are whole seconds; these are after the sidecar started watching.
  const later = (s: number) => new Date(Date.now() + s * 1000).toISOString().replace(/\.\d+Z$/, 'Z');
  const restarted = (at: string) => ({
    ...condition('AgentRestarted', 'True', 'QueueAgentRestarted', 'The queue-agent restarted.'),
    lastTransitionTime: at,
  });
  const ready = condition('Ready', 'True', 'Active', 'Routing your messages.');
  const first = later(1);
  await patchStatus(fx.admin, fx.namespace, name, { conditions: [ready, restarted(first)] });
  const active = await sidecar.waitFor('warning', (w) => w.code === 'agent-restarted');
  assert.ok(active.message.includes(`restarted at ${first}`), active.message);
  assert.match(active.message, /delivered to you again/);

  await patchMetadata(fx.admin, fx.namespace, name, { finalizers: ['queuesplit.dev/test-drain'] }); // the controller's hold
  sidecar.kill('SIGTERM');
  await pollUntil(
    'delete requested',
    () => getSplit(fx.admin, fx.namespace, name),
    (s) => s?.metadata.deletionTimestamp !== undefined,
  );
  await sidecar.waitFor('progress', (p) => p.stage === 'draining');
  const second = later(2);
  await patchStatus(fx.admin, fx.namespace, name, {
    phase: 'Draining',
    conditions: [
      condition('Ready', 'False', 'Draining', 'Moving unconsumed session messages to the app.'),
      restarted(second),
    ],
  });
  const draining = await sidecar.waitFor(
    'warning',
    (w) => w.code === 'agent-restarted' && w.message.includes(second),
  );
  assert.match(draining.message, /while .* was draining; the drain resumes/);
  assert.equal(
    sidecar.of('warning').filter((w) => w.code === 'agent-restarted').length,
    2,
    'once per restart',
  );
  await patchMetadata(fx.admin, fx.namespace, name, { finalizers: null });
  assert.equal((await sidecar.waitFor('detached')).drained, true);
});

test('RBAC: without get on secrets it fails naming the Secret and the local alternative; --env then works', async () => {
  const before = (await listSplits(fx.admin, fx.namespace)).length;
  const refused = startSidecar(['--mode', 'env'], { kubeconfig: fx.kubeconfig('no-secrets') });
  const error = await refused.waitFor('error');
  assert.equal(error.code, 'forbidden');
  assert.match(
    error.message,
    new RegExp(
      `may not get secrets/${fx.workload.name}-rabbit in namespace ${fx.namespace} to read AMQP_URL`,
    ),
  );
  assert.match(error.suggestedAction, /--env AMQP_URL=<value>/);
  assert.equal((await refused.exited).code, 1);
  assert.equal((await listSplits(fx.admin, fx.namespace)).length, before, 'no split was created');

  const session = await rabbitQueue('rses');
  const withOverride = startSidecar(
    ['--mode', 'env', '--queue', 'invoices', '--env', `AMQP_URL=${services.amqpUrl}`],
    { kubeconfig: fx.kubeconfig('no-secrets') },
  );
  await activateWhenAsked(fx.admin, withOverride, [
    { name: 'invoices', phase: 'Active', shadow: { source: session } },
  ]);
  const ready = await withOverride.waitFor('ready');
  assert.deepEqual(ready.secretEnv, ['AMQP_URL'], 'a URL with a password is secret wherever it came from');
  await stopAndDetach(withOverride);
  assertNothingLeaked(withOverride, []);
});

/** The workload's generation: a create (even one later deleted) would make the controller roll it. */
async function workloadGeneration(): Promise<number | undefined> {
  const d = await fx.admin
    .makeApiClient(AppsV1Api)
    .readNamespacedDeployment({ name: fx.workload.name, namespace: fx.namespace });
  return d.metadata?.generation;
}

/**
 * A failed preflight (sidecar/modePreflight.ts): one error line naming the setting, exit 1, and
 * nothing created — no QueueSplit, the workload's generation unchanged.
 */
async function assertRefusedBeforeCreate(
  sidecar: SidecarProcess,
  expect: { code: string; message: RegExp; action: RegExp[] },
  before: { splits: number; generation: number | undefined },
): Promise<void> {
  const error = await sidecar.waitFor('error', () => true, 60_000);
  assert.equal(error.code, expect.code, error.message);
  assert.match(error.message, expect.message);
  assert.match(error.message, /Nothing was created/);
  for (const action of expect.action) assert.match(error.suggestedAction, action);
  assert.equal((await sidecar.exited).code, 1);
  assert.equal(
    sidecar.of('progress').some((p) => p.split !== undefined),
    false,
    'the sidecar never reported a split',
  );
  assert.equal((await listSplits(fx.admin, fx.namespace)).length, before.splits, 'no QueueSplit was created');
  assert.equal(await workloadGeneration(), before.generation, 'the workload was not touched');
}

async function nothingYet(): Promise<{ splits: number; generation: number | undefined }> {
  return {
    splits: (await listSplits(fx.admin, fx.namespace)).length,
    generation: await workloadGeneration(),
  };
}

/** The test broker's AMQP URL with another host:port or password (still a valid URL). */
function amqpUrlWith(change: { port?: number; password?: string }): string {
  const url = new URL(services.amqpUrl);
  if (change.port !== undefined) {
    url.hostname = '127.0.0.1';
    url.port = String(change.port);
  }
  if (change.password !== undefined) url.password = change.password;
  return url.toString();
}

test('preflight, http mode: a target that refuses connections creates no QueueSplit and names queueSplit.delivery.httpTarget', async () => {
  const before = await nothingYet();
  const closed = await freePort();
  const sidecar = startSidecar(['--queue', 'invoices', '--target', `http://127.0.0.1:${closed}/events`]);
  await assertRefusedBeforeCreate(
    sidecar,
    {
      code: 'target-unreachable',
      message: new RegExp(
        `http target http://127\\.0\\.0\\.1:${closed}/events does not accept connections \\(ECONNREFUSED`,
      ),
      action: [
        /queueSplit\.delivery\.httpTarget/,
        /--target/,
        new RegExp(`listens on 127\\.0\\.0\\.1:${closed}`),
      ],
    },
    before,
  );
});

test('preflight, relay mode: a local Kafka or RabbitMQ that refuses, or wrong local credentials, create no QueueSplit and name the relay setting', async () => {
  const before = await nothingYet();
  const [kafkaPort, amqpPort] = await Promise.all([freePort(), freePort()]);
  const wrongPassword = `wrong-${uniqueName('pw')}`;
  const base = ['--mode', 'relay'];
  const kafkaDown = startSidecar([
    ...base,
    '--queue',
    'orders',
    '--relay-kafka-brokers',
    `127.0.0.1:${kafkaPort}`,
  ]);
  const amqpDown = startSidecar([
    ...base,
    ...['--queue', 'invoices', '--relay-amqp-url', amqpUrlWith({ port: amqpPort })],
  ]);
  const amqpRefused = startSidecar([
    ...base,
    ...['--queue', 'invoices', '--relay-amqp-url', amqpUrlWith({ password: wrongPassword })],
  ]);
  await Promise.all([
    assertRefusedBeforeCreate(
      kafkaDown,
      {
        code: 'broker-unreachable',
        message: new RegExp(`local Kafka 127\\.0\\.0\\.1:${kafkaPort}`),
        action: [/queueSplit\.delivery\.relayKafkaBrokers/, /--relay-kafka-brokers/],
      },
      before,
    ),
    assertRefusedBeforeCreate(
      amqpDown,
      {
        code: 'broker-unreachable',
        message: /ECONNREFUSED/,
        action: [/queueSplit\.delivery\.relayAmqpUrl/, /--relay-amqp-url/],
      },
      before,
    ),
    assertRefusedBeforeCreate(
      amqpRefused,
      {
        code: 'broker-auth',
        message: /refused the credentials/,
        action: [
          /the user in the queueSplit\.delivery\.relayAmqpUrl setting, its password with Queue Split: Set Broker Password/,
        ],
      },
      before,
    ),
  ]);
  for (const s of [kafkaDown, amqpDown, amqpRefused]) assertNothingLeaked(s, [wrongPassword]);
});

test('preflight, env mode: brokers this machine cannot reach, or credentials they refuse, create no QueueSplit; the error says env needs direct broker reach and names the alternatives', async () => {
  const before = await nothingYet();
  const [kafkaPort, amqpPort] = await Promise.all([freePort(), freePort()]);
  const wrongPassword = `wrong-${uniqueName('pw')}`;
  // Both queues at once: the checks run concurrently and the one error names each failure.
  const unreachable = startSidecar([
    ...['--mode', 'env', '--env', `KAFKA_BROKERS=127.0.0.1:${kafkaPort}`],
    ...['--env', `AMQP_URL=${amqpUrlWith({ port: amqpPort })}`],
  ]);
  const refused = startSidecar([
    ...['--mode', 'env', '--queue', 'invoices'],
    ...['--env', `AMQP_URL=${amqpUrlWith({ password: wrongPassword })}`],
  ]);
  await Promise.all([
    assertRefusedBeforeCreate(
      unreachable,
      {
        code: 'broker-unreachable',
        message:
          /Preflight \(env delivery\): queue "orders": Cannot reach Kafka .*ECONNREFUSED.* \| queue "invoices": Cannot connect to RabbitMQ .*ECONNREFUSED/,
        action: [
          /env delivery needs direct broker reach/,
          /queueSplit\.addressMap/,
          /queueSplit\.env/,
          /http or relay delivery \(the queueSplit\.delivery\.mode setting/,
        ],
      },
      before,
    ),
    assertRefusedBeforeCreate(
      refused,
      {
        code: 'broker-auth',
        message: /queue "invoices": RabbitMQ .* refused the credentials/,
        action: [/queueSplit\.env/, /queueSplit\.delivery\.mode/],
      },
      before,
    ),
  ]);
  for (const s of [unreachable, refused]) assertNothingLeaked(s, [wrongPassword]);
});

test('--preflight-only: checks that pass exit 0 and create nothing; a check that fails is the same error a create gets', async () => {
  const before = await nothingYet();
  const amqpPort = await freePort();
  const passes = startSidecar(['--preflight-only', '--mode', 'env', '--queue', 'invoices']);
  const fails = startSidecar([
    ...['--preflight-only', '--mode', 'relay', '--queue', 'invoices'],
    ...['--relay-amqp-url', amqpUrlWith({ port: amqpPort })],
  ]);
  assert.deepEqual(await passes.exited, { code: 0, signal: null }, passes.stderr);
  assert.ok(
    passes
      .of('progress')
      .some((p) => /Preflight passed for env delivery of invoices; nothing was created/.test(p.message)),
    JSON.stringify(passes.of('progress')),
  );
  assert.equal(passes.of('error').length, 0);
  await assertRefusedBeforeCreate(
    fails,
    {
      code: 'broker-unreachable',
      message: /ECONNREFUSED/,
      action: [/queueSplit\.delivery\.relayAmqpUrl/, /--relay-amqp-url/],
    },
    before,
  );
  for (const s of [passes, fails])
    assert.equal(
      s.of('progress').some((p) => p.split !== undefined),
      false,
    );
  assert.equal((await listSplits(fx.admin, fx.namespace)).length, before.splits, 'no QueueSplit was created');
  assert.equal(await workloadGeneration(), before.generation, 'the workload was not touched');
  assertNothingLeaked(passes, []);
});

test('a Rejected split ends with the controller’s next action, and is deleted', async () => {
  const sidecar = startSidecar(['--mode', 'env', '--queue', 'invoices']);
  const waiting = await sidecar.waitFor('progress', (p) => p.stage === 'waiting' && p.split !== undefined);
  const name = waiting.split!.name;
  await patchStatus(fx.admin, fx.namespace, name, {
    phase: 'Rejected',
    nextAction: 'Use a filter that does not overlap bob’s, e.g. add team=payments.',
    conditions: [
      condition('Ready', 'False', 'FilterOverlaps', 'The filter overlaps route qs-split-bob of bob.'),
    ],
  });
  const error = await sidecar.waitFor('error');
  assert.equal(error.code, 'split-rejected');
  assert.match(error.message, /Rejected: The filter overlaps route qs-split-bob of bob/);
  assert.equal(error.suggestedAction, 'Use a filter that does not overlap bob’s, e.g. add team=payments.');
  assert.equal((await sidecar.exited).code, 1);
  assert.equal(await getSplit(fx.admin, fx.namespace, name), undefined);
});

test('a split deleted by someone else while active ends the session with an error', async () => {
  const session = await rabbitQueue('rses');
  const sidecar = startSidecar(['--mode', 'env', '--queue', 'invoices']);
  const split = await activateWhenAsked(fx.admin, sidecar, [
    { name: 'invoices', phase: 'Active', shadow: { source: session } },
  ]);
  await sidecar.waitFor('ready');
  await fx.admin
    .makeApiClient(CustomObjectsApi)
    .deleteNamespacedCustomObject({ ...REF, namespace: fx.namespace, name: split.metadata.name });
  const error = await sidecar.waitFor('error');
  assert.equal(error.code, 'split-deleted');
  assert.equal((await sidecar.exited).code, 1);
});

test('a route drained without the sidecar asking (lease ran out) stops its consumer and ends with an error', async () => {
  const session = await rabbitQueue('rses');
  const target = await httpTarget();
  const sidecar = startSidecar(['--queue', 'invoices', '--target', target.url]);
  const split = await activateWhenAsked(fx.admin, sidecar, [
    { name: 'invoices', phase: 'Active', shadow: { source: session } },
  ]);
  await sidecar.waitFor('ready');
  await pollUntil(
    'sidecar consuming',
    () => getQueue(services.rabbitManagementUrl, session),
    (q) => q.consumers === 1,
  );
  await patchStatus(fx.admin, fx.namespace, split.metadata.name, {
    phase: 'Draining',
    conditions: [
      condition('Ready', 'False', 'LeaseExpired', 'The lease expired; the route drains back to the app.'),
    ],
  });
  const error = await sidecar.waitFor('error');
  assert.equal(error.code, 'split-deleted');
  assert.match(error.message, /Draining: The lease expired/);
  assert.equal((await sidecar.exited).code, 1);
  await pollUntil(
    'consumer gone, so the drain can proceed',
    () => getQueue(services.rabbitManagementUrl, session),
    (q) => q.consumers === 0,
  );
  await fx.admin
    .makeApiClient(CustomObjectsApi)
    .deleteNamespacedCustomObject({ ...REF, namespace: fx.namespace, name: split.metadata.name });
  await target.close();
});

test('while waiting, progress follows the phases the controller reports', async () => {
  const sidecar = startSidecar(['--mode', 'env', '--queue', 'invoices']);
  const waiting = await sidecar.waitFor('progress', (p) => p.stage === 'waiting' && p.split !== undefined);
  assert.equal(waiting.phase, 'Pending');
  const session = await rabbitQueue('rses');
  await activate(fx.admin, fx.namespace, waiting.split!.name, [
    { name: 'invoices', phase: 'Active', shadow: { source: session } },
  ]);
  await sidecar.waitFor('ready');
  const phases = sidecar
    .of('progress')
    .filter((p) => p.stage === 'waiting' || p.stage === 'active')
    .map((p) => p.phase);
  assert.equal(phases[0], 'Pending');
  assert.equal(phases.at(-1), 'Active');
  await stopAndDetach(sidecar);
});

test('http mode (RabbitMQ): every AMQP header type reaches the handler in its documented text form, not amqplib JSON', async () => {
  const session = await rabbitQueue('rses');
  // One header per AMQP 0-9-1 field type, written with amqplib's explicit-type notation so the
  // wire carries exactly that type (sidecar/delivery/cloudEvents.ts lists the mapping).
  const headers: Record<string, unknown> = {
    'x-queue-split-user': 'alice',
    'x-string': 'plain text',
    'x-boolean': true,
    'x-int8': { '!': 'int8', value: -5 },
    'x-uint8': { '!': 'uint8', value: 200 },
    'x-int16': { '!': 'int16', value: -300 },
    'x-uint16': { '!': 'uint16', value: 60_000 },
    'x-int32': { '!': 'int32', value: -70_000 },
    'x-uint32': { '!': 'uint32', value: 4_000_000_000 },
    'x-int64': { '!': 'int64', value: 9_007_199_254_740_991 },
    'x-float': { '!': 'float', value: 1.5 },
    'x-double': { '!': 'double', value: 0.1 },
    'x-timestamp': { '!': 'timestamp', value: 1_767_322_445 },
    'x-decimal': { '!': 'decimal', value: { places: 2, digits: 12_345 } },
    // -5 as the signed 32-bit value RabbitMQ and the Java client write (amqplib encodes uint32).
    'x-decimal-negative': { '!': 'decimal', value: { places: 3, digits: 0x1_0000_0000 - 5 } },
    'x-void': null,
    'x-bytes': Buffer.from([0x00, 0xff, 0x41]),
    'x-table': {
      at: { '!': 'timestamp', value: 0 },
      price: { '!': 'decimal', value: { places: 1, digits: 15 } },
      n: 3,
      raw: Buffer.from('hi'),
      none: null,
      nested: { ok: true },
    },
    'x-array': [1, 'two', { '!': 'timestamp', value: 86_400 }],
  };
  fx.channel.sendToQueue(session, Buffer.from('typed'), { persistent: true, messageId: 'typed-1', headers });
  await fx.channel.waitForConfirms();
  const target = await httpTarget();
  const sidecar = startSidecar(['--queue', 'invoices', '--target', target.url]);
  await activateWhenAsked(fx.admin, sidecar, [
    {
      name: 'invoices',
      phase: 'Active',
      shadow: { source: session },
      envOverrides: { INVOICE_QUEUE: session },
    },
  ]);
  await sidecar.waitFor('delivered', (d) => d.messageId === 'typed-1');
  const got = target.received[0]!.headers;
  const text = (name: string): string => decodeURIComponent(String(got[name]));
  assert.deepEqual(
    Object.fromEntries(
      [
        'x-string',
        'x-boolean',
        'x-int8',
        'x-uint8',
        'x-int16',
        'x-uint16',
        'x-int32',
        'x-uint32',
        'x-int64',
        'x-float',
        'x-double',
        'x-timestamp',
        'x-decimal',
        'x-decimal-negative',
        'x-void',
      ].map((name) => [name, text(name)]),
    ),
    {
      'x-string': 'plain text',
      'x-boolean': 'true',
      'x-int8': '-5',
      'x-uint8': '200',
      'x-int16': '-300',
      'x-uint16': '60000',
      'x-int32': '-70000',
      'x-uint32': '4000000000',
      'x-int64': '9007199254740991',
      'x-float': '1.5',
      'x-double': '0.1',
      'x-timestamp': '2026-01-02T02:54:05Z',
      'x-decimal': '123.45',
      'x-decimal-negative': '-0.005',
      'x-void': '',
    },
  );
  assert.equal(got['x-bytes'], '%00%FFA', 'a byte array arrives as its bytes, percent-encoded');
  assert.deepEqual(JSON.parse(text('x-table')), {
    at: '1970-01-01T00:00:00Z',
    price: '1.5',
    n: 3,
    raw: Buffer.from('hi').toString('base64'),
    none: null,
    nested: { ok: true },
  });
  assert.deepEqual(JSON.parse(text('x-array')), [1, 'two', '1970-01-02T00:00:00Z']);
  for (const value of Object.values(got))
    assert.ok(!String(value).includes('%22!%22'), `amqplib's {"!": type} form leaked: ${String(value)}`);
  await stopAndDetach(sidecar);
  await target.close();
});

test('stdout reader gone (`| head` style): the sidecar detaches its split cleanly, exit 0, no Node stack', async () => {
  const session = await rabbitQueue('rses');
  const stateFile = path.join(fx.stateDir, `${uniqueName('epipe')}.json`);
  const envFile = path.join(fx.stateDir, `${uniqueName('epipe')}.env`);
  // The reader prints lines up to `ready`, then exits (sed's q), as `| head -n N` does; the
  // shell exits with the sidecar's status.
  const child = spawn(
    'bash',
    [
      '-c',
      `"$@" | sed -u '/"type":"ready"/q'; exit "\${PIPESTATUS[0]}"`,
      'bash',
      process.execPath,
      fx.bundle,
      ...sidecarArgs(['--mode', 'env', '--queue', 'invoices', '--env-out', envFile], { stateFile }),
    ],
    { env: { ...process.env, XDG_STATE_HOME: fx.stateDir }, stdio: ['ignore', 'pipe', 'pipe'] },
  );
  let stdout = '';
  let stderr = '';
  child.stdout.setEncoding('utf8').on('data', (c: string) => (stdout += c));
  child.stderr.setEncoding('utf8').on('data', (c: string) => (stderr += c));
  const exited = new Promise<number | null>((resolve) => child.on('exit', (code) => resolve(code)));
  try {
    const splitName = await pollUntil(
      'the sidecar recorded its split',
      async () =>
        fs.existsSync(stateFile)
          ? (JSON.parse(fs.readFileSync(stateFile, 'utf8')) as { splitName: string }).splitName
          : undefined,
      (name) => name !== undefined,
    );
    await pollUntil(
      'the split exists',
      () => getSplit(fx.admin, fx.namespace, splitName!),
      (s) => s !== undefined,
    );
    await activate(fx.admin, fx.namespace, splitName!, [
      { name: 'invoices', phase: 'Active', shadow: { source: session } },
    ]);
    const code = await Promise.race([
      exited,
      new Promise<string>((resolve) => setTimeout(() => resolve('still running after 60 s'), 60_000)),
    ]);
    const said = `\nstdout:\n${stdout}\nstderr:\n${stderr}`;
    assert.ok(stdout.includes('"type":"ready"'), `the reader saw the ready line${said}`);
    assert.equal(code, 0, `clean exit${said}`);
    assert.doesNotMatch(stderr, /^\s+at /m, `no Node stack${said}`);
    assert.match(stderr, /the reader of stdout went away \(EPIPE\)/, said);
    assert.match(stderr, /detached: QueueSplit .* is gone/, said);
    assert.equal(await getSplit(fx.admin, fx.namespace, splitName!), undefined, 'the split was detached');
    assert.equal(fs.existsSync(envFile), false, 'the env file went with the sidecar');
  } finally {
    if (child.exitCode === null) child.kill('SIGKILL');
  }
});

test('the env file lives only as long as the sidecar: gone after an error exit and after a second signal', async () => {
  // Error exit: the split is deleted under the sidecar (exit 1).
  const session = await rabbitQueue('rses');
  const failing = startSidecar(['--mode', 'env', '--queue', 'invoices']);
  const split = await activateWhenAsked(fx.admin, failing, [
    { name: 'invoices', phase: 'Active', shadow: { source: session } },
  ]);
  const ready = await failing.waitFor('ready');
  assert.ok(ready.envFile !== undefined && fs.existsSync(ready.envFile), 'written while it runs');
  assert.ok(
    ready.envFile.startsWith(path.join(fx.stateDir, 'queuesplit')),
    `the default lives next to the state file, under $XDG_STATE_HOME/queuesplit: ${ready.envFile}`,
  );
  await fx.admin
    .makeApiClient(CustomObjectsApi)
    .deleteNamespacedCustomObject({ ...REF, namespace: fx.namespace, name: split.metadata.name });
  assert.equal((await failing.exited).code, 1);
  assert.equal(fs.existsSync(ready.envFile), false, 'removed after the error exit');

  // Second signal: the first SIGTERM waits for the drain (a finalizer holds the split), the
  // second exits at once (130).
  const envFile = path.join(fx.stateDir, `${uniqueName('twice')}.env`);
  const held = startSidecar(['--mode', 'env', '--queue', 'invoices', '--env-out', envFile]);
  const second = await activateWhenAsked(fx.admin, held, [
    { name: 'invoices', phase: 'Active', shadow: { source: session } },
  ]);
  await held.waitFor('ready');
  assert.equal(fs.existsSync(envFile), true);
  await patchMetadata(fx.admin, fx.namespace, second.metadata.name, {
    finalizers: ['queuesplit.dev/test-drain'],
  });
  held.kill('SIGTERM');
  await held.waitFor('progress', (p) => p.stage === 'draining');
  held.kill('SIGTERM');
  assert.equal((await held.exited).code, 130);
  assert.equal(fs.existsSync(envFile), false, 'removed after the second signal');
  await patchMetadata(fx.admin, fx.namespace, second.metadata.name, { finalizers: null });
});

/** Plays the controller's workload-level status (core/workloadStatus.ts) on the suite's workload. */
async function setWorkloadStatus(status: Record<string, unknown> | null): Promise<void> {
  await fx.admin.makeApiClient(AppsV1Api).patchNamespacedDeployment(
    {
      name: fx.workload.name,
      namespace: fx.namespace,
      body: {
        metadata: {
          annotations: {
            [WORKLOAD_STATUS_ANNOTATION]:
              status === null ? null : JSON.stringify({ updated: new Date().toISOString(), ...status }),
          },
        },
      },
    },
    mergePatch,
  );
}

/** Starts an env-mode sidecar, lets it go Active, then SIGTERMs it while a finalizer holds the split. */
async function stopHeld(extra: readonly string[]): Promise<{ sidecar: SidecarProcess; name: string }> {
  const session = await rabbitQueue('rses');
  const sidecar = startSidecar(['--mode', 'env', '--queue', 'invoices', ...extra]);
  const split = await activateWhenAsked(fx.admin, sidecar, [
    { name: 'invoices', phase: 'Active', shadow: { source: session } },
  ]);
  await sidecar.waitFor('ready');
  const name = split.metadata.name;
  await patchMetadata(fx.admin, fx.namespace, name, { finalizers: ['queuesplit.dev/test-drain'] });
  sidecar.kill('SIGTERM');
  await sidecar.waitFor('progress', (p) => p.stage === 'draining');
  return { sidecar, name };
}

test('last words: a route that was not the last one: the status still counting it (the controller holds back a rewrite of the same story) is not read as another route, and not waited on', async () => {
  try {
    // Two routes split before the stop: ours and another. The status is not rewritten after
    // ours is gone (as when the controller holds back a same-story rewrite).
    await setWorkloadStatus({ phase: 'Split', routes: 2, message: '2 split route(s).' });
    const stopped = await stopHeld(['--detach-timeout', '60']);
    await patchMetadata(fx.admin, fx.namespace, stopped.name, { finalizers: null });
    const detached = await stopped.sidecar.waitFor('detached', () => true, 60_000);
    assert.equal(detached.drained, true);
    assert.match(detached.message, /stays split for 1 other route\(s\)/, detached.message);
    assert.equal(stopped.sidecar.of('warning').filter((w) => w.code === 'handback-pending').length, 0);
    assert.equal((await stopped.sidecar.exited).code, 0);
  } finally {
    await setWorkloadStatus(null);
  }
});

test('last words: "your route drained" is not "handed back" — a handback that waits is reported with its reason and safe action', async () => {
  try {
    await setWorkloadStatus({ phase: 'Split', routes: 1, message: '1 split route(s).' });
    const waiting = await stopHeld(['--detach-timeout', '6']);
    await setWorkloadStatus({
      phase: 'HandingBack',
      step: 'DRAINING_APP',
      routes: 0,
      message:
        'The last split ended; the app is getting its sources back (step DRAINING_APP). Waiting: orders: the application has not drained its shadow.',
      nextAction: "Nothing is lost: unconsumed messages stay in the app's shadow.",
    });
    await patchMetadata(fx.admin, fx.namespace, waiting.name, { finalizers: null });
    const pending = await waiting.sidecar.waitFor('warning', (w) => w.code === 'handback-pending', 20_000);
    assert.match(pending.message, /not finished \(HandingBack\).*has not drained its shadow/);
    assert.match(pending.suggestedAction ?? '', /Nothing is lost/);
    assert.match(pending.suggestedAction ?? '', /kubectl describe deployment\/orders -n /);
    const detached = await waiting.sidecar.waitFor('detached');
    assert.equal(detached.drained, true, 'the route did drain');
    assert.match(detached.message, /your route drained, but deployment\/orders is not handed back yet/);
    assert.equal(detached.handback?.phase, 'HandingBack');
    assert.doesNotMatch(waiting.sidecar.stderr, /handed back \(the app consumes/);
    assert.equal((await waiting.sidecar.exited).code, 0);

    // The same stop when the controller finishes the handback meanwhile: it says so.
    await setWorkloadStatus({ phase: 'Split', routes: 1, message: '1 split route(s).' });
    const finishing = await stopHeld(['--detach-timeout', '20']);
    await setWorkloadStatus({
      phase: 'HandingBack',
      step: 'RESTORING_APP',
      routes: 0,
      message: 'The last split ended; the app is getting its sources back (step RESTORING_APP).',
    });
    await patchMetadata(fx.admin, fx.namespace, finishing.name, { finalizers: null });
    await finishing.sidecar.waitFor(
      'progress',
      (p) => /handing deployment\/orders back/.test(p.message),
      20_000,
    );
    await setWorkloadStatus({ phase: 'HandedBack', routes: 0, message: 'Handed back.' });
    const done = await finishing.sidecar.waitFor('detached', () => true, 20_000);
    assert.match(done.message, /your route drained, and deployment\/orders is handed back/);
    assert.equal(done.handback?.phase, 'HandedBack');
    assert.equal(finishing.sidecar.of('warning').filter((w) => w.code === 'handback-pending').length, 0);
  } finally {
    await setWorkloadStatus(null);
  }
});
