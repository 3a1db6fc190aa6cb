// Last-resort cleanup when a test process ends without running its `finally` blocks (Ctrl-C,
// a test-runner timeout, a crash): SIGKILL the process groups we started and remove the
// temporary folders we made. The normal path stops and removes them itself and untracks them.
import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';

const groups = new Set<number>();
const dirs = new Set<string>();

export const trackGroup = (pgid: number) => groups.add(pgid);
/** Returns false if the group was not tracked (already stopped). */
export const untrackGroup = (pgid: number) => groups.delete(pgid);

/** A fresh folder under the OS temp dir, removed at exit if nobody removed it first. */
export function tempDir(prefix: string): string {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), prefix));
  dirs.add(dir);
  return dir;
}

export function removeTempDir(dir: string): void {
  dirs.delete(dir);
  fs.rmSync(dir, { recursive: true, force: true, maxRetries: 3 });
}

export function signalGroup(pgid: number, signal: NodeJS.Signals): void {
  try {
    process.kill(-pgid, signal);
  } catch {
    /* already gone */
  }
}

function emergencyCleanup(): void {
  for (const pgid of groups) signalGroup(pgid, 'SIGKILL');
  for (const dir of dirs) {
    try {
      fs.rmSync(dir, { recursive: true, force: true });
    } catch {
      /* best effort: a browser may still be writing its profile */
    }
  }
}

process.once('exit', emergencyCleanup);
for (const signal of ['SIGINT', 'SIGTERM', 'SIGHUP'] as const) {
  process.once(signal, () => {
    emergencyCleanup();
    process.kill(process.pid, signal); // our listener is gone: the default action ends the process
  });
}
