// Localization is wired end to end: VS Code started in a pseudo-locale (qps-ploc) shows Queue
// Split's command titles from package.nls.<locale>.json and its `vscode.l10n.t` notifications
// from l10n/bundle.l10n.<locale>.json. The pseudo translations are generated from the committed
// English files by @vscode/l10n-dev (`generate-pseudo`) for this test and written into this
// workbench's copy of the installed extension only: the .vsix carries English alone
// (test/unit/marketplace-package.test.ts). VS Code serves a display language only when a language
// pack for it is installed (code-server's server without one answers every locale with English),
// so the test installs a minimal one: it translates none of VS Code's own strings. The
// walkthrough's pages are markdown files, which VS Code looks up as `<page>.nls.<locale>.md` beside
// the English one: the test writes a pseudo page for the first step and reads it in the walkthrough.
// Screenshots: test-results/e2e/localized-in-a-pseudo-locale/.
import { spawnSync } from 'node:child_process';
import * as fs from 'node:fs';
import * as path from 'node:path';
import { test } from 'node:test';
import { removeTempDir, tempDir } from '../harness/exitCleanup';
import { repoRoot } from '../harness/paths';
import { withWorkbench } from '../harness/session';
import { openCommandPalette, runCommand, waitForNotification } from '../harness/workbench';
import type { Page } from 'playwright-core';

const LOCALE = 'qps-ploc';

/** The pseudo-locale files for package.nls.json and l10n/bundle.l10n.json, as generated now. */
function pseudoTranslations(dir: string): { nls: Record<string, string>; bundle: Record<string, string> } {
  fs.copyFileSync(path.join(repoRoot, 'package.nls.json'), path.join(dir, 'package.nls.json'));
  fs.copyFileSync(path.join(repoRoot, 'l10n', 'bundle.l10n.json'), path.join(dir, 'bundle.l10n.json'));
  const tool = path.join(repoRoot, 'node_modules', '.bin', 'vscode-l10n-dev');
  const run = spawnSync(
    tool,
    ['generate-pseudo', '--language', LOCALE, 'package.nls.json', 'bundle.l10n.json'],
    {
      cwd: dir,
      encoding: 'utf8',
    },
  );
  if (run.status !== 0) throw new Error(`${tool} generate-pseudo failed:\n${run.stdout}\n${run.stderr}`);
  const read = (file: string) =>
    JSON.parse(fs.readFileSync(path.join(dir, file), 'utf8')) as Record<string, string>;
  return { nls: read(`package.nls.${LOCALE}.json`), bundle: read(`bundle.l10n.${LOCALE}.json`) };
}

/** The walkthrough page in the pseudo-locale: every line marked, so the test can tell it shown. */
const PSEUDO_PAGE_HEADING = '[qps-ploc] Ýöûŕ çļûšţéŕ åñđ ñåɱéšþåçé';
function pseudoWalkthroughPage(): string {
  const english = fs.readFileSync(path.join(repoRoot, 'media', 'walkthrough', 'context.md'), 'utf8');
  return english.replace(/^# .*$/m, `# ${PSEUDO_PAGE_HEADING}`);
}

/** Waits until some frame (the walkthrough's markdown is rendered in a webview) shows `text`. */
async function waitForFrameText(page: Page, text: string, timeoutMs = 30_000): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  while (Date.now() < deadline) {
    for (const frame of page.frames()) {
      const body = await frame
        .locator('body')
        .innerText({ timeout: 1_000 })
        .catch(() => '');
      if (body.includes(text)) return;
    }
    await page.waitForTimeout(500);
  }
  throw new Error(`no frame shows ${JSON.stringify(text)} within ${timeoutMs} ms`);
}

/** A language pack that only makes `LOCALE` a display language VS Code will serve. */
function writeLanguagePack(dir: string): string {
  const pack = path.join(dir, 'language-pack');
  fs.mkdirSync(path.join(pack, 'translations'), { recursive: true });
  fs.writeFileSync(
    path.join(pack, 'package.json'),
    JSON.stringify({
      name: `vscode-language-pack-${LOCALE}`,
      displayName: 'Pseudo-locale language pack (Queue Split e2e)',
      publisher: 'queuesplit-test',
      version: '0.0.0',
      engines: { vscode: '*' },
      contributes: {
        localizations: [
          {
            languageId: LOCALE,
            languageName: 'Pseudo Language',
            localizedLanguageName: 'Pseudo Language',
            translations: [{ id: 'vscode', path: './translations/main.i18n.json' }],
          },
        ],
      },
    }),
  );
  fs.writeFileSync(
    path.join(pack, 'translations', 'main.i18n.json'),
    JSON.stringify({ version: '1.0.0', contents: {} }),
  );
  return pack;
}

test('localized in a pseudo-locale', async () => {
  const scratch = tempDir('qs-e2e-l10n-');
  try {
    const { nls, bundle } = pseudoTranslations(scratch);
    // A kubeconfig without contexts: Select Context/Namespace… answers with an error notification.
    const kubeconfig = path.join(scratch, 'kubeconfig');
    fs.writeFileSync(kubeconfig, 'apiVersion: v1\nkind: Config\nclusters: []\ncontexts: []\nusers: []\n');
    const command = `${nls['command.category']}: ${nls['command.selectContext.title']}`;
    const notification = bundle['Your kubeconfig has no contexts.'];
    if (notification === undefined || command.includes('undefined'))
      throw new Error('the pseudo translations lack the strings this test reads');
    await withWorkbench(
      'localized in a pseudo-locale',
      {
        locale: LOCALE,
        installExtensions: [writeLanguagePack(scratch)],
        installedExtensionFiles: {
          [`package.nls.${LOCALE}.json`]: JSON.stringify(nls),
          [`l10n/bundle.l10n.${LOCALE}.json`]: JSON.stringify(bundle),
          [`media/walkthrough/context.nls.${LOCALE}.md`]: pseudoWalkthroughPage(),
        },
        settings: { 'queueSplit.kubeconfig': kubeconfig },
      },
      async ({ page, steps }) => {
        // The palette offers the command by its pseudo-locale title (package.nls.qps-ploc.json)…
        await runCommand(page, command);
        // …and the command's notification comes from bundle.l10n.qps-ploc.json (vscode.l10n.t).
        await waitForNotification(page, notification);
        await steps.shot('pseudo-locale notification');

        // The walkthrough: its title and steps from package.nls.qps-ploc.json, its first page from
        // media/walkthrough/context.nls.qps-ploc.md.
        const palette = await openCommandPalette(page);
        await palette.fill('>Welcome: Open Walkthrough');
        await page
          .locator('.quick-input-list .monaco-list-row[aria-label^="Welcome: Open Walkthrough"]')
          .first()
          .click();
        await page
          .locator('.quick-input-widget .quick-input-list .monaco-list-row', {
            hasText: nls['walkthrough.gettingStarted.title']!,
          })
          .first()
          .click({ timeout: 30_000 });
        await page
          .locator('.getting-started-step', {
            hasText: nls['walkthrough.gettingStarted.step.context.title']!,
          })
          .first()
          .waitFor({ state: 'visible', timeout: 30_000 });
        await waitForFrameText(page, PSEUDO_PAGE_HEADING);
        await steps.shot('pseudo-locale walkthrough');
      },
    );
  } finally {
    removeTempDir(scratch);
  }
});
