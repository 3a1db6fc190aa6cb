// KEDA's ScaledObject CRD, exactly as KEDA publishes it: taken from the kedacore/keda module on the
// Go module proxy (its source, not a build: the operator is not run here, see
// test/support/kedaContract.ts) and kept under the cache, keyed by version.
import { execFileSync } from 'node:child_process';
import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import { cacheDir } from './paths';

export const KEDA_VERSION = 'v2.20.2';

/** Where env:up keeps the CRD; the tests read it from here. */
export const kedaScaledObjectCrd = path.join(
  cacheDir,
  `keda-crd-${KEDA_VERSION}`,
  'keda.sh_scaledobjects.yaml',
);

export function ensureKedaCrd(): Record<string, string> {
  if (!fs.existsSync(kedaScaledObjectCrd)) {
    // Outside any module, so no go.mod constrains the download.
    const scratch = fs.mkdtempSync(path.join(os.tmpdir(), 'keda-dl-'));
    const out = execFileSync(
      'go',
      ['mod', 'download', '-json', `github.com/kedacore/keda/v2@${KEDA_VERSION}`],
      {
        encoding: 'utf8',
        cwd: scratch,
        env: { ...process.env, GOFLAGS: '-mod=mod' },
      },
    );
    fs.rmSync(scratch, { recursive: true, force: true });
    const dir = (JSON.parse(out) as { Dir?: string }).Dir;
    const source = dir && path.join(dir, 'config', 'crd', 'bases', 'keda.sh_scaledobjects.yaml');
    if (!source || !fs.existsSync(source))
      throw new Error(
        `env:up: the kedacore/keda ${KEDA_VERSION} module has no ScaledObject CRD at ${source}`,
      );
    fs.mkdirSync(path.dirname(kedaScaledObjectCrd), { recursive: true });
    fs.copyFileSync(source, kedaScaledObjectCrd);
  }
  return { QS_KEDA_CRD: kedaScaledObjectCrd };
}
