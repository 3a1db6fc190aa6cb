// Runs one of the pika scripts beside this file: Debian's python3-pika (test/env/install-system-deps.sh
// installs it) as a second AMQP client, so a test's traffic comes from a client this project did
// not write. A missing pika fails loudly with the fix.
import { execFile } from 'node:child_process';
import * as path from 'node:path';
import { promisify } from 'node:util';

const PYTHON = '/usr/bin/python3';

export async function runPika(
  script: 'pika_typed.py' | 'pika_app.py',
  args: readonly string[],
): Promise<string> {
  try {
    const { stdout } = await promisify(execFile)(PYTHON, [path.join(__dirname, script), ...args], {
      timeout: 60_000,
    });
    return stdout;
  } catch (err) {
    const why = err instanceof Error ? err.message : String(err);
    throw new Error(
      `the pika client failed (${why}); it needs Debian's python3-pika at ${PYTHON}: run test/env/install-system-deps.sh as root`,
    );
  }
}
