// A Kafka split in relay mode, and "Send Test Message…" to a Kafka source with the body taken
// from the active editor — on the local cluster against the real Kafka 4.3.1, through the real
// `vscode` API in the extension host:
//   a node debug launch with "delivery": "relay" → the extension starts the sidecar in relay mode
//   (local brokers and destination from the queueSplit.delivery.relay* settings) → the split is
//   Active → with a JSON document open, Send Test Message offers "Contents of …" first and sends
//   it (the quick pick is accepted with VS Code's own accept command) → reading the real source
//   topic with kafkajs shows the record with my header, content type and the editor's text →
//   the sidecar republished it into the local relay topic with the header kept → a selection
//   sends only the selected text → ending the debug session drains the split away.
// The "local broker" of relay is the test Kafka itself, under a different topic name (relayTo):
// relaying into the source's own name on the same broker would loop.
import assert from 'node:assert/strict';
import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';
import { after, before, describe, it } from 'mocha';
import * as vscode from 'vscode';
import type { QueueSplitApi } from '../../../extension/extension';
import { AppsV1Api } from '@kubernetes/client-node';
import { freePort } from '../../support/freePort';
import { readWorkloadStatus } from '../../support/handback';
import { pollUntil } from '../../support/poll';
import { uniqueName } from '../../support/services';
import { waitForSplitPhase } from '../../support/splits';
import { activateExtension, HostSettings, launchNode, leaveHost } from '../support/host';
import { prepareKafkaFixture, type KafkaFixture, type KafkaRecord } from '../support/kafka';

let fixture: KafkaFixture;
let api: QueueSplitApi;
let dir: string;
let relayTopic: string;
const settings = new HostSettings();

/**
 * Runs Send Test Message and accepts each quick pick it opens as proposed (the first row: for
 * the body, the active editor's text). Resolves when the command has finished.
 */
async function sendTestMessageAcceptingDefaults(): Promise<void> {
  let done = false;
  const command = Promise.resolve(vscode.commands.executeCommand('queueSplit.sendTestMessage')).finally(
    () => (done = true),
  );
  const deadline = Date.now() + 60_000;
  while (!done && Date.now() < deadline) {
    await sleep(700);
    if (!done) await vscode.commands.executeCommand('workbench.action.acceptSelectedQuickOpenItem');
  }
  await command;
}

function writeFile(name: string, text: string): vscode.Uri {
  const file = path.join(dir, name);
  fs.writeFileSync(file, text);
  return vscode.Uri.file(file);
}

const withBody = (body: string) => (records: KafkaRecord[]) => records.some((r) => r.value === body);

