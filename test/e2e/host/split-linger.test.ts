// Linger (README, "Using it from VS Code"): after the last debug session that holds a split ends,
// the split stays `queueSplit.linger` seconds, so a debug restart or the next F5 takes the same
// split back without rolling the workload's pods again; `0` stops it when the session ends.
// Real node debug sessions, a real QueueSplit on the local cluster against the real RabbitMQ.
import assert from 'node:assert/strict';
import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';
import { AppsV1Api } from '@kubernetes/client-node';
import { after, before, describe, it } from 'mocha';
import * as vscode from 'vscode';
import type { QueueSplitApi } from '../../../extension/extension';
import type { TreeNode } from '../../../extension/model/tree';
import { getSplit, pollUntil, prepareSplitFixture, type SplitFixture } from '../support/cluster';
import { activateExtension, HostSettings, launchNode, leaveHost } from '../support/host';

let fixture: SplitFixture;
let api: QueueSplitApi;
let dir: string;
const settings = new HostSettings();
/** Short for the test; long enough for the checks and the next launch under CI load. */
const LINGER_SECONDS = 10;
/** The release grace before linger existed (extension/sidecar/splitSessions.ts stopped a split this long after its last session). */
const OLD_GRACE_MS = 3_000;

function debuggee(name: string): { program: string; envFile: string } {
  const envFile = path.join(dir, `${name}.env.json`);
  const program = path.join(dir, `${name}.js`);
  fs.writeFileSync(
    program,
    [
      "const fs = require('fs');",
      `fs.writeFileSync(${JSON.stringify(envFile)}, JSON.stringify({ SOURCE_QUEUE: process.env.SOURCE_QUEUE }));`,
      'setInterval(() => undefined, 1000);',
    ].join('\n'),
  );
  return { program, envFile };
}

/** Starts a node debug session with the split (env delivery) and waits until its debuggee runs. */
async function debugWithSplit(name: string): Promise<vscode.DebugSession> {
  const { program, envFile } = debuggee(name);
  let session: vscode.DebugSession | undefined;
  const listener = vscode.debug.onDidStartDebugSession((s) => {
    if (s.parentSession === undefined && s.name === name) session = s;
  });
  try {
    const ok = await launchNode(name, program, {
      queueSplit: { workload: `deployment/${fixture.workload}`, queues: ['orders'], delivery: 'env' },
    });
    assert.equal(ok, true, `debug session "${name}" started`);
    await pollUntil(`${name}'s debuggee running`, async () => fs.existsSync(envFile), Boolean, 60_000);
  } finally {
    listener.dispose();
  }
  assert.ok(session, `debug session "${name}" was seen starting`);
  return session;
}

/** What rolls the workload's pods: its pod template and the generation that counts its changes. */
async function workloadRollout(): Promise<{ generation?: number; template: string }> {
  const deployment = await fixture.admin
    .makeApiClient(AppsV1Api)
    .readNamespacedDeployment({ name: fixture.workload, namespace: fixture.namespace });
  return {
    ...(deployment.metadata?.generation !== undefined ? { generation: deployment.metadata.generation } : {}),
    template: JSON.stringify(deployment.spec?.template),
  };
}

/** The descriptions of every route row of the Queue Splits view, as VS Code shows them. */
async function routeRows(): Promise<string[]> {
  const rows: string[] = [];
  const walk = async (node?: TreeNode): Promise<void> => {
    for (const child of await api.tree.getChildren(node)) {
      if (child.kind === 'route')
        rows.push(`${child.split.metadata.name}: ${String(api.tree.getTreeItem(child).description)}`);
      else await walk(child);
    }
  };
  await walk();
  return rows;
}

const sessionOf = (name: string) => api.services.sessions.list().find((s) => s.name === name);

describe('linger: a split outlives its debug session for queueSplit.linger (real cluster)', function () {
  this.timeout(480_000);

  before(async () => {
    fixture = await prepareSplitFixture('qs-e2e-linger', { install: false });
    dir = fs.mkdtempSync(path.join(os.tmpdir(), 'qs-e2e-linger-'));
    api = await activateExtension();
    await settings.forCluster(fixture, { linger: LINGER_SECONDS });
  });

  after(async function () {
    this.timeout(120_000);
    await leaveHost({ settings, remove: [dir], fixture });
  });

  it('the split lingers after the debug session, the next session takes it back without a rollout, linger 0 stops at once', async () => {
    const first = await debugWithSplit('linger first');
    const names = await fixture.splits();
    assert.equal(names.length, 1, `one QueueSplit: ${names.join(', ')}`);
    const name = names[0]!;
    assert.equal((await getSplit(fixture.admin, fixture.namespace, name))?.status?.phase, 'Active');
    const rolledOnce = await workloadRollout();

    await vscode.debug.stopDebugging(first);
    const ended = Date.now();
    await sleep(OLD_GRACE_MS + 1_500);
    assert.deepEqual(await fixture.splits(), [name], 'the split is still there after the old 3 s grace');
    assert.equal(
      (await getSplit(fixture.admin, fixture.namespace, name))?.status?.phase,
      'Active',
      'and still Active',
    );
    const lingering = sessionOf(name);
    assert.ok(lingering?.live === true && lingering.stopping === undefined, 'its sidecar still serves it');
    const rows = await routeRows();
    assert.ok(
      rows.some((r) => r.startsWith(`${name}:`) && /lingering, stops in 0:0\d/.test(r)),
      `the tree says it lingers with the time left: ${rows.join(' | ')}`,
    );

    // The next F5 before the linger ends: the same split, no second activation, no rollout.
    const second = await debugWithSplit('linger second');
    assert.deepEqual(await fixture.splits(), [name], 'the same split, not a new one');
    assert.equal(sessionOf(name), lingering, 'the same sidecar session serves it');
    assert.equal(lingering.lingerUntil, undefined, 'the new debug session ended the linger');
    // Past the first linger's end: it was cancelled, not just outrun.
    await sleep(Math.max(0, ended + LINGER_SECONDS * 1000 + 2_000 - Date.now()));
    assert.deepEqual(await fixture.splits(), [name], 'still there after the first linger would have ended');
    assert.equal(lingering.stopping, undefined, 'nothing stopped it');
    assert.deepEqual(await workloadRollout(), rolledOnce, 'the workload was not rolled again');

    // linger 0: the split stops as soon as its last debug session ends, it never lingers.
    await settings.set({ linger: 0 });
    let lingered = false;
    const watching = api.services.sessions.onDidChange(() => {
      lingered ||= lingering.lingerUntil !== undefined;
    });
    try {
      await vscode.debug.stopDebugging(second);
      await pollUntil(
        `${name} stopping as its debug session ends`,
        async () => lingering.stopping !== undefined || !lingering.live,
        Boolean,
        30_000,
      );
    } finally {
      watching.dispose();
    }
    assert.equal(lingered || lingering.lingerUntil !== undefined, false, 'with linger 0 it did not linger');
    await fixture.waitForNoSplits();
  });
});
