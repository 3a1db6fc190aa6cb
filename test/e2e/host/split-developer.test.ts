// The real VS Code as a developer meets it: a Kubernetes user bound to the
// `queuesplit-developer` role only (never the admin kubeconfig), no `queueSplit.owner`, `http`
// delivery to the debugged process. Start (a debug launch), debug (the debuggee receives its
// messages, which the queue-agent streams through the API server's port-forward), the split's
// details (the role may not list Events: the page says so and shows the rest), stop.
import assert from 'node:assert/strict';
import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import { after, before, describe, it } from 'mocha';
import * as vscode from 'vscode';
import { applyObjects } from '../../../deploy/install';
import { developerBinding } from '../../../deploy/manifests';
import { userKubeconfig } from '../../env/k8s/kubeconfig';
import { runDir } from '../../env/paths';
import { freePort } from '../../support/freePort';
import { getSplit, pollUntil, prepareSplitFixture, type SplitFixture } from '../support/cluster';
import type { QueueSplitApi } from '../../../extension/extension';
import type { DetailsModel } from '../../../extension/model/details';
import { activateExtension, HostSettings, launchNode, leaveHost } from '../support/host';

let fixture: SplitFixture;
let dir: string;
let user: string;
let kubeconfig: string;
let api: QueueSplitApi;
const settings = new HostSettings();

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
