// The real VS Code as a developer meets it: a Kubernetes user bound to the
// `queuesplit-developer` role only (never the admin kubeconfig), no `queueSplit.owner`, `http`
// delivery to the debugged process. Start (a debug launch), debug (the debuggee receives its
// messages, which the queue-agent streams through the API server's port-forward), a burst whose
// delivered count the Queue Splits view follows (redrawn at most 4 times a second, the final
// count always shown), the split's details (the role may not list Events: the page says so and
// shows the rest), stop.
import assert from 'node:assert/strict';
import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import { after, before, describe, it } from 'mocha';
import * as vscode from 'vscode';
import type { QueueSplitApi } from '../../../extension/extension';
import type { RouteNode, TreeNode } from '../../../extension/model/tree';
import { SESSION_CHANGE_INTERVAL_MS } from '../../../extension/sidecar/splitSessions';
import { applyObjects } from '../../../deploy/apply';
import { developerBinding } from '../../../deploy/manifests';
import { userKubeconfig } from '../../env/k8s/kubeconfig';
import { runDir } from '../../env/paths';
import { freePort } from '../../support/freePort';
import { getSplit, pollUntil, prepareSplitFixture, type SplitFixture } from '../support/cluster';
import type { DetailsModel } from '../../../extension/model/details';
import { activateExtension, HostSettings, launchNode, leaveHost } from '../support/host';

let fixture: SplitFixture;
let dir: string;
let user: string;
let kubeconfig: string;
let api: QueueSplitApi;
const settings = new HostSettings();
/** Messages of the burst the view must follow. */
const BURST = 300;

/** The route rows of the Queue Splits view, as VS Code gets them. */
async function routeRows(node?: TreeNode): Promise<RouteNode[]> {
  const rows: RouteNode[] = [];
  for (const child of await api.tree.getChildren(node))
    if (child.kind === 'route') rows.push(child);
    else rows.push(...(await routeRows(child)));
  return rows;
}

/** What a route row says was handed to my process (its tooltip), as VS Code would draw it now. */
function handedOver(row: RouteNode): number | undefined {
  const tooltip = api.tree.getTreeItem(row).tooltip;
  const text = tooltip instanceof vscode.MarkdownString ? tooltip.value : String(tooltip);
  const match = /handed to your process: (\d+)/.exec(text);
  return match !== null ? Number(match[1]) : undefined;
}

