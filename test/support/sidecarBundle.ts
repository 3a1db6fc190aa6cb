// The sidecar as one file, built with the product's esbuild options: a test runs it with plain
// node (about a tenth of a second to start) rather than through tsx, which compiles the sidecar's
// sources again in every process it starts (seconds on a loaded 2-core machine).
import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import { build } from 'esbuild';
import { repoRoot } from '../env/paths';

/** The sidecar bundle: QS_SIDECAR_BUNDLE (e.g. dist/sidecar.js after `npm run build`), else built here with the product's options. */
export async function sidecarBundle(): Promise<string> {
  const given = process.env.QS_SIDECAR_BUNDLE;
  if (given) return path.resolve(given);
  const outfile = path.join(fs.mkdtempSync(path.join(os.tmpdir(), 'qs-sidecar-')), 'sidecar.js');
  await build({
    entryPoints: [path.join(repoRoot, 'sidecar', 'main.ts')],
    outfile,
    bundle: true,
    platform: 'node',
    target: 'node20',
    format: 'cjs',
    sourcemap: 'linked',
    logLevel: 'warning',
    banner: { js: '#!/usr/bin/env node' },
  });
  return outfile;
}
