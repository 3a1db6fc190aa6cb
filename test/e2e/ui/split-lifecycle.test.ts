// A developer's whole session, driven through the command palette of a real VS Code
// (code-server + headless Chromium) against the local cluster and the real RabbitMQ:
//   the Queue Splits view shows the annotated workload → "Install Controller…" says what it would
//   do, and Cancel applies nothing → the fixture service runs under the debugger → "Start Split…"
//   (workload inferred from the repo's manifest, queue, filter x-queue-split-user=<me>, http
//   delivery) → the route reaches Active in the tree → a second "Start Split…" refuses, as I type,
//   a regex filter overlapping it (the input box shows a message matching both) and offers my
//   OpenTelemetry routing key → "Show Split Details" opens a page a person reads (phase, route,
//   filter, counts, the Deployment's Events) → "Send Test Message…" with my header reaches the
//   debugged service, after one my handler keeps failing blocked the route (tree, status bar and
//   the open details page say so, live) and the details page's "Reject…" button let it go → a
//   message without my header still goes to the cluster app → "Stop Split"
//   → the tree has no route and the app gets every message again.
// Screenshots: test-results/e2e/split-lifecycle-from-the-command-palette/ (the details page's are
// docs/images/extension/split-details*.png).
import assert from 'node:assert/strict';
import * as fs from 'node:fs';
import * as path from 'node:path';
import { after, before, test } from 'node:test';
import { freePort } from '../harness/codeServer';
import {
  acceptQuickInput,
  clickDialogButton,
  clickQuickInputButton,
  fillQuickInput,
  waitForDialog,
  waitForQuickInput,
  waitForQuickInputMessage,
} from '../harness/quickInput';
import { withWorkbench } from '../harness/session';
import { clickWebviewButton, waitForWebviewText } from '../harness/webview';
import { openViewContainer, runCommand, waitForNotification, waitForTreeRow } from '../harness/workbench';
import { pollUntil, prepareSplitFixture, workloadManifest, type SplitFixture } from '../support/cluster';

let fixture: SplitFixture;
before(async () => {
  fixture = await prepareSplitFixture('qs-e2e-ui');
});
after(async () => {
  await fixture?.close();
});

const RECEIVER = `// The service being debugged: it takes each message the sidecar POSTs (CloudEvents binary mode).
const http = require('http');
const fs = require('fs');
const out = process.env.RECEIVED_FILE;
http
  .createServer((req, res) => {
    let body = '';
    req.on('data', (chunk) => (body += chunk));
    req.on('end', () => {
      if (req.url === '/health') return res.end('ok');
      // A handler bug for one message: it keeps failing, and everything behind it waits.
      if (body.includes('fail-me')) {
        res.statusCode = 500;
        return res.end();
      }
      fs.appendFileSync(out, JSON.stringify({ url: req.url, headers: req.headers, body }) + '\\n');
      console.log('received', req.headers['ce-id'], 'for', req.headers['x-queue-split-user']);
      res.statusCode = 204;
      res.end();
    });
  })
  .listen(Number(process.env.PORT), '127.0.0.1', () => console.log('listening on', process.env.PORT));
`;

interface Received {
  url: string;
  headers: Record<string, string>;
  body: string;
}

function received(file: string): Received[] {
  if (!fs.existsSync(file)) return [];
  return fs
    .readFileSync(file, 'utf8')
    .split('\n')
    .filter(Boolean)
    .map((line) => JSON.parse(line) as Received);
}

