// The two hooks VS Code's browser workbench calls when it runs under automation:
// `codeAutomationLog(type, ...args)` for console output (extension-host test output included)
// and `codeAutomationExit(code, logs)` when extension-host tests finish. They must be exposed
// before the first navigation, or the workbench never sees them.
import * as fs from 'node:fs';
import * as path from 'node:path';
import { format } from 'node:util';
import type { Page } from 'playwright-core';

export interface AutomationHooks {
  /** Resolves with the exit code the workbench reports (0 = extension-host tests passed). */
  exit: Promise<number>;
  /** Everything logged through the hooks and the page console, in order. */
  lines: string[];
}

interface WorkbenchLog {
  relativePath: string;
  contents: string;
}

export async function exposeAutomationHooks(
  page: Page,
  resultsDir: string,
  echo: (line: string) => void = () => undefined,
): Promise<AutomationHooks> {
  const lines: string[] = [];
  const logFile = path.join(resultsDir, 'workbench-console.log');
  const record = (line: string) => {
    lines.push(line);
    fs.appendFileSync(logFile, `${line}\n`);
    echo(line);
  };
  let resolveExit: (code: number) => void = () => undefined;
  const exit = new Promise<number>((resolve) => (resolveExit = resolve));

  // The workbench passes printf-style arguments; some versions pass them as one array.
  await page.exposeFunction('codeAutomationLog', (type: string, ...args: unknown[]) => {
    const flat = args.length === 1 && Array.isArray(args[0]) ? (args[0] as unknown[]) : args;
    record(`[${type}] ${format(...flat)}`);
  });
  await page.exposeFunction('codeAutomationExit', (code: number, logs?: WorkbenchLog[]) => {
    // The workbench hands over its log files (window, exthost, ...): keep them with the results.
    for (const log of logs ?? []) {
      const file = path.join(resultsDir, 'vscode-logs', log.relativePath);
      if (!file.startsWith(path.join(resultsDir, 'vscode-logs'))) continue;
      fs.mkdirSync(path.dirname(file), { recursive: true });
      fs.writeFileSync(file, log.contents);
    }
    record(`[exit] code ${code}`);
    resolveExit(code);
  });
  page.on('console', (msg) => fs.appendFileSync(logFile, `[console.${msg.type()}] ${msg.text()}\n`));
  page.on('pageerror', (err) => fs.appendFileSync(logFile, `[pageerror] ${err.message}\n`));
  return { exit, lines };
}