describe('Kafka: relay delivery and Send Test Message from the active editor (real cluster)', function () {
  this.timeout(600_000);

  before(async () => {
    fixture = await prepareKafkaFixture('qs-e2e-kafka');
    relayTopic = uniqueName('qs-e2e-relay-local');
    await fixture.createTopic(relayTopic);
    dir = fs.mkdtempSync(path.join(os.tmpdir(), 'qs-e2e-kafka-'));
    api = await activateExtension();
    await settings.forCluster(fixture, {
      // These tests assert a split stops with its debug session: no linger (split-linger.test.ts covers it).
      linger: 0,
      'delivery.relayKafkaBrokers': fixture.services.kafkaBrokers.join(','),
      'delivery.relayTo': { orders: relayTopic },
    });
  });

  after(async function () {
    this.timeout(120_000);
    await leaveHost({ settings, closeEditors: true, remove: [dir], fixture });
  });

  it('relays my messages into the local topic and sends the editor text as a test message', async () => {
    const program = path.join(dir, 'idle.js');
    fs.writeFileSync(program, 'setInterval(() => undefined, 1000);\n');
    const ok = await launchNode('relay consumer', program, {
      queueSplit: { workload: `deployment/${fixture.workload}`, queues: ['orders'], delivery: 'relay' },
    });
    assert.equal(ok, true, 'the launch started');
    const [name] = await fixture.splits();
    assert.ok(name, 'the launch created a QueueSplit');
    const started = Date.now();
    await waitForSplitPhase(fixture.admin, fixture.namespace, name, 'Active', 240_000);
    const session = api.services.sessions.list().find((s) => s.name === name);
    assert.ok(session, 'this window runs the sidecar');
    const ready = await session.ready;
    console.log(
      `      relay launch → split Active, sidecar ready: ${((Date.now() - started) / 1000).toFixed(1)}s`,
    );
    assert.equal(ready.mode, 'relay');
    assert.equal(session.request.relay?.to?.orders, relayTopic, 'relayTo came from the settings');

    // The whole active document is the body.
    const body = JSON.stringify({ order: uniqueName('from-editor'), amount: 42 });
    // Saved files, not untitled ones: closing an unsaved editor would ask to save it.
    const doc = await vscode.workspace.openTextDocument(writeFile('order.json', body));
    await vscode.window.showTextDocument(doc);
    await sendTestMessageAcceptingDefaults();
    const source = await fixture.readTopic(fixture.source, withBody(body));
    const sent = source.find((r) => r.value === body)!;
    assert.equal(sent.headers['x-queue-split-user'], fixture.owner, 'my header is on the real source');
    assert.equal(sent.headers['content-type'], 'application/json');
    assert.match(sent.headers['message-id'] ?? '', /^qs-test-/);

    // The split routed it to my session shadow; the sidecar relayed it to the local topic.
    const relayed = await fixture.readTopic(relayTopic, withBody(body), 120_000);
    const copy = relayed.find((r) => r.value === body)!;
    assert.equal(copy.headers['x-queue-split-user'], fixture.owner, 'headers kept by the relay');
    assert.equal(copy.headers['message-id'], sent.headers['message-id']);

    // With a selection, only the selected text is sent.
    const selected = JSON.stringify({ order: uniqueName('selected') });
    const mixed = await vscode.workspace.openTextDocument(
      writeFile('notes.txt', `${selected}\nthis line is not selected\n`),
    );
    const editor = await vscode.window.showTextDocument(mixed);
    editor.selection = new vscode.Selection(0, 0, 0, selected.length);
    await sendTestMessageAcceptingDefaults();
    const second = await fixture.readTopic(fixture.source, withBody(selected));
    assert.equal(second.find((r) => r.value === selected)?.headers['x-queue-split-user'], fixture.owner);
    assert.equal(
      second.some((r) => r.value.includes('not selected')),
      false,
      'nothing outside the selection was sent',
    );

    await vscode.debug.stopDebugging();
    const stopping = Date.now();
    await fixture.waitForNoSplits();
    console.log(
      `      debug session end → Kafka split drained and gone: ${((Date.now() - stopping) / 1000).toFixed(1)}s`,
    );
  });

  it("a relay split whose local Kafka refuses connections is not created: the team's workload is untouched and the error names the setting", async () => {
    const closed = await freePort();
    await settings.set({ 'delivery.relayKafkaBrokers': `127.0.0.1:${closed}` });
    const apps = fixture.admin.makeApiClient(AppsV1Api);
    const generation = async () =>
      (await apps.readNamespacedDeployment({ name: fixture.workload, namespace: fixture.namespace })).metadata
        ?.generation;
    // The previous test's split is gone, but its workload's handback may still roll the app.
    await pollUntil(
      'the previous split handed the workload back',
      () => readWorkloadStatus(fixture.admin, 'Deployment', fixture.namespace, fixture.workload),
      (status) => status?.phase === 'HandedBack',
      180_000,
    );
    const before = {
      splits: await fixture.splits(),
      generation: await generation(),
      // Other test files' sessions of this window (a persisted split) may still be listed.
      sessions: new Set(api.services.sessions.list().map((s) => s.name)),
    };
    try {
      const program = path.join(dir, 'idle.js');
      const ok = await launchNode('relay consumer, local broker down', program, {
        queueSplit: { workload: `deployment/${fixture.workload}`, queues: ['orders'], delivery: 'relay' },
      });
      assert.equal(ok, false, 'the launch did not start');
      // The same refusal as Start Split… gets it, with its words.
      const target = (await api.services.cluster.api()).target;
      await assert.rejects(
        api.services.sessions.ensure({
          target,
          workload: { kind: 'Deployment', name: fixture.workload },
          queues: ['orders'],
          filter: { 'x-queue-split-user': fixture.owner },
          owner: fixture.owner,
          mode: 'relay',
          relay: { brokers: { kafka: `127.0.0.1:${closed}` }, to: { orders: relayTopic } },
        }),
        (err: unknown) => {
          // The extension's own class (its bundle, not this test's): told by name.
          assert.ok(err instanceof Error && err.name === 'UserError', String(err));
          const { suggestedAction } = err as Error & { suggestedAction: string };
          assert.match(
            err.message,
            /^Preflight \(relay delivery\): .*local Kafka 127\.0\.0\.1:\d+.*Nothing was created/,
          );
          assert.match(suggestedAction, /queueSplit\.delivery\.relayKafkaBrokers/);
          return true;
        },
      );
      assert.deepEqual(await fixture.splits(), before.splits, 'no QueueSplit was created');
      assert.equal(await generation(), before.generation, 'the workload was not touched');
      assert.deepEqual(
        api.services.sessions
          .list()
          .map((s) => s.name)
          .filter((n) => !before.sessions.has(n)),
        [],
        'no new sidecar serves a split',
      );
    } finally {
      await settings.set({ 'delivery.relayKafkaBrokers': fixture.services.kafkaBrokers.join(',') });
    }
  });
});
