// test-order: first (about 80 s, among the longest of its suite)
// The sidecar against real brokers and the real API server, run as the shipped bundle with a
// developer's namespace-scoped credentials (through the group proxy, see groupProxy.ts). The controller is not part of this suite: the tests
// play its role (and the queue-agent's routing, with the shared filter semantics) — they create
// the session shadows, write the QueueSplit status through the status subresource, and hold a
// finalizer while "draining". Routing correctness and the drain itself belong to the agent and
// controller suites; here we prove what the sidecar does with what they hand it. This file: the
// split's life (adopt, restart, stop, preflight, refusals, last words); sidecar-modes.test.ts:
// the command line and the delivery modes.
import assert from 'node:assert/strict';
import { spawn } from 'node:child_process';
import * as fs from 'node:fs';
import * as path from 'node:path';
import { test } from 'node:test';
import { AppsV1Api, CustomObjectsApi } from '@kubernetes/client-node';
import type { QueueSplit } from '../../core/crd/queueSplitSchema';
import { leaseExpiry } from '../../core/crd/validateQueueSplit';
import { WORKLOAD_STATUS_ANNOTATION } from '../../core/workloadStatus';
import { mergePatch } from '../../agent/kube/client';
import { freePort } from '../support/freePort';
import { pollUntil } from '../support/poll';
import { getQueue } from '../support/rabbitManagement';
import { uniqueName } from '../support/services';
import {
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

import { brokerSidecarSuite, FILTER } from './brokerSidecar';

const {
  fx,
  sidecarArgs,
  startSidecar,
  stopAndDetach,
  assertNothingLeaked,
  rabbitQueue,
  routeAmqp,
  httpTarget,
} = brokerSidecarSuite('sidecar');
const services = fx.services;

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

test('the split becoming Active, and then gone, reaches the sidecar as it happens, not at its next read (a watch wakes it)', async () => {
  const session = await rabbitQueue('rwake');
  // A read a minute apart: only the watch on the split can make these waits end sooner.
  const sidecar = startSidecar(['--mode', 'env', '--queue', 'invoices', '--poll-interval', '60000']);
  const split = await activateWhenAsked(fx.admin, sidecar, [
    { name: 'invoices', phase: 'Active', shadow: { source: session } },
  ]);
  await sidecar.waitFor('ready', undefined, 20_000);
  const name = split.metadata.name;
  await patchMetadata(fx.admin, fx.namespace, name, { finalizers: ['queuesplit.dev/test-drain'] }); // the controller's hold
  sidecar.kill('SIGTERM');
  await pollUntil(
    'delete requested',
    () => getSplit(fx.admin, fx.namespace, name),
    (s) => s?.metadata.deletionTimestamp !== undefined,
  );
  await sidecar.waitFor('progress', (p) => p.stage === 'draining' && p.split?.name === name);
  await patchMetadata(fx.admin, fx.namespace, name, { finalizers: null });
  const detached = await sidecar.waitFor('detached', undefined, 20_000);
  assert.equal(detached.drained, true);
  assert.deepEqual(await sidecar.exited, { code: 0, signal: null });
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

/** Another developer's QueueSplit on the suite's workload (the controller's part is not played):
 * deleted by the returned function. */
async function otherSplitOnWorkload(): Promise<() => Promise<void>> {
  const name = `qs-split-other-${uniqueName('o')}`.slice(0, 63);
  const custom = fx.admin.makeApiClient(CustomObjectsApi);
  await custom.createNamespacedCustomObject({
    ...REF,
    namespace: fx.namespace,
    body: {
      apiVersion: `${PRIVATE_GROUP}/v1alpha1`,
      kind: 'QueueSplit',
      metadata: { name },
      spec: {
        workload: { kind: 'Deployment', name: fx.workload.name },
        queues: ['invoices'],
        filter: { 'x-queue-split-user': 'carol' },
        owner: 'carol',
        routeId: 'otherroutecarolaa',
        lease: { renewTime: new Date().toISOString().replace(/\.\d+Z$/, 'Z'), durationSeconds: 300 },
      },
    },
  });
  return async () => {
    await custom
      .deleteNamespacedCustomObject({ ...REF, namespace: fx.namespace, name })
      .catch(() => undefined);
  };
}

test('last words: another route on the workload is told from the QueueSplits themselves, not from a route count the controller held back (which still says 1: another left and ours came within its rewrite window)', async () => {
  const removeOther = await otherSplitOnWorkload();
  try {
    // The bench's case: carol's route left and bob's came within the controller's rewrite
    // window, so the workload still says 1 route when bob stops, while alice's goes on.
    await setWorkloadStatus({ phase: 'Split', routes: 1, message: '1 split route(s).' });
    const stopped = await stopHeld(['--detach-timeout', '60']);
    await patchMetadata(fx.admin, fx.namespace, stopped.name, { finalizers: null });
    const detached = await stopped.sidecar.waitFor('detached', () => true, 60_000);
    assert.equal(detached.drained, true);
    assert.match(detached.message, /stays split for 1 other route\(s\)/, detached.message);
    assert.equal((await stopped.sidecar.exited).code, 0);
  } finally {
    await removeOther();
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
