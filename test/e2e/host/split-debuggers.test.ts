// Launch configurations of other debuggers, `persist`, and "Stop All My Splits", on the local
// cluster against the real RabbitMQ, through the real `vscode` API in the extension host.
//
// python (debugpy), go and java: code-server here has no debug adapters for them, so a launch of
// those types cannot start. The test calls the extension's REAL registered provider
// (the `debug` object activate() returns — the same instance registered for '*') with
// resolveDebugConfigurationWithSubstitutedVariables, exactly as VS Code calls it before starting
// a debugger. The split behind it is real: created on the cluster, Active, its env resolved by
// the real sidecar. The per-type merge itself (cppdbg's `environment` list included) is also unit
// tested in test/unit/extension/debuggerEnv.test.ts.
//
// persist and Stop All My Splits use real node debug sessions and real QueueSplits; the
// teammate's split is created with the admin credentials, as the teammate's own tools would.
import assert from 'node:assert/strict';
import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';
import { after, before, describe, it } from 'mocha';
import * as vscode from 'vscode';
import type { QueueSplitApi } from '../../../extension/extension';
import { createSplit, deleteSplit, waitForSplitGone, waitForSplitPhase } from '../../support/splits';
import { getSplit, pollUntil, prepareSplitFixture, type SplitFixture } from '../support/cluster';
import { activateExtension, HostSettings, launchNode, leaveHost } from '../support/host';

let fixture: SplitFixture;
let api: QueueSplitApi;
let dir: string;
const settings = new HostSettings();
const REAL_SOURCE = 'the-real-queue-must-not-be-used';

interface Marker {
  key: string;
  split: string;
}
const markerOf = (c: vscode.DebugConfiguration | null | undefined) =>
  (c as { __queueSplitSession?: Marker } | null | undefined)?.__queueSplitSession;

function block(extra: Record<string, unknown> = {}): Record<string, unknown> {
  return { workload: `deployment/${fixture.workload}`, queues: ['orders'], delivery: 'env', ...extra };
}

async function onlySplit(): Promise<string> {
  const names = await fixture.splits();
  assert.equal(names.length, 1, `exactly one QueueSplit: ${names.join(', ')}`);
  return names[0]!;
}

