// `npm run test:e2e`: the extension in a real VS Code (code-server 4.100.3 + headless Chromium).
//   1. packages the extension once (npm run package: the build, then dist/queue-split.vsix) and
//      builds the extension-host tests (dist-test/e2e-host);
//   2. ensures code-server and Chromium (test/e2e/setup/install-code-server.sh; cached), and
//      installs the .vsix with `code-server --install-extension` into the template every
//      workbench's extensions folder is copied from (harness/installedExtension.ts);
//   3. runs the extension-host tests (mocha, real `vscode` API) in workbenches side by side
//      (QS_E2E_HOST_SHARDS, default 2; each runs the files it claims first, host/index.ts);
//   4. runs the UI tests (test/e2e/ui/*.test.ts, node:test, one at a time). Not beside the
//      host tests: tried, three workbenches on 2 cores took 566 s instead of 625 and timed out
//      in both (the browsers are CPU, not waiting).
// While iterating: QS_E2E_HOST=word,... runs only the host test files whose names contain a word
// (see host/index.ts); QS_E2E_UI=word,... only those UI test files, QS_E2E_UI=none none of them.
// Exits non-zero if anything failed and says what. Prints `ℹ pass N` / `ℹ fail N` for the
// host tests as node:test does for the UI tests, so test/run-all.sh's closing line counts both.
// Screenshots and logs: test-results/e2e/<test>/.
import { spawnSync } from 'node:child_process';
import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import { runHostTests } from './harness/hostTests';
import { installedExtensionsTemplate } from './harness/installedExtension';
import { installScript, repoRoot, requireTools } from './harness/paths';
import { buildHostTests } from './setup/build-host-tests';
import { ensureController } from './support/cluster';

interface Outcome {
  phase: string;
  ok: boolean;
  seconds: number;
  detail: string;
}

const outcomes: Outcome[] = [];

async function phase(name: string, body: () => Promise<string>): Promise<boolean> {
  console.log(`\n=== e2e: ${name}`);
  const started = Date.now();
  let ok = true;
  let detail: string;
  try {
    detail = await body();
  } catch (err) {
    ok = false;
    detail = err instanceof Error ? err.message : String(err);
    console.error(`\n${name} FAILED: ${detail}`);
  }
  outcomes.push({ phase: name, ok, seconds: (Date.now() - started) / 1000, detail });
  return ok;
}

function sh(command: string, args: string[]): void {
  const result = spawnSync(command, args, { cwd: repoRoot, stdio: 'inherit' });
  if (result.status !== 0) {
    throw new Error(`\`${command} ${args.join(' ')}\` exited with ${result.status ?? result.signal}`);
  }
}

async function main(): Promise<number> {
  const started = Date.now();
  const prepared =
    (await phase('build', async () => {
      // vsce runs vscode:prepublish (npm run build) first: one build, one package per e2e run.
      // `npm test` built and packaged this checkout minutes before (QS_E2E_PACKAGED=1): not again.
      if (
        process.env.QS_E2E_PACKAGED !== '1' ||
        !fs.existsSync(path.join(repoRoot, 'dist', 'queue-split.vsix'))
      )
        sh('npm', ['run', '--silent', 'package']);
      await buildHostTests();
      return 'dist/queue-split.vsix and dist-test/e2e-host/';
    })) &&
    (await phase('code-server + chromium', async () => {
      sh('bash', [installScript]);
      requireTools();
      const template = installedExtensionsTemplate();
      return `ready; dist/queue-split.vsix installed in ${path.relative(repoRoot, template)}/`;
    })) &&
    // The real-cluster tests need the controller; the extension host cannot install it itself.
    (await phase('controller on the test cluster', async () => {
      await ensureController();
      return 'installed (idempotent)';
    }));

  if (prepared) {
    await phase('extension-host tests', async () => {
      // Workbenches side by side, each running the files it claims first (host/index.ts): their
      // tests wait on real splits far more than they compute, and each uses its own namespace.
      const shards = Number(process.env.QS_E2E_HOST_SHARDS ?? 2);
      const claims = fs.mkdtempSync(path.join(os.tmpdir(), 'qs-e2e-claims-'));
      try {
        const results = await Promise.all(
          Array.from({ length: shards }, (_, i) =>
            runHostTests({
              name: `extension-host-${i + 1}`,
              env: { QS_E2E_CLAIMS: claims },
              echo: (line) => console.log(`[host ${i + 1}] ${line}`),
              // Real splits (activation + drain) run among them: allow for them.
              timeoutMs: 12 * 60_000,
            }),
          ),
        );
        const passes = results.reduce((n, r) => n + r.passes, 0);
        const failures = results.reduce((n, r) => n + r.failures, 0);
        console.log(`ℹ pass ${passes}\nℹ fail ${failures}`);
        const where = results.map((r) => `${path.relative(repoRoot, r.resultsDir)}/`).join(', ');
        const codes = results.map((r) => r.code);
        if (codes.some((c) => c !== 0) || failures > 0) {
          throw new Error(`${failures} failed, workbench exit codes ${codes.join(', ')}; logs in ${where}`);
        }
        return `${passes} passed in ${shards} workbenches; logs in ${where}`;
      } finally {
        fs.rmSync(claims, { recursive: true, force: true });
      }
    });
    const ui = (process.env.QS_E2E_UI ?? '').split(',').filter(Boolean);
    if (!ui.includes('none'))
      await phase('UI tests', async () => {
        if (ui.length === 0) sh('bash', ['test/suite.sh', 'e2e/ui', '--test-concurrency=1']);
        else {
          const files = fs
            .readdirSync(path.join(repoRoot, 'test', 'e2e', 'ui'))
            .filter((f) => f.endsWith('.test.ts') && ui.some((word) => f.includes(word)))
            .map((f) => path.join('test', 'e2e', 'ui', f));
          if (files.length === 0) throw new Error(`no UI test file matches QS_E2E_UI=${ui.join(',')}`);
          sh('node', [
            '--import',
            'tsx',
            '--test',
            '--test-force-exit',
            '--test-concurrency=1',
            '--test-reporter=spec',
            ...files,
          ]);
        }
        return 'screenshots in test-results/e2e/';
      });
  }

  console.log('\n=== e2e summary');
  for (const o of outcomes) {
    console.log(
      `${o.ok ? 'ok  ' : 'FAIL'} ${o.phase.padEnd(24)} ${o.seconds.toFixed(1).padStart(6)}s  ${o.detail}`,
    );
  }
  const failed = outcomes.filter((o) => !o.ok);
  if (!prepared) console.log('(tests did not run: the preparation above failed)');
  console.log(
    failed.length === 0
      ? `e2e passed in ${((Date.now() - started) / 1000).toFixed(1)}s`
      : `e2e FAILED: ${failed.map((o) => o.phase).join(', ')}`,
  );
  return failed.length === 0 && prepared ? 0 : 1;
}

main().then(
  (code) => process.exit(code),
  (err: unknown) => {
    console.error(err);
    process.exit(1);
  },
);
