// Entry point VS Code loads as `extensionTestsPath`: runs every compiled `*.test.js` beside it
// with mocha, inside the extension host, where `require('vscode')` is the real API. Resolves
// when all pass; rejects otherwise, which makes the workbench report exit code 1.
// Bundled by test/e2e/setup/build-host-tests.ts; mocha stays a plain require of the repo's copy
// so that this file and the test files share one mocha (its describe/it bind to the running one).
import * as fs from 'node:fs';
import * as path from 'node:path';
import Mocha from 'mocha';
import { resultMarker, startMarker } from './markers';

export async function run(): Promise<void> {
  console.log(startMarker);
  const mocha = new Mocha({ ui: 'bdd', reporter: 'spec', color: false, timeout: 60_000 });
  // QS_E2E_HOST=kafka,install runs only the files whose names contain one of those words
  // (while iterating; npm test sets nothing and runs all). code-server passes its env on.
  const only = (process.env.QS_E2E_HOST ?? '').split(',').filter(Boolean);
  const files = fs
    .readdirSync(__dirname)
    .filter((f) => f.endsWith('.test.js'))
    .filter((f) => only.length === 0 || only.some((word) => f.includes(word)))
    .sort();
  if (files.length === 0)
    throw new Error(
      `no *.test.js files in ${__dirname}${only.length > 0 ? ` match QS_E2E_HOST=${only.join(',')}` : ''}: nothing would run`,
    );
  for (const file of files) mocha.addFile(path.join(__dirname, file));
  const stats = await new Promise<Mocha.Stats>((resolve) => {
    const runner = mocha.run(() => resolve(runner.stats ?? ({ passes: 0, failures: 1 } as Mocha.Stats)));
  });
  console.log(`${resultMarker} ${JSON.stringify({ passes: stats.passes, failures: stats.failures })}`);
  if (stats.failures > 0) throw new Error(`${stats.failures} extension-host test(s) failed`);
}
