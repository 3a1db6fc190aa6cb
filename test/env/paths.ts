// Where the test environment keeps things: defined in fixtures/env/paths.ts, which the demo reads
// too; the environment's scripts and the suites import it from here.
export { cacheDir, envFile, repoRoot, runDir } from '../../fixtures/env/paths';
