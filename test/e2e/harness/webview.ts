// A webview panel's page as plain DOM. VS Code 1.100 shows each webview in an iframe
// (`iframe.webview`) whose own page holds the extension's HTML in a second iframe
// (`#active-frame`); Playwright sees both as frames of the page. The frame is looked up by what
// the extension's page contains, again on each call: VS Code replaces it when the panel's HTML is
// set anew or the panel is hidden and shown.
import type { Frame, Locator, Page } from 'playwright-core';

/** The frame of the webview page that has an element matching `selector`, if one is showing. */
export async function webviewFrame(page: Page, selector: string): Promise<Frame | undefined> {
  for (const frame of page.frames()) {
    if (frame === page.mainFrame() || frame.isDetached()) continue;
    const found = await frame
      .locator(selector)
      .count()
      .catch(() => 0);
    if (found > 0) return frame;
  }
  return undefined;
}

/** Waits for a webview page with an element matching `selector`; returns that element. */
export async function waitForWebview(page: Page, selector: string, timeoutMs = 30_000): Promise<Locator> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const frame = await webviewFrame(page, selector);
    if (frame !== undefined) return frame.locator(selector).first();
    if (Date.now() > deadline)
      throw new Error(
        `no webview shows ${selector} after ${timeoutMs / 1000}s; frames: ${page
          .frames()
          .map((f) => f.url())
          .join(', ')}`,
      );
    await page.waitForTimeout(250);
  }
}

/**
 * Polls the text of the webview element matching `selector` (whitespace collapsed, as a person
 * reads it) until `done` says yes; returns it. On timeout the error shows the last text.
 */
export async function waitForWebviewText(
  page: Page,
  selector: string,
  done: (text: string) => boolean,
  what: string,
  timeoutMs = 30_000,
): Promise<string> {
  const deadline = Date.now() + timeoutMs;
  let last = '';
  for (;;) {
    const frame = await webviewFrame(page, selector);
    if (frame !== undefined) {
      last = await frame
        .locator(selector)
        .first()
        .innerText({ timeout: 2_000 })
        .then((t) => t.replace(/\s+/g, ' ').trim())
        .catch(() => last);
      if (done(last)) return last;
    }
    if (Date.now() > deadline)
      throw new Error(`${what}: not within ${timeoutMs / 1000}s; the webview shows ${JSON.stringify(last)}`);
    await page.waitForTimeout(250);
  }
}

/** Clicks the button labelled `label` in the webview element matching `selector`. */
export async function clickWebviewButton(
  page: Page,
  selector: string,
  label: string | RegExp,
  timeoutMs = 10_000,
): Promise<void> {
  const root = await waitForWebview(page, selector, timeoutMs);
  await root.getByRole('button', { name: label }).first().click({ timeout: timeoutMs });
}
