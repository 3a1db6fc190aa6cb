// Opens bench-results/index.html in headless Chromium (Debian's /usr/bin/chromium, driven by
// playwright-core as the e2e suite does) and saves a full-page screenshot: a check that the
// report renders in a browser, and the picture in README's bench section.
//
//   npx tsx test/bench/report/screenshot.ts [out.png]
import * as path from 'node:path';
import { pathToFileURL } from 'node:url';
import { chromium } from 'playwright-core';
import { RESULTS_DIR } from '../support/benchRun';

async function main(): Promise<void> {
  const out = path.resolve(process.argv[2] ?? path.join(RESULTS_DIR, 'index.png'));
  const browser = await chromium.launch({
    executablePath: process.env.QS_CHROMIUM ?? '/usr/bin/chromium',
    // No network at view time, and none wanted: the machine's closed network refuses Chromium's own.
    args: [
      '--no-sandbox',
      '--disable-gpu',
      '--disable-background-networking',
      '--disable-component-update',
      '--disable-sync',
    ],
  });
  try {
    const page = await browser.newPage({ viewport: { width: 1040, height: 800 } });
    const requests: string[] = [];
    page.on('request', (r) => requests.push(r.url()));
    await page.goto(pathToFileURL(path.join(RESULTS_DIR, 'index.html')).href);
    const charts = await page.locator('svg.chart').count();
    if (charts === 0) throw new Error('the report rendered no chart');
    const external = requests.filter((u) => !u.startsWith('file:'));
    if (external.length > 0) throw new Error(`the report fetched ${external.join(', ')}`);
    await page.screenshot({ path: out, fullPage: true });
    console.log(`${out}: ${charts} charts, no network requests`);
  } finally {
    await browser.close();
  }
}

main().catch((err: unknown) => {
  console.error(err);
  process.exit(1);
});
