// Where the test environment keeps things. Runtime state (pids, logs, data) lives in the
// checkout so two clones never share a broker by accident; heavy downloads and builds live
// in a per-user cache keyed by version so a fresh clone on the same machine starts fast.
import * as os from 'node:os';
import * as path from 'node:path';

export const repoRoot = path.resolve(__dirname, '..', '..');
export const runDir = process.env.QS_ENV_DIR ?? path.join(repoRoot, '.env-run');
export const cacheDir = process.env.QS_CACHE_DIR ?? path.join(os.homedir(), '.cache', 'queuesplit');

/** The one file `env:up` writes and every suite that needs services loads (dotenv format). */
export const envFile = path.join(runDir, 'test.env');
