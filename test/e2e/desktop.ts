// The same extension-host tests (dist-test/e2e-host) in a DESKTOP VS Code, through
// @vscode/test-electron, for machines that have one installed. Not part of CI: these machines
// cannot download VS Code (test-electron's default), so this never tries to; it needs
//
//   VSCODE_EXECUTABLE_PATH=/usr/share/code/code npx tsx test/e2e/desktop.ts
//
// (the Electron binary, e.g. /usr/share/code/code on Linux, ".../Visual Studio Code.app/Contents/
// MacOS/Electron" on macOS, "...\\Code.exe" on Windows). On a Linux machine without a display,
// run it under `xvfb-run -a`. CI runs the same tests in code-server instead (test/e2e/run.ts).
// As there, the extension under test is dist/queue-split.vsix, installed with the desktop CLI's
// --install-extension into a throwaway extensions folder; the tests run beside the stub runner
// extension (test/e2e/harness/installedExtension.ts). Not run on these machines (no desktop VS Code).
import { spawnSync } from 'node:child_process';
import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import { resolveCliArgsFromVSCodeExecutablePath, runTests } from '@vscode/test-electron';
import { writeHostRunner } from './harness/installedExtension';
import { hostTestsDir, repoRoot, vsixFile } from './harness/paths';
import { buildHostTests } from './setup/build-host-tests';

async function main(): Promise<void> {
  const vscodeExecutablePath = process.env.VSCODE_EXECUTABLE_PATH;
  if (!vscodeExecutablePath || !fs.existsSync(vscodeExecutablePath)) {
    throw new Error(
      `Set VSCODE_EXECUTABLE_PATH to an installed desktop VS Code's executable (now: ${vscodeExecutablePath ?? 'unset'}). ` +
        'This runner never downloads VS Code; without a desktop VS Code use `npm run test:e2e` (code-server).',
    );
  }
  const pack = spawnSync('npm', ['run', '--silent', 'package'], { cwd: repoRoot, stdio: 'inherit' });
  if (pack.status !== 0) throw new Error('npm run package failed');
  await buildHostTests();

  const state = fs.mkdtempSync(path.join(os.tmpdir(), 'qs-desktop-vscode-'));
  const workspace = path.join(state, 'workspace');
  fs.mkdirSync(workspace);
  const extensionsDir = path.join(state, 'extensions');
  const [cli, ...cliArgs] = resolveCliArgsFromVSCodeExecutablePath(vscodeExecutablePath);
  const install = spawnSync(
    cli!,
    [...cliArgs, `--extensions-dir=${extensionsDir}`, '--install-extension', vsixFile],
    { stdio: 'inherit', shell: process.platform === 'win32' },
  );
  if (install.status !== 0) throw new Error(`installing ${vsixFile} failed`);
  try {
    await runTests({
      vscodeExecutablePath,
      extensionDevelopmentPath: writeHostRunner(),
      extensionTestsPath: hostTestsDir,
      launchArgs: [
        workspace,
        '--disable-workspace-trust',
        '--skip-welcome',
        '--skip-release-notes',
        `--user-data-dir=${path.join(state, 'user-data')}`,
        `--extensions-dir=${extensionsDir}`, // only the installed .vsix
      ],
    });
  } finally {
    fs.rmSync(state, { recursive: true, force: true });
  }
}

main().catch((err: unknown) => {
  console.error(err instanceof Error ? err.message : err);
  process.exit(1);
});
