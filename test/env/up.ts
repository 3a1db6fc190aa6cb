// `npm run env:up`: starts (or finds running) every service the test suites need and writes
// their addresses to one env file. Safe to run twice.
import { spawnSync } from 'node:child_process';
import * as fs from 'node:fs';
import * as path from 'node:path';
import { startControlPlane } from './k8s/controlPlane';
import { startKafka } from './kafka';
import { envFile, runDir } from './paths';
import { startRabbitMq } from './rabbitmq';

/**
 * A fresh machine needs Debian's packages first (rabbitmq-server): the installer adds what is
 * missing when it may (root, apt-get) and otherwise stops naming the command to run.
 */
function ensureSystemDeps(): void {
  const script = path.join(__dirname, 'install-system-deps.sh');
  const run = spawnSync('bash', [script], { stdio: ['ignore', 'inherit', 'inherit'] });
  if (run.status !== 0) {
    console.error(`env:up: ${script} failed (exit ${run.status ?? run.signal}); see above.`);
    process.exit(1);
  }
}

async function main(): Promise<void> {
  ensureSystemDeps();
  fs.mkdirSync(runDir, { recursive: true });
  const started = Date.now();
  const results = await Promise.allSettled([startKafka(), startRabbitMq(), startControlPlane()]);
  const failures = results.filter((r): r is PromiseRejectedResult => r.status === 'rejected');
  if (failures.length > 0) {
    for (const f of failures)
      console.error(`\n${f.reason instanceof Error ? f.reason.message : String(f.reason)}`);
    console.error('\nenv:up failed; `npm run env:down` stops what did start.');
    process.exit(1);
  }
  const vars = Object.assign(
    {},
    ...results.map((r) => (r as PromiseFulfilledResult<Record<string, string>>).value),
  );
  fs.writeFileSync(
    envFile,
    Object.entries(vars)
      .map(([k, v]) => `${k}=${v}\n`)
      .join(''),
  );
  console.log(
    `env:up: ready in ${((Date.now() - started) / 1000).toFixed(1)}s; addresses written to ${envFile}`,
  );
}

void main();
