// The .vsix `npm run package` builds (dist/queue-split.vsix), for the tests that read what ships:
// the one on disk when it is newer than everything it packages, else packaged again (vsce runs
// vscode:prepublish, the build, first). `npm test` packages right after its build step, so the
// unit suite reads that one. Entries are read with Debian's unzip (test/env/install-system-deps.sh).
import { spawnSync } from 'node:child_process';
import * as fs from 'node:fs';
import * as path from 'node:path';
import { repoRoot } from '../env/paths';

export const vsixPath = path.join(repoRoot, 'dist', 'queue-split.vsix');

/** What the package is made of (.vscodeignore's list, and the files vsce adds). */
function inputs(): string[] {
  const listed = [
    'package.json',
    'package.nls.json',
    'l10n/bundle.l10n.json',
    '.vscodeignore',
    'MARKETPLACE.md',
    'CHANGELOG.md',
    'LICENSE',
    'dist/extension.js',
    'dist/sidecar.js',
    'dist/THIRD_PARTY_NOTICES.txt',
  ];
  const dirs = ['media', path.join('docs', 'images', 'extension')];
  const inDirs = dirs.flatMap((d) =>
    fs.existsSync(path.join(repoRoot, d))
      ? fs
          .readdirSync(path.join(repoRoot, d), { recursive: true, encoding: 'utf8' })
          .map((f) => path.join(d, f))
      : [],
  );
  const lazy = fs.existsSync(path.join(repoRoot, 'dist'))
    ? fs
        .readdirSync(path.join(repoRoot, 'dist'))
        .filter((f) => /^extension-.*\.js$/.test(f))
        .map((f) => path.join('dist', f))
    : [];
  return [...listed, ...inDirs, ...lazy];
}

function fresh(): boolean {
  if (!fs.existsSync(vsixPath)) return false;
  const built = fs.statSync(vsixPath).mtimeMs;
  return inputs().every((f) => {
    const full = path.join(repoRoot, f);
    return fs.existsSync(full) && fs.statSync(full).mtimeMs <= built;
  });
}

/** dist/queue-split.vsix as `npm run package` makes it from this checkout. */
export function packagedVsix(): string {
  if (fresh()) return vsixPath;
  const pack = spawnSync('npm', ['run', '--silent', 'package'], { cwd: repoRoot, encoding: 'utf8' });
  if (pack.status !== 0)
    throw new Error(`npm run package failed (exit ${pack.status}):\n${pack.stdout}\n${pack.stderr}`);
  return vsixPath;
}

function unzip(args: string[]): string {
  const result = spawnSync('unzip', args, { encoding: 'utf8', maxBuffer: 64 * 1024 * 1024 });
  if (result.error)
    throw new Error(
      `unzip could not run (test/env/install-system-deps.sh installs it): ${result.error.message}`,
    );
  if (result.status !== 0) throw new Error(`unzip ${args.join(' ')} failed: ${result.stderr}`);
  return result.stdout;
}

/** Every file in the .vsix, as its zip entry name (extension/…). */
export function vsixEntries(vsix: string): string[] {
  return unzip(['-Z1', vsix])
    .split('\n')
    .filter((e) => e !== '' && !e.endsWith('/'));
}

/** One entry's text. */
export function vsixText(vsix: string, entry: string): string {
  return unzip(['-p', vsix, entry]);
}
