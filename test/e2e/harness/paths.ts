// Where the e2e harness finds its tools and puts its results. code-server lives in the per-user
// cache that test/e2e/setup/install-code-server.sh fills (never in the repo's node_modules);
// screenshots and logs go to test-results/e2e/<test>/, which git ignores.
import * as fs from 'node:fs';
import * as path from 'node:path';
import { cacheDir, repoRoot } from '../../env/paths';

export { repoRoot };

export const codeServerVersion = '4.100.3';
export const codeServerBin = path.join(
  cacheDir,
  `code-server-${codeServerVersion}`,
  'node_modules',
  '.bin',
  'code-server',
);
export const chromiumBin = process.env.QS_CHROMIUM ?? '/usr/bin/chromium';
export const installScript = path.join(repoRoot, 'test', 'e2e', 'setup', 'install-code-server.sh');

/** The compiled extension-host tests (see test/e2e/setup/build-host-tests.ts). */
export const hostTestsDir = path.join(repoRoot, 'dist-test', 'e2e-host');

export const extensionBundle = path.join(repoRoot, 'dist', 'extension.js');
/** What the workbenches install (installedExtension.ts). */
export const vsixFile = path.join(repoRoot, 'dist', 'queue-split.vsix');

/** A clean results folder for one test: earlier screenshots of the same test are removed. */
export function resultsDirFor(testName: string): string {
  const slug = testName
    .toLowerCase()
    .replace(/[^a-z0-9]+/g, '-')
    .replace(/^-|-$/g, '');
  const dir = path.join(repoRoot, 'test-results', 'e2e', slug || 'unnamed');
  fs.rmSync(dir, { recursive: true, force: true });
  fs.mkdirSync(dir, { recursive: true });
  return dir;
}

/** Fails with the fix when a tool the e2e suites need is missing: these suites never skip. */
export function requireTools(): void {
  const fix = `Run \`bash ${path.relative(process.cwd(), installScript)}\` (as root: it installs Debian packages).`;
  if (!fs.existsSync(codeServerBin))
    throw new Error(`code-server is not installed at ${codeServerBin}. ${fix}`);
  if (!fs.existsSync(chromiumBin)) throw new Error(`Chromium is not installed at ${chromiumBin}. ${fix}`);
  if (!fs.existsSync(extensionBundle))
    throw new Error(`${extensionBundle} is missing: run \`npm run build\` first (npm run test:e2e does).`);
  if (!fs.existsSync(vsixFile))
    throw new Error(`${vsixFile} is missing: run \`npm run package\` first (npm run test:e2e does).`);
}
