// Real splits through debug launches, on the local cluster against the real RabbitMQ: a Node.js
// launch configuration with a queueSplit block (env delivery) gets its split created and made
// Active before the debugger starts; the debuggee's env points at its session shadow (with the
// broker URL the workload reads from a Secret). Two launches of the same workload at once share
// one split, which stays while either runs and drains away when the last one ends.
import assert from 'node:assert/strict';
import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';
import { after, before, describe, it } from 'mocha';
import * as vscode from 'vscode';
import { queueSplitCrd } from '../../../core/crd/crdManifest';
import { controllerManifests } from '../../../deploy/manifests';
import { getSplit, pollUntil, prepareSplitFixture, type SplitFixture } from '../support/cluster';
import { HostSettings, leaveHost } from '../support/host';

let fixture: SplitFixture;
let dir: string;
const settings = new HostSettings();

function consumerProgram(name: string): { program: string; envFile: string } {
  const envFile = path.join(dir, `${name}.env.json`);
  const program = path.join(dir, `${name}.js`);
  fs.writeFileSync(
    program,
    [
      "const fs = require('fs');",
      `fs.writeFileSync(${JSON.stringify(envFile)}, JSON.stringify({ SOURCE_QUEUE: process.env.SOURCE_QUEUE, AMQP_URL: process.env.AMQP_URL, KEEP: process.env.KEEP }));`,
      'setInterval(() => undefined, 1000);',
    ].join('\n'),
  );
  return { program, envFile };
}

function launch(name: string, program: string): vscode.DebugConfiguration {
  return {
    type: 'node',
    request: 'launch',
    name,
    program,
    env: { SOURCE_QUEUE: 'the-real-queue-must-not-be-used', KEEP: 'kept' },
    queueSplit: { workload: `deployment/${fixture.workload}`, queues: ['orders'], delivery: 'env' },
  };
}

const readEnv = (file: string) =>
  pollUntil(
    `${path.basename(file)} written by the debuggee`,
    async () => JSON.parse(fs.readFileSync(file, 'utf8')) as Record<string, string | undefined>,
    () => true,
    60_000,
  );

describe('debug launches with a queueSplit block (real cluster, env delivery)', function () {
  this.timeout(480_000);

  before(async () => {
    // run.ts installs the controller before the extension-host tests (see ensureController).
    fixture = await prepareSplitFixture('qs-e2e-host', { install: false });
    dir = fs.mkdtempSync(path.join(os.tmpdir(), 'qs-e2e-env-launch-'));
    // These tests assert a split stops with its debug session: no linger (split-linger.test.ts covers it).
    await settings.forCluster(fixture, { linger: 0 });
  });

  after(async function () {
    this.timeout(120_000);
    await leaveHost({ settings, remove: [dir], fixture });
  });

  it('"Install Controller into Cluster" (server-side dry run) is accepted by the real API server', async () => {
    const applied = await vscode.commands.executeCommand<string[] | undefined>(
      'queueSplit.installController',
      {
        dryRun: true,
        confirmed: true,
      },
    );
    assert.ok(applied, 'the command reported what it applied');
    const kinds = applied.map((line) => line.replace(/^(created|updated|unchanged) /, ''));
    const objects = [queueSplitCrd(), ...controllerManifests()] as {
      kind: string;
      metadata: { name: string };
    }[];
    const expected = objects.map((o) => `${o.kind} ${o.metadata.name}`);
    assert.deepEqual(kinds, expected, applied.join('\n'));
  });

  it('two concurrent launches share one split, get its env merged, and the split ends with the last', async () => {
    const a = consumerProgram('consumer-a');
    const b = consumerProgram('consumer-b');
    const sessions = new Map<string, vscode.DebugSession>();
    const listener = vscode.debug.onDidStartDebugSession((s) => {
      if (s.parentSession === undefined) sessions.set(s.name, s);
    });
    const started = Date.now();
    try {
      const [okA, okB] = await Promise.all([
        vscode.debug.startDebugging(undefined, launch('consumer A', a.program)),
        vscode.debug.startDebugging(undefined, launch('consumer B', b.program)),
      ]);
      assert.equal(okA && okB, true, 'both launches started');
      console.log(
        `      launch → debuggees running with the split Active: ${((Date.now() - started) / 1000).toFixed(1)}s`,
      );
      const [envA, envB] = await Promise.all([readEnv(a.envFile), readEnv(b.envFile)]);

      const names = await fixture.splits();
      assert.equal(names.length, 1, `one QueueSplit for both launches: ${names.join(', ')}`);
      const split = await getSplit(fixture.admin, fixture.namespace, names[0]!);
      assert.equal(split?.status?.phase, 'Active');
      assert.equal(split?.spec.owner, fixture.owner);
      assert.deepEqual(split?.spec.filter, { 'x-queue-split-user': fixture.owner });
      const shadow = split?.status?.queues?.[0]?.shadow?.source;
      assert.ok(shadow, 'the controller named the session shadow');
      for (const env of [envA, envB]) {
        assert.equal(env.SOURCE_QUEUE, shadow, 'the debuggee consumes its session shadow, not the source');
        assert.equal(
          env.AMQP_URL,
          fixture.services.inCluster.amqpUrl,
          'the connection env came along (from the Secret)',
        );
        assert.equal(env.KEEP, 'kept', "the launch's own env stays");
      }

      const sessionA = sessions.get('consumer A');
      assert.ok(sessionA, `debug sessions: ${[...sessions.keys()].join(', ')}`);
      await vscode.debug.stopDebugging(sessionA);
      await sleep(8_000); // longer than the release grace: B still holds the split
      assert.deepEqual(await fixture.splits(), names, 'the split stays while B runs');

      const sessionB = sessions.get('consumer B');
      assert.ok(sessionB);
      await vscode.debug.stopDebugging(sessionB);
      const stopped = Date.now();
      await fixture.waitForNoSplits();
      console.log(
        `      last session end → split drained and gone: ${((Date.now() - stopped) / 1000).toFixed(1)}s`,
      );
    } finally {
      listener.dispose();
    }
  });
});
