// The kubeconfig as kubectl sees it, in a real VS Code: queueSplit.kubeconfig is a LIST of two
// files named with `~` (under the home folder), merged as kubectl merges $KUBECONFIG — both files
// set a current context and share the cluster and user names, so the first file's current
// context is the one (client-node's own merge would take the last, or refuse the shared names).
// Then, as `kubectl config use-context` does, the current-context in the first file is rewritten
// on disk: the Queue Splits view follows within seconds ("kubeconfig's current"). A context
// picked with Select Context/Namespace… is pinned: it stays when the file changes again (the log
// says the change was seen), and Unpin Context (the row's inline action) follows the file again.
// Screenshots: test-results/e2e/kubeconfig-list-follow-pin-unpin/.
import assert from 'node:assert/strict';
import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import { after, before, test } from 'node:test';
import { parse, stringify } from 'yaml';
import { waitForServerLog } from '../harness/codeServer';
import { fillQuickInput, waitForQuickInput } from '../harness/quickInput';
import { withWorkbench } from '../harness/session';
import { openViewContainer, runCommand, waitForTreeRow } from '../harness/workbench';
import { prepareSplitFixture, type SplitFixture } from '../support/cluster';

interface KubeconfigFile {
  clusters: { name: string }[];
  users: { name: string }[];
}

const VIEW = 'Queue Splits';
/** How soon a rewritten kubeconfig must show in the view (the watch reports within ~0.2 s). */
const FOLLOW_MS = 10_000;

let fixture: SplitFixture;
let home: string;
before(async () => {
  fixture = await prepareSplitFixture('qs-e2e-kcf');
  // Under the real home folder, so the setting can name it with `~`.
  home = fs.mkdtempSync(path.join(os.homedir(), '.qs-e2e-kubeconfig-'));
});
after(async () => {
  if (home !== undefined) fs.rmSync(home, { recursive: true, force: true });
  await fixture?.close();
});

/** A kubeconfig file with these contexts (all of the fixture's cluster, user and namespace). */
function writeKubeconfig(name: string, contexts: string[], current: string): string {
  const admin = parse(fs.readFileSync(fixture.services.kubeconfig, 'utf8')) as KubeconfigFile;
  const cluster = admin.clusters[0]!.name;
  const user = admin.users[0]!.name;
  const file = path.join(home, name);
  // In place, as kubectl writes it (os.WriteFile: truncate and write, same file).
  fs.writeFileSync(
    file,
    stringify({
      ...admin,
      contexts: contexts.map((c) => ({ name: c, context: { cluster, user, namespace: fixture.namespace } })),
      'current-context': current,
    }),
    { mode: 0o600 },
  );
  return file;
}

test('kubeconfig list, follow, pin, unpin', async (t) => {
  writeKubeconfig('a', ['qs-a', 'qs-a2'], 'qs-a');
  writeKubeconfig('b', ['qs-b'], 'qs-b');
  const rel = path.basename(home);
  const settings = {
    'queueSplit.owner': fixture.owner,
    'queueSplit.kubeconfig': [`~/${rel}/a`, `~/${rel}/b`],
  };
  // Not used while the setting names files (it would point elsewhere).
  const env = { KUBECONFIG: '/nonexistent/kubeconfig' };
  await withWorkbench(
    'kubeconfig list, follow, pin, unpin',
    { settings, env },
    async ({ page, server, steps }) => {
      await openViewContainer(page, 'Queue Split');
      const first = await waitForTreeRow(page, VIEW, 'qs-a', 60_000);
      assert.match((await first.textContent()) ?? '', /kubeconfig's current/);
      await waitForTreeRow(page, VIEW, fixture.workload, 60_000);
      await steps.shot("the first file's current context");

      await t.test(
        '`kubectl config use-context` (the file rewritten) is followed within seconds',
        async () => {
          const started = Date.now();
          writeKubeconfig('a', ['qs-a', 'qs-a2'], 'qs-a2');
          const row = await waitForTreeRow(page, VIEW, 'qs-a2', FOLLOW_MS);
          const ms = Date.now() - started;
          assert.match((await row.textContent()) ?? '', /kubeconfig's current/);
          t.diagnostic(`the view showed the new current context ${ms} ms after the file was written`);
          await steps.shot('followed the new current context');
        },
      );

      await t.test(
        'a context picked with Select Context is pinned: a kubeconfig change leaves it',
        async () => {
          await runCommand(page, 'Queue Split: Select Context/Namespace…');
          await waitForQuickInput(page, 'Kubernetes context');
          await fillQuickInput(page, 'Kubernetes context', 'qs-b');
          await fillQuickInput(page, 'namespace in qs-b', fixture.namespace);
          const pinned = await waitForTreeRow(page, VIEW, 'qs-b', 60_000);
          assert.match((await pinned.textContent()) ?? '', /pinned/);
          await steps.shot('pinned');

          writeKubeconfig('a', ['qs-a', 'qs-a2'], 'qs-a');
          // The change is seen, and the pinned target stays.
          await waitForServerLog(
            server,
            'Queue Split.log',
            `the target is the same (context qs-b (pinned), namespace ${fixture.namespace})`,
            FOLLOW_MS,
          );
          const still = await waitForTreeRow(page, VIEW, 'qs-b', 5_000);
          assert.match((await still.textContent()) ?? '', /pinned/);
          await steps.shot('still pinned after the kubeconfig changed');
        },
      );

      await t.test("Unpin (the context row's inline action) follows the kubeconfig again", async () => {
        const row = await waitForTreeRow(page, VIEW, 'qs-b', 5_000);
        await row.hover();
        await row.locator('.action-label[aria-label^="Unpin Context"]').click({ timeout: 10_000 });
        const followed = await waitForTreeRow(page, VIEW, /^qs-a(?!2)/, 60_000);
        assert.match((await followed.textContent()) ?? '', /kubeconfig's current/);
        await steps.shot('unpinned: the kubeconfig current context again');
        // And the palette only offers Unpin while something is pinned.
        await runCommand(page, 'Queue Split: Select Context/Namespace…');
        await waitForQuickInput(page, 'Kubernetes context');
        const offered = await page
          .locator('.quick-input-widget .quick-input-list .monaco-list-row')
          .evaluateAll((rows) => rows.map((r) => r.getAttribute('aria-label') ?? ''));
        assert.ok(!offered.some((r) => r.includes('Unpin')), `no Unpin row: ${offered.join(' | ')}`);
        await page.keyboard.press('Escape');
      });
    },
  );
});
