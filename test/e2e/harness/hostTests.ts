// Runs the compiled extension-host tests (dist-test/e2e-host) inside a real VS Code: the
// workbench is opened with `extensionTestsPath` in its payload, the extension host runs
// index.js's run(), and the workbench reports the outcome through codeAutomationExit.
import * as fs from 'node:fs';
import * as path from 'node:path';
import { resultMarker, screenshotMarker, startMarker } from '../host/markers';
import { hostTestsDir } from './paths';
import { withWorkbench, type Session } from './session';

export interface HostTestResult {
  /** The workbench's exit code: 0 when run() resolved. */
  code: number;
  passes: number;
  failures: number;
  resultsDir: string;
}

export interface HostTestOptions {
  /** Names the results folder, test-results/e2e/<name>/. */
  name?: string;
  /** Environment of the workbench's server, so of its extension host (QS_E2E_CLAIMS, …). */
  env?: Record<string, string>;
  echo?: (line: string) => void;
  timeoutMs?: number;
}

export async function runHostTests({
  name = 'extension-host',
  env,
  echo = (line) => console.log(line),
  timeoutMs = 5 * 60_000,
}: HostTestOptions = {}): Promise<HostTestResult> {
  if (!fs.existsSync(path.join(hostTestsDir, 'index.js'))) {
    throw new Error(
      `${hostTestsDir}/index.js is missing: build it with \`npx tsx test/e2e/setup/build-host-tests.ts\``,
    );
  }
  let started = false;
  let current: Session | undefined;
  const echoTestOutput = (line: string) => {
    const shot = line.indexOf(screenshotMarker);
    if (shot >= 0) {
      void screenshotFor(current, line.slice(shot + screenshotMarker.length));
      return;
    }
    if (started && !line.includes(resultMarker)) echo(line.replace(/^\[info\] /, ''));
    started ||= line.includes(startMarker);
  };
  const options = {
    extensionTestsPath: hostTestsDir,
    echo: echoTestOutput,
    // Debug launches ask before a split restarts the workload's pods, in a modal the extension
    // host cannot answer: the UI tests answer it (ui/namespaces.test.ts, ui/split-lifecycle.test.ts).
    settings: { 'queueSplit.confirmWorkloadRestart': false },
    ...(env ? { env } : {}),
  };
  return withWorkbench(name, options, async (session) => {
    current = session;
    let timer: NodeJS.Timeout | undefined;
    const timeout = new Promise<never>((_, reject) => {
      timer = setTimeout(
        () => reject(new Error(`the extension-host tests did not finish within ${timeoutMs / 1000}s`)),
        timeoutMs,
      );
    });
    try {
      const code = await Promise.race([session.hooks.exit, timeout]);
      await session.steps.shot('finished');
      const counts = readCounts(session.hooks.lines);
      return { code, ...counts, resultsDir: session.resultsDir };
    } finally {
      clearTimeout(timer);
    }
  });
}

/** A screenshot a host test asked for (host/markers.ts screenshotMarker); `done` says it is taken. */
async function screenshotFor(session: Session | undefined, request: string): Promise<void> {
  let done: string | undefined;
  try {
    const parsed = JSON.parse(request) as { name: string; done: string };
    done = parsed.done;
    if (session === undefined) throw new Error('the workbench is not open yet');
    const file = await session.steps.shot(parsed.name);
    fs.copyFileSync(file, `${done}.part`);
    fs.renameSync(`${done}.part`, done);
  } catch (err) {
    if (done !== undefined)
      fs.writeFileSync(`${done}.failed`, err instanceof Error ? err.message : String(err));
  }
}

function readCounts(lines: string[]): { passes: number; failures: number } {
  for (const line of [...lines].reverse()) {
    const at = line.indexOf(resultMarker);
    if (at >= 0) {
      const parsed = JSON.parse(line.slice(at + resultMarker.length)) as { passes: number; failures: number };
      return { passes: parsed.passes, failures: parsed.failures };
    }
  }
  // run() threw before mocha reported (e.g. a test file failed to load): one failure, not zero.
  return { passes: 0, failures: 1 };
}
