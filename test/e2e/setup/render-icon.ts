// Renders media/queue-split.png (the extension's 128x128 marketplace icon, package.json "icon")
// from media/queue-split.svg with the headless Chromium the e2e suites use. The SVG draws with
// currentColor (it is also the activity-bar icon, which VS Code tints), so the PNG puts it in
// white on a rounded tile. Run after changing the SVG, and commit the PNG:
//   npx tsx test/e2e/setup/render-icon.ts
import * as fs from 'node:fs';
import * as path from 'node:path';
import { chromium } from 'playwright-core';
import { chromiumBin, repoRoot } from '../harness/paths';

async function main(): Promise<void> {
  const svg = fs.readFileSync(path.join(repoRoot, 'media', 'queue-split.svg'), 'utf8');
  const out = path.join(repoRoot, 'media', 'queue-split.png');
  const browser = await chromium.launch({
    executablePath: chromiumBin,
    headless: true,
    args: ['--no-sandbox', '--disable-gpu', '--no-first-run'],
  });
  try {
    const page = await browser.newPage({ viewport: { width: 128, height: 128 }, deviceScaleFactor: 1 });
    await page.setContent(
      `<!doctype html><html><body style="margin:0;background:transparent">
        <div id="tile" style="width:128px;height:128px;border-radius:24px;display:flex;align-items:center;justify-content:center;
          background:linear-gradient(135deg,#2b6cb0,#1a365d);color:#fff">
          <div style="width:100px;height:100px">${svg.replace('<svg ', '<svg style="width:100%;height:100%" ')}</div>
        </div></body></html>`,
    );
    await page.locator('#tile').screenshot({ path: out, omitBackground: true });
  } finally {
    await browser.close();
  }
  console.log(`wrote ${path.relative(process.cwd(), out)} (${fs.statSync(out).size} bytes)`);
}

main().catch((err: unknown) => {
  console.error(err);
  process.exit(1);
});
