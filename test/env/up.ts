// `npm run env:up`: starts (or finds running) every service the test suites need and writes
// their addresses to one env file. Safe to run twice.
import * as fs from 'node:fs';
import { startControlPlane } from './k8s/controlPlane';
import { startKafka } from './kafka';
import { envFile, runDir } from './paths';
import { startRabbitMq } from './rabbitmq';

async function main(): Promise<void> {
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