describe('other debuggers, persist and Stop All My Splits (real cluster)', function () {
  this.timeout(600_000);

  before(async () => {
    fixture = await prepareSplitFixture('qs-e2e-dbg', { install: false });
    dir = fs.mkdtempSync(path.join(os.tmpdir(), 'qs-e2e-dbg-'));
    api = await activateExtension();
    // These tests assert a split stops with its debug session: no linger (split-linger.test.ts covers it).
    await settings.forCluster(fixture, { linger: 0 });
  });

  after(async function () {
    this.timeout(120_000);
    await leaveHost({ settings, remove: [dir], fixture });
  });

  it('python (debugpy), go and java launches resolved at once share one split and get its env in `env`', async () => {
    const folder = vscode.workspace.workspaceFolders?.[0];
    const own = { SOURCE_QUEUE: REAL_SOURCE, KEEP: 'kept' };
    const launches: vscode.DebugConfiguration[] = [
      { type: 'debugpy', request: 'launch', name: 'py', program: 'app.py', env: own, queueSplit: block() },
      {
        type: 'go',
        request: 'launch',
        name: 'go',
        mode: 'debug',
        program: '.',
        env: own,
        queueSplit: block(),
      },
      { type: 'java', request: 'launch', name: 'java', mainClass: 'Main', env: own, queueSplit: block() },
    ];
    const provider = api.debug;
    const resolved = await Promise.all(
      launches.map((c) => provider.resolveDebugConfigurationWithSubstitutedVariables(folder, c)),
    );
    const name = await onlySplit();
    const split = await getSplit(fixture.admin, fixture.namespace, name);
    assert.equal(split?.status?.phase, 'Active');
    const shadow = split?.status?.queues?.[0]?.shadow?.source;
    assert.ok(shadow, 'the controller named the session shadow');
    const keys = new Set<string>();
    resolved.forEach((config, i) => {
      assert.ok(config, `${launches[i]!.type} resolved`);
      assert.equal(config.type, launches[i]!.type);
      const env = config.env as Record<string, string>;
      assert.equal(env.SOURCE_QUEUE, shadow, `${config.type}: consumes the session shadow`);
      assert.equal(
        env.AMQP_URL,
        fixture.services.inCluster.amqpUrl,
        `${config.type}: connection env from the Secret`,
      );
      assert.equal(env.KEEP, 'kept', `${config.type}: its own env stays`);
      assert.equal(launches[i]!.env.SOURCE_QUEUE, REAL_SOURCE, 'the original configuration is not changed');
      const marker = markerOf(config);
      assert.equal(marker?.split, name);
      keys.add(marker!.key);
    });
    assert.equal(keys.size, 3, 'each launch holds the split under its own key');

    // Double resolution (a restart, a compound, a child session) passes through untouched.
    const again = await provider.resolveDebugConfigurationWithSubstitutedVariables(folder, resolved[0]!);
    assert.equal(again, resolved[0]);
    assert.deepEqual(await fixture.splits(), [name], 'no second split');

    // env delivery into an attach configuration cannot work: refused before anything is created.
    const attach = await provider.resolveDebugConfigurationWithSubstitutedVariables(folder, {
      type: 'debugpy',
      request: 'attach',
      name: 'py attach',
      connect: { host: '127.0.0.1', port: 5678 },
      queueSplit: block(),
    });
    assert.equal(attach, undefined, 'the attach launch is aborted');

    // The split stays while any of them holds it and stops with the last.
    const [k1, k2, k3] = [...keys];
    api.services.sessions.release(k1!);
    api.services.sessions.release(k2!);
    await sleep(6_000); // longer than the release grace
    assert.deepEqual(await fixture.splits(), [name], 'still held by the java launch');
    api.services.sessions.release(k3!);
    await fixture.waitForNoSplits();
  });

  it('persist: true keeps the split running after the debug session ends', async () => {
    const program = path.join(dir, 'idle.js');
    fs.writeFileSync(program, 'setInterval(() => undefined, 1000);\n');
    let session: vscode.DebugSession | undefined;
    const listener = vscode.debug.onDidStartDebugSession((s) => {
      if (s.parentSession === undefined && s.name === 'persisted') session = s;
    });
    try {
      const ok = await launchNode('persisted', program, { queueSplit: block({ persist: true }) });
      assert.equal(ok, true);
      const name = await onlySplit();
      assert.ok(session, 'the debug session started');
      await vscode.debug.stopDebugging(session);
      await pollUntil(
        'the debug session ended',
        async () => vscode.debug.activeDebugSession,
        (s) => s === undefined,
        30_000,
      );
      await sleep(8_000); // well past the release grace that stops a split without persist
      const split = await getSplit(fixture.admin, fixture.namespace, name);
      assert.equal(split?.status?.phase, 'Active', 'the split outlived its debug session');
      assert.equal(split?.metadata.deletionTimestamp, undefined);
      const live = api.services.sessions.list().find((s) => s.name === name);
      assert.ok(live?.live, 'its sidecar still runs (renewing the lease)');
    } finally {
      listener.dispose();
    }
  });

  it("Stop All My Splits stops my split and leaves a teammate's split alone", async () => {
    const mine = await onlySplit(); // the persisted split of the previous test
    const teammate = `${fixture.owner}-mate`;
    const theirs = await createSplit(fixture.admin, fixture.namespace, {
      workload: fixture.workload,
      queues: ['orders'],
      filter: { 'x-queue-split-user': teammate },
      owner: teammate,
      leaseSeconds: 600,
    });
    try {
      await waitForSplitPhase(fixture.admin, fixture.namespace, theirs.metadata.name, 'Active', 180_000);
      await vscode.commands.executeCommand('queueSplit.stopAllMySplits');
      await waitForSplitGone(fixture.admin, fixture.namespace, mine, 180_000);
      const left = await getSplit(fixture.admin, fixture.namespace, theirs.metadata.name);
      assert.ok(left, "the teammate's split is still there");
      assert.equal(left.metadata.deletionTimestamp, undefined, 'and nobody asked to delete it');
      assert.equal(left.status?.phase, 'Active');
      assert.deepEqual(await fixture.splits(), [theirs.metadata.name]);
      assert.equal(
        api.services.sessions.list().some((s) => s.live),
        false,
        'no sidecar of mine runs any more',
      );
    } finally {
      await deleteSplit(fixture.admin, fixture.namespace, theirs.metadata.name).catch(() => undefined);
      await fixture.waitForNoSplits();
    }
  });
});
