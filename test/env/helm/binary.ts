// The helm CLI for the chart's tests: test/env/helm/build.sh, which answers at once from its cache
// or waits for a build that holds its lock (.ci/run starts one early), else builds it, within a
// bound. A test that needs helm fails with the build's own words when there is none; never skips.
import { spawn } from 'node:child_process';
import * as fs from 'node:fs';
import * as path from 'node:path';

/** A cold build takes about 3.5 minutes of both cores; on a loaded CI machine several times that. */
export const HELM_BUILD_BOUND_MS = 25 * 60_000;

export async function helmBinary(boundMs = HELM_BUILD_BOUND_MS): Promise<string> {
  // Its own process group, so that a build past the bound is ended with its go compilers.
  const child = spawn('bash', [path.join(__dirname, 'build.sh')], {
    stdio: ['ignore', 'pipe', 'pipe'],
    detached: true,
  });
  let out = '';
  let err = '';
  child.stdout.on('data', (chunk: Buffer) => (out += chunk.toString()));
  child.stderr.on('data', (chunk: Buffer) => (err += chunk.toString()));
  let timedOut = false;
  const timer = setTimeout(() => {
    timedOut = true;
    process.kill(-child.pid!, 'SIGTERM');
  }, boundMs);
  const code = await new Promise<number | null>((resolve) => child.once('close', resolve));
  clearTimeout(timer);
  const tail = err.trim().split('\n').slice(-15).join('\n');
  if (timedOut) {
    throw new Error(
      `helm: test/env/helm/build.sh did not finish within ${Math.round(boundMs / 1000)} s; its last words:\n${tail}`,
    );
  }
  if (code !== 0) throw new Error(`helm: test/env/helm/build.sh failed with exit ${code}:\n${tail}`);
  const binary = out.trim().split('\n').pop() ?? '';
  if (!fs.existsSync(binary))
    throw new Error(`helm: build.sh printed no helm binary (last line: "${binary}")`);
  return binary;
}
