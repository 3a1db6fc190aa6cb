// The extension as a user gets it: dist/queue-split.vsix (`npm run package`), installed with
// code-server's own `--install-extension` into a template extensions folder once per .vsix, and
// copied into each test's private extensions folder (a copy costs milliseconds; an install about a
// second). No workbench loads the checkout as the extension under development.
//
// The extension-host tests still need a development path: VS Code's web workbench runs
// `extensionTestsPath` only when the payload also names an `extensionDevelopmentPath` (it sets
// `isExtensionDevelopment` from that alone). So they name a stub extension that contributes
// nothing (hostRunnerDir): the tests run in the extension host, and `queuesplit.queue-split`
// there is the installed .vsix, as in the UI tests.
import { spawnSync } from 'node:child_process';
import * as fs from 'node:fs';
import * as path from 'node:path';
import { codeServerBin, repoRoot, vsixFile } from './paths';

export { vsixFile };
/** The template: the .vsix installed by code-server, and the stamp of the .vsix it came from. */
const templateDir = path.join(repoRoot, 'dist-test', 'e2e-extensions');
const stampFile = path.join(repoRoot, 'dist-test', 'e2e-extensions.stamp');
/** The stub extension the host tests name as extensionDevelopmentPath. */
export const hostRunnerDir = path.join(repoRoot, 'dist-test', 'e2e-host-runner');

function stampOf(file: string): string {
  const stat = fs.statSync(file);
  return `${stat.size} ${stat.mtimeMs}`;
}

/**
 * The template extensions folder holding dist/queue-split.vsix as code-server installed it;
 * installed again only when the .vsix changed. Fails with the fix when there is no .vsix.
 */
export function installedExtensionsTemplate(): string {
  if (!fs.existsSync(vsixFile))
    throw new Error(`${vsixFile} is missing: run \`npm run package\` first (npm run test:e2e does).`);
  const stamp = stampOf(vsixFile);
  if (fs.existsSync(stampFile) && fs.readFileSync(stampFile, 'utf8') === stamp && fs.existsSync(templateDir))
    return templateDir;
  fs.rmSync(templateDir, { recursive: true, force: true });
  fs.rmSync(stampFile, { force: true });
  const scratch = `${templateDir}.tmp-${process.pid}`;
  fs.rmSync(scratch, { recursive: true, force: true });
  fs.mkdirSync(path.join(scratch, 'user-data'), { recursive: true });
  const install = spawnSync(
    codeServerBin,
    [
      '--user-data-dir',
      path.join(scratch, 'user-data'),
      '--extensions-dir',
      path.join(scratch, 'extensions'),
      '--install-extension',
      vsixFile,
    ],
    { encoding: 'utf8', timeout: 120_000 },
  );
  if (install.status !== 0 || !/successfully installed/i.test(install.stdout))
    throw new Error(
      `code-server --install-extension ${vsixFile} failed (exit ${install.status ?? install.signal}):\n${install.stdout}\n${install.stderr}`,
    );
  fs.renameSync(path.join(scratch, 'extensions'), templateDir);
  fs.rmSync(scratch, { recursive: true, force: true });
  fs.writeFileSync(stampFile, stamp);
  return templateDir;
}

/** Fills a test's fresh extensions folder with the installed .vsix. */
export function copyInstalledExtension(extensionsDir: string): void {
  fs.cpSync(installedExtensionsTemplate(), extensionsDir, { recursive: true });
}

/** Writes the stub extension the host tests run beside (see the header). */
export function writeHostRunner(): string {
  fs.mkdirSync(hostRunnerDir, { recursive: true });
  fs.writeFileSync(
    path.join(hostRunnerDir, 'package.json'),
    `${JSON.stringify(
      {
        name: 'queue-split-e2e-host-runner',
        displayName: 'Queue Split e2e host-test runner (contributes nothing)',
        publisher: 'queuesplit-test',
        version: '0.0.0',
        engines: { vscode: '*' },
      },
      null,
      2,
    )}\n`,
  );
  return hostRunnerDir;
}
