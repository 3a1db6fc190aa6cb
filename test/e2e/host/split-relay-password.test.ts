// Relay into a local RabbitMQ whose password is in VS Code's secret storage, never in settings
// (README, "Workspace Trust, machine settings and broker passwords"), on the local cluster
// through the real `vscode` API: queueSplit.delivery.relayAmqpUrl names a RabbitMQ user made for
// this test without its password →
//   with no password stored, the sidecar's preflight is refused by the broker, the refusal names
//   Set Broker Password…, and no QueueSplit exists →
//   with the password stored (what Set Broker Password… does), the split starts, a message with
//   my header is republished into the local queue, and the password is on the sidecar's command
//   line and in its files nowhere (it went in its environment).
import assert from 'node:assert/strict';
import * as fs from 'node:fs';
import amqp from 'amqplib';
import { after, before, describe, it } from 'mocha';
import type { QueueSplitApi } from '../../../extension/extension';
import type { SplitRequest } from '../../../extension/model/types';
import { uniqueName } from '../../support/services';
import { pollUntil, prepareSplitFixture, type SplitFixture } from '../support/cluster';
import { activateExtension, HostSettings, leaveHost } from '../support/host';

let fixture: SplitFixture;
let api: QueueSplitApi;
let relayUrl: string;
let localQueue: string;
const settings = new HostSettings();
const user = uniqueName('qs-relay-user');
const password = `pw-${uniqueName('relay')}`;

/** The test RabbitMQ's management API, as the admin (guest) of the environment. */
async function management(method: string, resource: string, body?: unknown): Promise<void> {
  const admin = new URL(fixture.services.rabbitManagementUrl);
  const auth = Buffer.from(`${decodeURIComponent(admin.username)}:${decodeURIComponent(admin.password)}`);
  admin.username = '';
  admin.password = '';
  const response = await fetch(new URL(`api/${resource}`, admin), {
    method,
    headers: { authorization: `Basic ${auth.toString('base64')}`, 'content-type': 'application/json' },
    ...(body !== undefined ? { body: JSON.stringify(body) } : {}),
  });
  if (!response.ok && !(method === 'DELETE' && response.status === 404))
    throw new Error(`${method} ${resource}: HTTP ${response.status} ${await response.text()}`);
}

async function request(): Promise<SplitRequest> {
  return {
    target: (await api.services.cluster.api()).target,
    workload: { kind: 'Deployment', name: fixture.workload },
    queues: ['orders'],
    filter: { 'x-queue-split-user': fixture.owner },
    owner: fixture.owner,
    mode: 'relay',
    relay: { brokers: { rabbitmq: relayUrl }, to: { orders: localQueue } },
  };
}

describe("relay into a local RabbitMQ with its password in VS Code's secret storage (real cluster)", function () {
  this.timeout(480_000);

  before(async () => {
    fixture = await prepareSplitFixture('qs-e2e-relaypw', { install: false });
    api = await activateExtension();
    await management('PUT', `users/${encodeURIComponent(user)}`, { password, tags: '' });
    await management('PUT', `permissions/%2F/${encodeURIComponent(user)}`, {
      configure: '.*',
      write: '.*',
      read: '.*',
    });
    const local = new URL(fixture.services.amqpUrl);
    relayUrl = `amqp://${user}@${local.host}`;
    localQueue = uniqueName('qs-e2e-relay-local');
    const connection = await amqp.connect(fixture.services.amqpUrl);
    try {
      await (await connection.createChannel()).assertQueue(localQueue, { durable: false });
    } finally {
      await connection.close();
    }
    await settings.forCluster(fixture, {
      linger: 0,
      'delivery.relayAmqpUrl': relayUrl,
      'delivery.relayTo': { orders: localQueue },
    });
  });

  after(async function () {
    this.timeout(240_000);
    for (const s of api?.services.sessions.list() ?? [])
      await api.services.sessions.stop(s).catch(() => undefined);
    await api?.services.brokerSecrets
      .setRelayPassword('rabbitmq', relayUrl, undefined)
      .catch(() => undefined);
    await fixture?.waitForNoSplits().catch(() => undefined);
    await leaveHost({ settings, remove: [], fixture });
    await management('DELETE', `users/${encodeURIComponent(user)}`).catch(() => undefined);
    const connection = await amqp.connect(fixture.services.amqpUrl).catch(() => undefined);
    await connection
      ?.createChannel()
      .then((ch) => ch.deleteQueue(localQueue))
      .catch(() => undefined);
    await connection?.close().catch(() => undefined);
  });

  it('with no password stored, the preflight is refused by the local broker and names Set Broker Password…; nothing is created', async () => {
    await api.services.brokerSecrets.setRelayPassword('rabbitmq', relayUrl, undefined);
    await assert.rejects(
      api.services.sessions.ensure(await request()),
      (err: Error & { suggestedAction?: string }) => {
        assert.match(err.message, /refused the credentials/);
        assert.match(err.suggestedAction ?? '', /Set Broker Password/);
        return true;
      },
    );
    assert.deepEqual(await fixture.splits(), [], 'no QueueSplit was created');
  });

  it('with the password stored, the split relays my message into the local queue; the password is on no command line and in no file', async () => {
    await api.services.brokerSecrets.setRelayPassword('rabbitmq', relayUrl, password);
    const session = await api.services.sessions.ensure(await request());
    await session.ready;
    const pid = session.process.pid;
    assert.ok(pid !== undefined, 'the sidecar runs');
    const cmdline = fs.readFileSync(`/proc/${pid}/cmdline`, 'utf8');
    assert.ok(cmdline.includes('--mode\0relay'), 'this is the relay sidecar');
    assert.ok(!cmdline.includes(password), 'the password is not on the command line');
    for (const file of session.files.filter((f) => fs.existsSync(f)))
      assert.ok(!fs.readFileSync(file, 'utf8').includes(password), `the password is not in ${file}`);

    const id = uniqueName('relayed');
    await fixture.publish([id], fixture.owner);
    const connection = await amqp.connect(fixture.services.amqpUrl);
    try {
      const channel = await connection.createChannel();
      const got = await pollUntil(
        'my message in the local queue',
        async () => {
          const message = await channel.get(localQueue, { noAck: true });
          return message === false ? undefined : message;
        },
        (m) => m !== undefined,
        90_000,
      );
      assert.equal(got!.properties.messageId, id);
      assert.equal((got!.properties.headers as Record<string, unknown>)['x-queue-split-user'], fixture.owner);
    } finally {
      await connection.close();
    }
    await api.services.sessions.stop(session);
    await fixture.waitForNoSplits();
  });
});
