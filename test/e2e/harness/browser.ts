// Launches Debian's headless Chromium through playwright-core with a fresh profile. Playwright
// never downloads a browser here: it drives /usr/bin/chromium only.
import { chromium, type BrowserContext, type Page } from 'playwright-core';
import { removeTempDir, tempDir } from './exitCleanup';
import { chromiumBin } from './paths';

export interface Browser {
  context: BrowserContext;
  page: Page;
  close(): Promise<void>;
}

// The flags verified on these machines (VSCODE-TESTING.md). --user-data-dir is not among them:
// Playwright takes the profile folder as launchPersistentContext's first argument instead.
const chromiumArgs = [
  '--headless',
  '--no-sandbox',
  '--disable-gpu',
  '--disable-quic',
  '--no-first-run',
  '--disable-background-networking',
  '--disable-component-update',
  '--disable-sync',
];

export async function launchBrowser(): Promise<Browser> {
  const profile = tempDir('qs-chromium-');
  let context: BrowserContext;
  try {
    context = await chromium.launchPersistentContext(profile, {
      executablePath: chromiumBin,
      headless: true,
      args: chromiumArgs,
      viewport: { width: 1400, height: 900 },
      // "Copy … Command" buttons write the clipboard, and tests read it back.
      permissions: ['clipboard-read', 'clipboard-write'],
      timeout: 60_000,
    });
  } catch (err) {
    removeTempDir(profile);
    throw new Error(`Chromium (${chromiumBin}) did not start: ${(err as Error).message}`);
  }
  const page = context.pages()[0] ?? (await context.newPage());
  return {
    context,
    page,
    close: async () => {
      await context.close().catch(() => undefined);
      removeTempDir(profile);
    },
  };
}