describe('a developer with only the developer role: start, debug and stop in the real VS Code (real cluster, http through the queue-agent)', function () {
  this.timeout(480_000);

  before(async () => {
    fixture = await prepareSplitFixture('qs-e2e-dev', { install: false });
    dir = fs.mkdtempSync(path.join(os.tmpdir(), 'qs-e2e-dev-'));
    user = `dev-e2e-${fixture.namespace.slice(-6)}`;
    await applyObjects(fixture.admin, [developerBinding(fixture.namespace, { kind: 'User', name: user })]);
    kubeconfig = path.join(dir, 'developer.kubeconfig');
    await userKubeconfig(
      fixture.admin,
      user,
      fixture.namespace,
      path.join(runDir, 'k8s', 'pki', 'ca.crt'),
      kubeconfig,
    );
    api = await activateExtension();
    await settings.set({
      kubeconfig,
      namespace: fixture.namespace,
      owner: undefined,
      leaseSeconds: 30,
      linger: 0,
    });
  });

  after(async function () {
    this.timeout(120_000);
    await leaveHost({ settings, remove: [dir], fixture, closeEditors: true });
  });

  it('a debug launch splits as the Kubernetes user, the debuggee receives its messages, stopping hands the queue back', async () => {
    const port = await freePort();
    const got = path.join(dir, 'received.jsonl');
    const program = path.join(dir, 'handler.js');
    fs.writeFileSync(
      program,
      [
        "const http = require('http'); const fs = require('fs');",
        'http.createServer((req, res) => {',
        "  let body = ''; req.on('data', (c) => (body += c));",
        `  req.on('end', () => { fs.appendFileSync(${JSON.stringify(got)}, JSON.stringify({ id: req.headers['ce-id'], user: req.headers['x-queue-split-user'] }) + '\\n'); res.writeHead(200).end(); });`,
        `}).listen(${port}, '127.0.0.1');`,
      ].join('\n'),
    );
    await settings.set({ 'delivery.httpTarget': `http://127.0.0.1:${port}/` });
    const ok = await launchNode('developer handler', program, {
      queueSplit: { workload: `deployment/${fixture.workload}`, queues: ['orders'], delivery: 'http' },
    });
    assert.equal(ok, true, 'the launch started');
    const [name] = await fixture.splits();
    assert.ok(name, 'the launch created a QueueSplit');
    const split = await pollUntil(
      'the split Active',
      () => getSplit(fixture.admin, fixture.namespace, name),
      (s) => s?.status?.phase === 'Active',
      240_000,
    );
    assert.equal(split?.spec.owner, user, 'the owner is the Kubernetes user, not a setting');
    assert.match(split?.spec.session?.publicKey ?? '', /^ed25519:/, 'only the public key is in the spec');

    const ids = [1, 2, 3].map((i) => `${fixture.source}-dev-${i}`);
    await fixture.publish(ids, user);
    await fixture.publish([`${fixture.source}-team-1`]);
    const received = await pollUntil(
      'the debuggee received my messages',
      async () =>
        fs.existsSync(got)
          ? fs
              .readFileSync(got, 'utf8')
              .trim()
              .split('\n')
              .map((l) => JSON.parse(l) as { id: string; user: string })
          : [],
      (r) => ids.every((id) => r.some((m) => m.id === id)),
      120_000,
    );
    assert.ok(
      received.every((m) => m.user === user),
      'only messages with my header reached me',
    );

    // A burst: the view's row of my split redraws alone, a few times a second, up to the final count.
    const burstStarted = Date.now();
    const row = await pollUntil(
      'my route row with its sidecar in the view',
      async () => (await routeRows()).find((r) => r.split.metadata.name === name),
      (r) => r !== undefined && handedOver(r) === ids.length,
      60_000,
    );
    assert.ok(row);
    const redraws: { at: number; count: number | undefined }[] = [];
    const listening = api.tree.onDidChangeTreeData((fired) => {
      const rows = Array.isArray(fired) ? fired : [fired];
      if (rows.includes(row)) redraws.push({ at: Date.now(), count: handedOver(row) });
    });
    const final = ids.length + BURST;
    try {
      await fixture.publish(
        Array.from({ length: BURST }, (_, i) => `${fixture.source}-burst-${i}`),
        user,
      );
      await pollUntil(
        `the view redrawn with ${final} handed over`,
        async () => redraws.at(-1)?.count,
        (count) => count !== undefined && count >= final,
        120_000,
      );
    } finally {
      listening.dispose();
    }
    const counts = redraws.map((r) => r.count ?? 0);
    const burstMs = redraws.at(-1)!.at - redraws[0]!.at;
    const summary = `${redraws.length} redraws over ${burstMs} ms: ${counts.join(', ')}`;
    console.log(
      `      burst of ${BURST}: ${summary}; the check took ${((Date.now() - burstStarted) / 1000).toFixed(1)} s`,
    );
    assert.equal(counts.at(-1), final, `the last redraw shows every message handed over: ${summary}`);
    assert.ok(
      redraws.length >= 2 && counts[0]! < final,
      `the row followed the burst, not only its end: ${summary}`,
    );
    assert.ok(
      counts.every((c, i) => i === 0 || c >= counts[i - 1]!),
      `no redraw shows less than the one before: ${summary}`,
    );
    assert.ok(
      redraws.every((r, i) => i === 0 || r.at - redraws[i - 1]!.at >= SESSION_CHANGE_INTERVAL_MS - 10),
      `at most one redraw per ${SESSION_CHANGE_INTERVAL_MS} ms, not one per message: ${summary}`,
    );
    // The details page of my split: the developer role grants no `list events`, so that one line
    // says why, and the page shows everything else (never a failure).
    await vscode.commands.executeCommand('queueSplit.showSplitDetails', name);
    const handed = (m: DetailsModel | undefined) =>
      Number(m?.counts.find((c) => c.label === 'Handed to your process')?.value ?? 0);
    const details = await pollUntil(
      'the details page shows my Active split, its deliveries and why there are no events',
      async () => api.details.modelOf(name),
      (m) => m?.phase.text === 'Active' && m.events.state !== 'loading' && handed(m) >= ids.length,
      30_000,
    );
    assert.equal(details?.heading, `Your split of ${fixture.workload}`);
    const events = details?.events;
    assert.equal(events?.state, 'unavailable', JSON.stringify(events));
    assert.match(events.reason, /may not list events in namespace /);
    assert.equal(details?.routes[0]?.queue, 'orders');
    assert.equal(details?.actions[0]?.id, 'sendTest');

    await vscode.debug.stopDebugging();
    await fixture.waitForNoSplits();
    await pollUntil(
      'the team message reached the app',
      async () => fixture.appReceived(fixture.source),
      (app) => app.has(`${fixture.source}-team-1`),
      120_000,
    );
  });
});
