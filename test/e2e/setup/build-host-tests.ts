// Compiles the extension-host tests into dist-test/e2e-host/: index.js plus one CommonJS bundle
// per test/e2e/host/*.test.ts (helpers beside them are bundled into the files that import them).
// `vscode` is provided by the extension host; `mocha` is required from the repo's node_modules
// so that index.js and the test files share one instance.
import * as fs from 'node:fs';
import * as path from 'node:path';
import { build } from 'esbuild';
import { hostTestsDir, repoRoot } from '../harness/paths';
import { ORDER_FILE } from '../host/markers';

export async function buildHostTests(): Promise<void> {
  const sourceDir = path.join(repoRoot, 'test', 'e2e', 'host');
  const entryPoints = fs
    .readdirSync(sourceDir)
    .filter((f) => f === 'index.ts' || f.endsWith('.test.ts'))
    .map((f) => path.join(sourceDir, f));
  fs.rmSync(hostTestsDir, { recursive: true, force: true });
  await build({
    entryPoints,
    outdir: hostTestsDir,
    bundle: true,
    platform: 'node',
    target: 'node20',
    format: 'cjs',
    sourcemap: 'inline',
    external: ['vscode', 'mocha'],
    logLevel: 'warning',
  });
  // The order in which workbenches claim the files (test/e2e/host/index.ts). A file that says
  // `// e2e-host: first` on a line of its own comes first, so it runs first in the workbench that
  // claims it; then the longest source first, a stand-in for the longest run (they start real
  // splits), so that the workbenches end close together.
  const order = entryPoints
    .filter((f) => f.endsWith('.test.ts'))
    .map((f) => ({
      file: path.basename(f).replace(/\.ts$/, '.js'),
      first: /^\/\/ e2e-host: first\b/m.test(fs.readFileSync(f, 'utf8')),
      size: fs.statSync(f).size,
    }))
    .sort((a, b) => Number(b.first) - Number(a.first) || b.size - a.size || a.file.localeCompare(b.file))
    .map((f) => f.file);
  fs.writeFileSync(path.join(hostTestsDir, ORDER_FILE), `${JSON.stringify(order, null, 2)}\n`);
}

if (require.main === module) {
  buildHostTests().catch((err: unknown) => {
    console.error(err);
    process.exit(1);
  });
}
