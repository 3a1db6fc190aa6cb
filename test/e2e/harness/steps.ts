// Numbered screenshots of a test's steps: test-results/e2e/<test>/01-workbench.png, ...
// The last one on a failure is `NN-failure.png`, which is usually all a reviewer needs.
import * as path from 'node:path';
import type { Page } from 'playwright-core';

export class Steps {
  private count = 0;
  readonly taken: string[] = [];

  constructor(
    private readonly page: Page,
    private readonly dir: string,
  ) {}

  /** Saves a full-window screenshot named after the step and returns its path. */
  async shot(step: string): Promise<string> {
    this.count += 1;
    const slug = step
      .toLowerCase()
      .replace(/[^a-z0-9]+/g, '-')
      .replace(/^-|-$/g, '');
    const file = path.join(this.dir, `${String(this.count).padStart(2, '0')}-${slug}.png`);
    // Fast-forwards CSS transitions (notification toasts slide in) so the picture shows the end state.
    await this.page.screenshot({ path: file, timeout: 15_000, animations: 'disabled' });
    this.taken.push(file);
    return file;
  }

  /** Best effort: a failing test must report its own error, not a screenshot error. */
  async failure(): Promise<void> {
    await this.shot('failure').catch(() => undefined);
  }
}
