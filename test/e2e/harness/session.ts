// One real VS Code for one test: a private code-server with dist/queue-split.vsix installed, a
// fresh headless Chromium, the automation hooks, and the workbench opened on a throwaway folder.
// Everything is stopped on the way out, pass or fail.
import * as fs from 'node:fs';
import * as path from 'node:path';
import type { Page } from 'playwright-core';
import { exposeAutomationHooks, type AutomationHooks } from './automation';
import { launchBrowser } from './browser';
import { removeTempDir, tempDir } from './exitCleanup';
import { startCodeServer, type CodeServer } from './codeServer';
import { writeHostRunner } from './installedExtension';
import { requireTools, resultsDirFor } from './paths';
import { Steps } from './steps';
import { workbenchUrl } from './workbenchUrl';

export interface Session {
  page: Page;
  server: CodeServer;
  hooks: AutomationHooks;
  /** The folder open in the workbench. */
  workspace: string;
  /** test-results/e2e/<test>/ */
  resultsDir: string;
  steps: Steps;
}

export interface SessionOptions {
  /** Compiled extension-host tests to run inside the extension host (see hostTests.ts). */
  extensionTestsPath?: string;
  /** Files (relative path → contents) to create in the workspace before opening it. */
  workspaceFiles?: Record<string, string>;
  /** User settings for this test, over the harness's quiet defaults. */
  settings?: Record<string, unknown>;
  /** Environment of the server, so of every extension host it starts (e.g. KUBECONFIG). */
  env?: Record<string, string>;
  /** Receives each automation log line as it arrives (e.g. to stream host-test output). */
  echo?: (line: string) => void;
  /** Extension folders to install in the server before it starts (e.g. a stand-in for another
   * extension): the workbench loads only one unpacked extension, this checkout. */
  installExtensions?: string[];
  /** How long the workbench may take to appear. */
  loadTimeoutMs?: number;
  /** VS Code's Workspace Trust on: the folder opens untrusted, in Restricted Mode (codeServer.ts). */
  workspaceTrust?: boolean;
  /** VS Code's display language and the test-only translations it needs (codeServer.ts). */
  locale?: string;
  installedExtensionFiles?: Record<string, string>;
}

export async function withWorkbench<T>(
  testName: string,
  options: SessionOptions,
  body: (session: Session) => Promise<T>,
): Promise<T> {
  requireTools();
  const resultsDir = resultsDirFor(testName);
  const workspace = tempDir('qs-e2e-workspace-');
  for (const [file, contents] of Object.entries(options.workspaceFiles ?? {})) {
    fs.mkdirSync(path.dirname(path.join(workspace, file)), { recursive: true });
    fs.writeFileSync(path.join(workspace, file), contents);
  }
  const cleanups: (() => Promise<void>)[] = [async () => removeTempDir(workspace)];
  let steps: Steps | undefined;
  try {
    const server = await startCodeServer({
      workspace,
      logFile: path.join(resultsDir, 'code-server.log'),
      keepLogsIn: path.join(resultsDir, 'server-logs'),
      ...(options.settings ? { settings: options.settings } : {}),
      ...(options.env ? { env: options.env } : {}),
      ...(options.installExtensions ? { installExtensions: options.installExtensions } : {}),
      ...(options.workspaceTrust ? { workspaceTrust: true } : {}),
      ...(options.locale !== undefined ? { locale: options.locale } : {}),
      ...(options.installedExtensionFiles
        ? { installedExtensionFiles: options.installedExtensionFiles }
        : {}),
    });
    cleanups.push(server.stop);
    const browser = await launchBrowser();
    cleanups.push(browser.close);
    const { page } = browser;
    steps = new Steps(page, resultsDir);
    const hooks = await exposeAutomationHooks(page, resultsDir, options.echo);
    // Host tests run only beside a development extension: a stub (installedExtension.ts).
    const url = workbenchUrl(server.url, {
      folder: workspace,
      ...(options.extensionTestsPath
        ? { extensionDevelopmentPath: writeHostRunner(), extensionTestsPath: options.extensionTestsPath }
        : {}),
    });
    await page.goto(url, { waitUntil: 'domcontentloaded' });
    await page.locator('.monaco-workbench').waitFor({ timeout: options.loadTimeoutMs ?? 60_000 });
    return await body({ page, server, hooks, workspace, resultsDir, steps });
  } catch (err) {
    await steps?.failure();
    throw err;
  } finally {
    for (const cleanup of cleanups.reverse()) await cleanup().catch(() => undefined);
  }
}