test('split lifecycle from the command palette', async () => {
  const port = await freePort();
  const { owner, namespace, workload, source } = fixture;
  const workspaceFiles = {
    'receiver.js': RECEIVER,
    'k8s/deployment.yaml': workloadManifest(workload),
    '.vscode/launch.json': JSON.stringify(
      {
        version: '0.2.0',
        configurations: [
          {
            type: 'node',
            request: 'launch',
            name: 'Debug receiver',
            program: '${workspaceFolder}/receiver.js',
            env: { PORT: String(port), RECEIVED_FILE: '${workspaceFolder}/received.jsonl' },
          },
        ],
      },
      null,
      2,
    ),
  };
  const settings = {
    'queueSplit.kubeconfig': fixture.services.kubeconfig,
    'queueSplit.namespace': namespace,
    'queueSplit.owner': owner,
    'queueSplit.leaseSeconds': 30,
    'queueSplit.delivery.httpTarget': `http://127.0.0.1:${port}/events`,
    'debug.openDebug': 'neverOpen',
  };

  await withWorkbench(
    'split lifecycle from the command palette',
    { workspaceFiles, settings },
    async (session) => {
      const { page, steps } = session;
      const receivedFile = path.join(session.workspace, 'received.jsonl');

      await openViewContainer(page, 'Queue Split');
      await waitForTreeRow(page, 'Queue Splits', 'queuesplit-admin', 60_000);
      await waitForTreeRow(page, 'Queue Splits', workload);
      await waitForTreeRow(page, 'Queue Splits', /orders.*no routes/);
      await steps.shot('queue splits view');

      const installedBefore = await installVersions(fixture);
      await runCommand(page, 'Queue Split: Install Controller into Cluster…');
      const dialog = await waitForDialog(page, 'CustomResourceDefinition queuesplits.queuesplit.dev');
      assert.match(
        (await dialog.textContent()) ?? '',
        /Deployment queuesplit-controller in namespace queuesplit-system/,
      );
      await steps.shot('install confirmation');
      await clickDialogButton(dialog, 'Cancel');
      // Declined: nothing was applied (a replace, even of identical content, is a new write).
      await new Promise((r) => setTimeout(r, 2_000));
      assert.deepEqual(await installVersions(fixture), installedBefore, 'Cancel applied nothing');

      await runCommand(page, 'Debug: Start Debugging');
      await pollUntil(
        'the debugged receiver listens',
        () => fetch(`http://127.0.0.1:${port}/health`).then((r) => r.ok),
        (ok) => ok,
        60_000,
      );
      await steps.shot('receiver running under the debugger');

      await runCommand(page, 'Queue Split: Start Split…');
      // The workload is inferred from k8s/deployment.yaml: the first question is the queues.
      await waitForTreeRow(page, 'Queue Splits', workload);
      const queueInput = await acceptQuickInputAfterShot(page, steps, /queues of orders-app/, 'queues');
      assert.equal(queueInput, '');
      const filter = await acceptQuickInputAfterShot(page, steps, 'header filter', 'filter');
      assert.equal(filter, `x-queue-split-user=${owner}`);
      await acceptQuickInputAfterShot(page, steps, 'delivery', 'delivery mode');
      const target = await acceptQuickInputAfterShot(page, steps, 'http target', 'http target');
      assert.equal(target, `http://127.0.0.1:${port}/events`);
      // The first split of orders-app restarts its pods: asked before, naming the rollout.
      const restart = await waitForDialog(page, 'Starting this split restarts Deployment orders-app', 30_000);
      assert.match((await restart.textContent()) ?? '', /roll out again reading the split's shadows/);
      await steps.shot('confirmation naming the rollout');
      await clickDialogButton(restart, "Start, Don't Ask Again");

      const started = Date.now();
      const route = await waitForTreeRow(
        page,
        'Queue Splits',
        new RegExp(`${owner} \\(you\\)\\s*Active`),
        240_000,
      );
      console.log(`Start Split → route Active in the tree: ${((Date.now() - started) / 1000).toFixed(1)}s`);
      assert.match((await route.textContent()) ?? '', new RegExp(`x-queue-split-user=${owner}`));
      await waitForNotification(page, /Split active: orders-app \[orders\]/, 60_000);
      await steps.shot('route active in the tree');
      // The row's actions are on its right-click menu too, not only inline.
      await route.click({ button: 'right' });
      const menu = page.locator('.context-view .monaco-menu');
      await menu.waitFor({ state: 'visible', timeout: 10_000 });
      const items = (await menu.locator('.action-label').allTextContents()).map((t) => t.trim());
      for (const item of ['Show Split Details', 'Send Test Message…', 'Stop Split'])
        assert.ok(items.includes(item), `the right-click menu offers ${item}: ${items.join(' | ')}`);
      await steps.shot('right-click menu of my route');
      await page.keyboard.press('Escape');
      await menu.waitFor({ state: 'hidden', timeout: 10_000 });

      // Start Split… again: the filter input box checks what I type against my live split as I
      // type. A regex that accepts my own value is refused with a message matching both; the
      // title-bar button offers my OpenTelemetry routing key; Escape leaves nothing behind.
      const overlapStarted = Date.now();
      await runCommand(page, 'Queue Split: Start Split…');
      await acceptQuickInput(page, /queues of orders-app/, 60_000);
      const filterBox = await waitForQuickInput(page, 'header filter', 60_000);
      // The proposed x-queue-split-user=<me> already overlaps my split; the regex's own message
      // (with the change that separates it) is the one to wait for.
      await filterBox.fill(`x-queue-split-user~="${owner}(-[0-9]+)?"`);
      const overlap = await waitForQuickInputMessage(page, /Add x-queue-split-user!=/, 15_000);
      assert.match(
        overlap.trim(),
        new RegExp(
          `^Overlaps your split \\S+ \\(x-queue-split-user=${owner}\\) on orders: ` +
            `a message with headers x-queue-split-user="${owner}" would match both\\. ` +
            `Add x-queue-split-user!=${owner} to your new split, so that no message can match both\\.$`,
        ),
      );
      await steps.shot('filter overlapping my split');
      await clickQuickInputButton(
        page,
        /OpenTelemetry routing key \(W3C baggage member, propagated by OpenTelemetry SDKs\)/,
      );
      await pollUntil(
        'the button proposes my OpenTelemetry routing key',
        () => filterBox.inputValue(),
        (v) => v === `baggage:queue-split-user=${owner}`,
        10_000,
      );
      await page.keyboard.press('Escape');
      await filterBox.waitFor({ state: 'hidden', timeout: 10_000 });
      console.log(
        `filter overlap shown as typed, then Escape: ${((Date.now() - overlapStarted) / 1000).toFixed(1)}s`,
      );

      // Show Split Details: a page a person reads, in a webview (its text read from the frame).
      // The debug console's panel and the notifications are put away so the screenshot shows the page.
      await runCommand(page, 'View: Hide Panel');
      await runCommand(page, 'Notifications: Clear All Notifications');
      await page.mouse.move(150, 600); // no hover over the page in the screenshot
      const detailsStarted = Date.now();
      await runCommand(page, 'Queue Split: Show Split Details');
      const details = 'main[data-split]';
      const shown = await waitForWebviewText(
        page,
        details,
        (t) =>
          new RegExp(`Recent events .*Deployment/${workload} `).test(t) &&
          t.includes('Open Workload Manifest'),
        "the details page shows my split and the Deployment's events",
        60_000,
      );
      console.log(
        `Show Split Details → page with events: ${((Date.now() - detailsStarted) / 1000).toFixed(1)}s`,
      );
      assert.match(shown, new RegExp(`^Your split of ${workload} Active `), shown);
      assert.match(
        shown,
        new RegExp(
          `Next Messages that match your filter reach you: POST http://127\\.0\\.0\\.1:${port}/events\\.`,
        ),
      );
      assert.match(shown, /Send Test Message… Stop Split Open Workload Manifest Show Logs Refresh/);
      assert.match(
        shown,
        new RegExp(
          `Routes orders Active RabbitMQ queue ${source} Session shadow \\S+ Delivers to POST http://127\\.0\\.0\\.1:${port}/events Routed \\d+ `,
        ),
      );
      assert.match(shown, new RegExp(`Filter x-queue-split-user=${owner} `));
      assert.match(shown, /Routed \d+ Handed to you 0 Failed attempts 0 Rejected 0 Recent events /);
      assert.match(
        shown,
        /Conditions .* Ready True RouteActive Matching messages reach your session shadow\./,
      );
      await steps.shot('split details');

      // A message my handler keeps failing (HTTP 500) blocks my route, and the tree, the status bar
      // and the open details page say so; I reject it with the page's button (RabbitMQ: without
      // requeue, as the app's reject would), and the next message flows (the test message below).
      await runCommand(page, 'Queue Split: Send Test Message…');
      await fillQuickInput(page, 'Send Test Message: body', JSON.stringify({ test: `${owner}-fail-me` }));
      const blockedRow = await waitForTreeRow(
        page,
        'Queue Splits',
        /blocked on message \S+: HTTP 500, attempt \d+/,
        90_000,
      );
      const poisonId = /blocked on message (\S+):/.exec((await blockedRow.textContent()) ?? '')![1]!;
      await page
        .locator('#workbench\\.parts\\.statusbar')
        .filter({ hasText: /blocked: HTTP 500, attempt \d+/ })
        .waitFor({ state: 'visible', timeout: 30_000 });
      await steps.shot('route blocked on a failing message');
      const blockedPage = await waitForWebviewText(
        page,
        details,
        (t) => t.includes(`blocked on message ${poisonId}: HTTP 500`),
        'the details page shows the blocked message',
        30_000,
      );
      assert.match(
        blockedPage,
        new RegExp(
          `Next Message ${poisonId} of orders keeps failing \\(HTTP 500, attempt \\d+\\) .* Retry Now Reject… Stop Split`,
        ),
      );
      await page.mouse.move(150, 600);
      await steps.shot('split details blocked');
      await clickWebviewButton(page, details, 'Reject…');
      const reject = await waitForDialog(page, `Reject message ${poisonId} of orders?`);
      assert.match((await reject.textContent()) ?? '', /RabbitMQ rejects it without requeue/);
      await steps.shot('reject confirmation');
      await clickDialogButton(reject, 'Reject Message');
      await waitForTreeRow(
        page,
        'Queue Splits',
        new RegExp(`${owner} \\(you\\)\\s*Active(?!.*blocked)`),
        60_000,
      );
      await waitForWebviewText(
        page,
        details,
        (t) => !t.includes('blocked on message') && / Rejected 1( |$)/.test(t),
        'the details page shows the route flowing again, one message rejected',
        30_000,
      );
      await steps.shot('route flows again');
      await runCommand(page, 'View: Close All Editors');

      const body = JSON.stringify({ test: `${owner}-${Date.now()}` });
      await runCommand(page, 'Queue Split: Send Test Message…');
      await fillQuickInput(page, 'Send Test Message: body', body);
      await waitForNotification(page, /Test message sent to orders/, 60_000);
      await steps.shot('test message sent');
      const mine = await pollUntil(
        'the debugged receiver got the test message',
        async () => received(receivedFile).filter((r) => r.body === body),
        (list) => list.length === 1,
        90_000,
      );
      assert.equal(mine[0]!.headers['x-queue-split-user'], owner, 'it carries my header');
      assert.equal(mine[0]!.headers['ce-source'], `queuesplit://${namespace}/${workload}/orders`);
      assert.equal(mine[0]!.url, '/events');
      await steps.shot('receiver got it');

      // While the split runs, a message without my header still goes to the cluster app.
      const during = `${source}-during-split`;
      await fixture.publish([during]);
      await pollUntil(
        'the cluster app got the message without my header',
        async () => fixture.appReceived(during),
        (ids) => ids.has(during),
        90_000,
      );
      assert.ok(
        !received(receivedFile).some((r) => r.headers['ce-id'] === during),
        'the receiver never saw it',
      );
      assert.ok(!fixture.appReceived(poisonId).has(poisonId), 'the rejected message went to neither');
      assert.equal(
        received(receivedFile).filter((r) => r.headers['ce-id'] === poisonId).length,
        0,
        'a failed attempt is not a delivery',
      );

      await runCommand(page, 'Queue Split: Stop Split');
      const stopping = Date.now();
      await waitForTreeRow(page, 'Queue Splits', /orders.*no routes/, 240_000);
      console.log(`Stop Split → no route in the tree: ${((Date.now() - stopping) / 1000).toFixed(1)}s`);
      await fixture.waitForNoSplits();
      await steps.shot('split stopped, tree empty');

      // The app has its queue back: even my header goes to it now.
      const afterStop = `${source}-after-stop`;
      await fixture.publish([afterStop], owner);
      await pollUntil(
        'after the handback the cluster app consumes the source again, my header or not',
        async () => fixture.appReceived(afterStop),
        (ids) => ids.has(afterStop),
        180_000,
      );
      assert.equal(received(receivedFile).filter((r) => r.headers['ce-id'] === afterStop).length, 0);
      await steps.shot('app gets its messages again');

      await runCommand(page, 'Debug: Stop');
    },
  );
});

/** resourceVersions of the objects "Install Controller…" would replace first and last. */
async function installVersions(f: SplitFixture): Promise<(string | undefined)[]> {
  const { ApiextensionsV1Api, AppsV1Api } = await import('@kubernetes/client-node');
  const crd = await f.admin
    .makeApiClient(ApiextensionsV1Api)
    .readCustomResourceDefinition({ name: 'queuesplits.queuesplit.dev' });
  const controller = await f.admin
    .makeApiClient(AppsV1Api)
    .readNamespacedDeployment({ name: 'queuesplit-controller', namespace: 'queuesplit-system' });
  return [crd.metadata?.resourceVersion, controller.metadata?.resourceVersion];
}

async function acceptQuickInputAfterShot(
  page: Parameters<typeof acceptQuickInput>[0],
  steps: { shot(step: string): Promise<string> },
  title: string | RegExp,
  step: string,
): Promise<string> {
  await waitForQuickInput(page, title, 60_000);
  await steps.shot(`start split ${step}`);
  return acceptQuickInput(page, title);
}
