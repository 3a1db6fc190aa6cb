// test-order: first (about 90 s, among the longest of its suite)
// The sidecar's command line and its delivery modes (http, env, relay) against real brokers and
// the real API server, as sidecar.test.ts runs it (see there): the tests play the controller's
// and the queue-agent's parts (brokerSidecar.ts).
import assert from 'node:assert/strict';
import * as fs from 'node:fs';
import * as http from 'node:http';
import type { AddressInfo } from 'node:net';
import * as path from 'node:path';
import { test } from 'node:test';
import type { IHeaders } from 'kafkajs';
import { produceWithJava } from '../conformance/kafka/foreign';
import { pollUntil } from '../support/poll';
import { getQueue } from '../support/rabbitManagement';
import { uniqueName } from '../support/services';
import { SidecarProcess, activateWhenAsked, getSplit } from './support';

import { brokerSidecarSuite, FILTER } from './brokerSidecar';

const {
  fx,
  startSidecar,
  stopAndDetach,
  assertNothingLeaked,
  kafkaTopic,
  rabbitQueue,
  routeKafka,
  routeAmqp,
  httpTarget,
  committed,
} = brokerSidecarSuite('sidecar-modes');
const services = fx.services;
const kafka = fx.kafka;

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
