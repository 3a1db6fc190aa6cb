// Entry point VS Code loads as `extensionTestsPath`: runs the compiled `*.test.js` beside it with
// mocha, inside the extension host, where `require('vscode')` is the real API. Resolves when all
// pass; rejects otherwise, which makes the workbench report exit code 1.
// Several workbenches can share the files (test/e2e/run.ts): with QS_E2E_CLAIMS naming a folder,
// each file runs in the workbench that claims it first (an atomic mkdir there), in the order
// order.json gives, so the real splits they start run side by side in separate VS Codes.
// Bundled by test/e2e/setup/build-host-tests.ts; mocha stays a plain require of the repo's copy
// so that this file and the test files share one mocha (its describe/it bind to the running one).
import * as fs from 'node:fs';
import * as path from 'node:path';
import Mocha from 'mocha';
import { ORDER_FILE, resultMarker, startMarker } from './markers';

export async function run(): Promise<void> {
  console.log(startMarker);
  let passes = 0;
  let failures = 0;
  for (const file of claimed(selectedFiles(), process.env.QS_E2E_CLAIMS)) {
    // One mocha per file: a workbench learns which files are its own only as it claims them.
    const mocha = new Mocha({ ui: 'bdd', reporter: 'spec', color: false, timeout: 60_000 });
    mocha.addFile(path.join(__dirname, file));
    const stats = await new Promise<Mocha.Stats>((resolve) => {
      const runner = mocha.run(() => resolve(runner.stats ?? ({ passes: 0, failures: 1 } as Mocha.Stats)));
    });
    mocha.dispose();
    passes += stats.passes;
    failures += stats.failures;
  }
  console.log(`${resultMarker} ${JSON.stringify({ passes, failures })}`);
  if (failures > 0) throw new Error(`${failures} extension-host test(s) failed`);
}

/** The compiled test files in claim order; QS_E2E_HOST=kafka,install keeps only the files whose
 * names contain one of those words (while iterating; npm test sets nothing and runs all). */
function selectedFiles(): string[] {
  const only = (process.env.QS_E2E_HOST ?? '').split(',').filter(Boolean);
  const present = fs.readdirSync(__dirname).filter((f) => f.endsWith('.test.js'));
  const ordered = JSON.parse(fs.readFileSync(path.join(__dirname, ORDER_FILE), 'utf8')) as string[];
  const files = [
    ...ordered.filter((f) => present.includes(f)),
    ...present.filter((f) => !ordered.includes(f)),
  ];
  const selected = files.filter((f) => only.length === 0 || only.some((word) => f.includes(word)));
  if (selected.length === 0)
    throw new Error(
      `no *.test.js files in ${__dirname}${only.length > 0 ? ` match QS_E2E_HOST=${only.join(',')}` : ''}: nothing would run`,
    );
  return selected;
}

/** Each file this workbench claims first; every file when it runs alone (`claims` unset). */
function* claimed(files: readonly string[], claims: string | undefined): Generator<string> {
  for (const file of files) {
    if (claims === undefined) {
      yield file;
      continue;
    }
    try {
      fs.mkdirSync(path.join(claims, file));
    } catch (err) {
      if ((err as NodeJS.ErrnoException).code === 'EEXIST') continue; // another workbench has it
      throw err;
    }
    yield file;
  }
}
