// Compiles the extension-host tests into dist-test/e2e-host/: index.js plus one CommonJS bundle
// per test/e2e/host/*.test.ts (helpers beside them are bundled into the files that import them).
// `vscode` is provided by the extension host; `mocha` is required from the repo's node_modules
// so that index.js and the test files share one instance.
import * as fs from 'node:fs';
import * as path from 'node:path';
import { build } from 'esbuild';
import { hostTestsDir, repoRoot } from '../harness/paths';

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
}

if (require.main === module) {
  buildHostTests().catch((err: unknown) => {
    console.error(err);
    process.exit(1);
  });
}
