// What a user does and sees in the workbench, as plain DOM: the command palette, notifications,
// tree rows in a view, the Output panel. Selectors are VS Code 1.100's; when an upgrade moves
// one, it breaks here and nowhere else.
import type { Locator, Page } from 'playwright-core';

const paletteRows = (page: Page) => page.locator('.quick-input-widget .quick-input-list .monaco-list-row');

/** Opens the command palette with F1 and waits for its input. */
export async function openCommandPalette(page: Page): Promise<Locator> {
  await page.keyboard.press('F1');
  const input = page.locator('.quick-input-widget .quick-input-box input');
  await input.waitFor({ state: 'visible', timeout: 10_000 });
  return input;
}

/**
 * Runs a command by its palette title ("Queue Split: Show Logs"): F1, type, Enter on the row
 * whose label is that title. A command contributed by an extension appears only once the
 * workbench has scanned the extension, so the palette is reopened until the row is there.
 */
export async function runCommand(page: Page, title: string, timeoutMs = 30_000): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  const match = paletteRows(page).and(page.locator(`[aria-label^="${cssString(title)}"]`));
  for (;;) {
    const input = await openCommandPalette(page);
    await input.fill(`>${title}`);
    const wait = Math.min(3_000, Math.max(deadline - Date.now(), 1));
    const found = await match
      .first()
      .waitFor({ state: 'visible', timeout: wait })
      .then(
        () => true,
        () => false,
      );
    if (found) {
      const focused = await paletteRows(page)
        .and(page.locator('.focused'))
        .first()
        .getAttribute('aria-label', { timeout: 2_000 })
        .catch(() => null);
      // Enter when the palette already highlights the command; otherwise pick its row.
      if (focused?.startsWith(title)) await page.keyboard.press('Enter');
      else await match.first().click();
      // The palette closes; a command may open its own quick input at once (same widget, no '>').
      await page.waitForFunction(
        `(() => {
          const widget = document.querySelector('.quick-input-widget');
          const input = widget && widget.querySelector('.quick-input-box input');
          return !widget || widget.style.display === 'none' || !(input && input.value.startsWith('>'));
        })()`,
        undefined,
        { timeout: 10_000 },
      );
      return;
    }
    const offered = await paletteRows(page).evaluateAll((rows) =>
      rows.map((r) => r.getAttribute('aria-label')),
    );
    await page.keyboard.press('Escape');
    if (Date.now() > deadline) {
      throw new Error(
        `command "${title}" is not in the command palette after ${timeoutMs / 1000}s; it offered ${JSON.stringify(offered)}`,
      );
    }
    await page.waitForTimeout(500);
  }
}

/** Waits for a notification toast (or one in the notification center) containing `text`. */
export async function waitForNotification(
  page: Page,
  text: string | RegExp,
  timeoutMs = 30_000,
): Promise<Locator> {
  const toast = page.locator(
    '.notifications-toasts .notification-toast, .notifications-center .notification-list-item',
  );
  const match = toast.filter({ hasText: text }).first();
  await match.waitFor({ state: 'visible', timeout: timeoutMs });
  return match;
}

/**
 * Waits for a row containing `text` in the tree of the view titled `viewTitle` (the pane
 * header's text, e.g. "Queue Splits"). The view's container must be open.
 */
export async function waitForTreeRow(
  page: Page,
  viewTitle: string | RegExp,
  text: string | RegExp,
  timeoutMs = 30_000,
): Promise<Locator> {
  const pane = page.locator('.pane').filter({ has: page.locator('.pane-header', { hasText: viewTitle }) });
  const row = pane.locator('.monaco-list-row').filter({ hasText: text }).first();
  await row.waitFor({ state: 'visible', timeout: timeoutMs });
  return row;
}

/**
 * Shows a view container (e.g. "Explorer", "Queue Split") by its activity-bar entry, whose hover
 * text starts with `title`. Clicking an entry that is already showing would hide it, so an
 * active one is left alone.
 */
export async function openViewContainer(page: Page, title: string, timeoutMs = 30_000): Promise<void> {
  const label = page.locator(`.action-label[aria-label^="${cssString(title)}"]`);
  const item = page.locator('.activitybar .action-item').filter({ has: label }).first();
  await item.waitFor({ state: 'visible', timeout: timeoutMs });
  const shown = page.locator('.activitybar .action-item.checked').filter({ has: label });
  // Right after a reload the workbench may still be restoring the sidebar, and a click then
  // toggles it shut: click, give it a moment, and click again until it shows.
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    if (!(await item.evaluate((el) => el.classList.contains('checked')))) await item.click();
    try {
      await shown.waitFor({ state: 'visible', timeout: 3_000 });
      return;
    } catch (err) {
      if (Date.now() > deadline) throw err;
    }
  }
}

/**
 * Waits for the Output panel to show `channel` (its channel picker and its editor both say so)
 * with a line containing `text`, and returns the output editor.
 */
export async function waitForOutput(
  page: Page,
  channel: string,
  text: string | RegExp,
  timeoutMs = 30_000,
): Promise<Locator> {
  const panel = page.locator('.part.panel');
  const editor = panel.locator(`.output-view[aria-label="${cssString(channel)} - Output"]`).first();
  await editor.waitFor({ state: 'visible', timeout: timeoutMs });
  const picked = await panel
    .locator('select.monaco-select-box')
    .first()
    // Runs in the page; the repo's tsconfig has no DOM lib, hence the structural type.
    .evaluate((select) => (select as unknown as SelectElement).selectedOptions[0]?.text);
  if (picked !== channel)
    throw new Error(`the Output panel's channel picker shows "${picked}", not "${channel}"`);
  // Monaco renders spaces as U+00A0 and only the lines in view: poll the normalised text.
  const deadline = Date.now() + timeoutMs;
  let lines: string[] = [];
  for (;;) {
    lines = await editor
      .locator('.view-line')
      .evaluateAll((els) => els.map((el) => (el.textContent ?? '').replace(/\u00a0/g, ' ')));
    if (lines.some((line) => (typeof text === 'string' ? line.includes(text) : text.test(line)))) break;
    if (Date.now() > deadline) {
      throw new Error(
        `the "${channel}" output shows no line matching ${String(text)}; it shows ${JSON.stringify(lines)}`,
      );
    }
    await page.waitForTimeout(200);
  }
  return editor;
}

interface SelectElement {
  selectedOptions: ArrayLike<{ text: string }>;
}

/** Escapes a value for use inside a double-quoted CSS attribute selector. */
function cssString(value: string): string {
  return value.replace(/["\\]/g, '\\$&');
}
