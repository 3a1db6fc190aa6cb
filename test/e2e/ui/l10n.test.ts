// Localization is wired end to end: VS Code started in a pseudo-locale (qps-ploc) shows Queue
// Split's command titles from package.nls.<locale>.json and its `vscode.l10n.t` notifications
// from l10n/bundle.l10n.<locale>.json. The pseudo translations are generated from the committed
// English files by @vscode/l10n-dev (`generate-pseudo`) for this test and written into this
// workbench's copy of the installed extension only: the .vsix carries English alone
// (test/unit/marketplace-package.test.ts). VS Code serves a display language only when a language
// pack for it is installed (code-server's server without one answers every locale with English),
// so the test installs a minimal one: it translates none of VS Code's own strings.
// Screenshots: test-results/e2e/localized-in-a-pseudo-locale/.
import { spawnSync } from 'node:child_process';
import * as fs from 'node:fs';
import * as path from 'node:path';
import { test } from 'node:test';
import { removeTempDir, tempDir } from '../harness/exitCleanup';
import { repoRoot } from '../harness/paths';
import { withWorkbench } from '../harness/session';
import { runCommand, waitForNotification } from '../harness/workbench';

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
        },
        settings: { 'queueSplit.kubeconfig': kubeconfig },
      },
      async ({ page, steps }) => {
        // The palette offers the command by its pseudo-locale title (package.nls.qps-ploc.json)…
        await runCommand(page, command);
        // …and the command's notification comes from bundle.l10n.qps-ploc.json (vscode.l10n.t).
        await waitForNotification(page, notification);
        await steps.shot('pseudo-locale notification');
      },
    );
  } finally {
    removeTempDir(scratch);
  }
});
