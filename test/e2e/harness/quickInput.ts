// Quick picks, input boxes and modal dialogs an extension opens, as plain DOM (VS Code 1.100's
// selectors; see workbench.ts for the command palette itself).
import type { Locator, Page } from 'playwright-core';

const widget = (page: Page) => page.locator('.quick-input-widget');

/**
 * Waits for a quick pick / input box whose title contains `title` and returns its input. The
 * previous one may still be closing, so the title is what tells them apart.
 */
export async function waitForQuickInput(
  page: Page,
  title: string | RegExp,
  timeoutMs = 30_000,
): Promise<Locator> {
  const titled = widget(page).filter({ has: page.locator('.quick-input-title', { hasText: title }) });
  await titled.waitFor({ state: 'visible', timeout: timeoutMs });
  const input = titled.locator('.quick-input-box input');
  await input.waitFor({ state: 'visible', timeout: timeoutMs });
  return input;
}

/** The rows a quick pick currently offers (their aria labels). */
export async function quickPickRows(page: Page): Promise<string[]> {
  return widget(page)
    .locator('.quick-input-list .monaco-list-row')
    .evaluateAll((rows) => rows.map((r) => r.getAttribute('aria-label') ?? ''));
}

/** Accepts the quick input titled `title` as it stands (the proposed value / the highlighted row). */
export async function acceptQuickInput(
  page: Page,
  title: string | RegExp,
  timeoutMs = 30_000,
): Promise<string> {
  const input = await waitForQuickInput(page, title, timeoutMs);
  const value = await input.inputValue();
  await input.press('Enter');
  return value;
}

/** Replaces the text of the input box titled `title` and accepts it. */
export async function fillQuickInput(
  page: Page,
  title: string | RegExp,
  text: string,
  timeoutMs = 30_000,
): Promise<void> {
  const input = await waitForQuickInput(page, title, timeoutMs);
  await input.fill(text);
  await input.press('Enter');
}

/** Waits until the open quick input's message (an input box's validation message, else its
 * prompt) contains `text`; returns the whole message. */
export async function waitForQuickInputMessage(
  page: Page,
  text: string | RegExp,
  timeoutMs = 30_000,
): Promise<string> {
  const message = widget(page).locator('.quick-input-message').filter({ hasText: text }).first();
  await message.waitFor({ state: 'visible', timeout: timeoutMs });
  return (await message.textContent()) ?? '';
}

/** Clicks the button of the open quick input whose tooltip matches `tooltip`. */
export async function clickQuickInputButton(
  page: Page,
  tooltip: string | RegExp,
  timeoutMs = 10_000,
): Promise<void> {
  const button = widget(page).getByRole('button', { name: tooltip }).first();
  await button.click({ timeout: timeoutMs });
}

/** Waits for a modal dialog whose text contains `text`; returns it. */
export async function waitForDialog(page: Page, text: string | RegExp, timeoutMs = 30_000): Promise<Locator> {
  const dialog = page.locator('.monaco-dialog-box').filter({ hasText: text }).first();
  await dialog.waitFor({ state: 'visible', timeout: timeoutMs });
  return dialog;
}

/** Clicks the dialog button labelled `label` and waits for the dialog to close. */
export async function clickDialogButton(dialog: Locator, label: string, timeoutMs = 10_000): Promise<void> {
  await dialog.locator('.dialog-buttons .monaco-button', { hasText: label }).first().click();
  await dialog.waitFor({ state: 'hidden', timeout: timeoutMs });
}

/** Text of the visible lines of the active editor (Monaco renders spaces as U+00A0). */
export async function activeEditorText(page: Page): Promise<string> {
  const lines = await page
    .locator('.editor-group-container.active .monaco-editor .view-line')
    .evaluateAll((els) => els.map((el) => (el.textContent ?? '').replace(/\u00a0/g, ' ')));
  return lines.join('\n');
}
