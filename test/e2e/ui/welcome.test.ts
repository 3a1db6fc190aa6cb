// What a first-time user sees without a usable cluster: the Queue Splits view explains it and
// offers the next steps (welcome view), its "Show Logs" says why, and the walkthrough opens.
// Screenshots: test-results/e2e/welcome-view-without-a-cluster/.
import { test } from 'node:test';
import type { Page } from 'playwright-core';
import { withWorkbench } from '../harness/session';
import { openCommandPalette, openViewContainer, waitForOutput } from '../harness/workbench';

test('welcome view without a cluster', async () => {
  const settings = { 'queueSplit.kubeconfig': '/nonexistent/kubeconfig' };
  await withWorkbench('welcome view without a cluster', { settings }, async ({ page, steps }) => {
    await openViewContainer(page, 'Queue Split');
    const welcome = page.locator('.welcome-view-content').filter({ hasText: 'No Kubernetes cluster' });
    await welcome.waitFor({ state: 'visible', timeout: 60_000 });
    await welcome
      .locator('a, .monaco-button', { hasText: 'Select Context/Namespace' })
      .first()
      .waitFor({ state: 'visible' });
    await steps.shot('welcome view');

    // The welcome view's "Show Logs" opens the log, which says what is wrong with the kubeconfig.
    await welcome.locator('a, .monaco-button', { hasText: 'Show Logs' }).first().click();
    await waitForOutput(page, 'Queue Split', 'Cannot load the kubeconfig /nonexistent/kubeconfig');
    await steps.shot('the log says why');

    // "Welcome: Open Walkthrough..." asks which walkthrough in a second quick pick.
    const palette = await openCommandPalette(page);
    await palette.fill('>Welcome: Open Walkthrough');
    await page
      .locator('.quick-input-list .monaco-list-row[aria-label^="Welcome: Open Walkthrough"]')
      .first()
      .click();
    const picker = await openQuickInputWithRow(page, 'Get started with Queue Split');
    await picker.click();
    await page
      .locator('.getting-started-step', { hasText: 'Pick your cluster and namespace' })
      .first()
      .waitFor({ state: 'visible', timeout: 30_000 });
    await steps.shot('walkthrough');
  });
});

async function openQuickInputWithRow(page: Page, text: string) {
  const row = page
    .locator('.quick-input-widget .quick-input-list .monaco-list-row', { hasText: text })
    .first();
  await row.waitFor({ state: 'visible', timeout: 30_000 });
  return row;
}
