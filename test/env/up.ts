// `npm run env:up`: starts (or finds running) every service the test suites need and writes
// their addresses to one env file. Safe to run twice. `npm run env:up -- --brokers` starts only
// the brokers (Kafka, RabbitMQ, ElasticMQ for SQS), which the broker suites need, so `npm test` runs them while the control
// plane's Go build (minutes on a fresh machine) is still going; a later full env:up adds it.
// `--containers` runs those brokers as containers instead (test/env/containers/: testcontainers on
// Docker, podman, or this project's own podman service), with the same addresses in the same file;
// for now only with --brokers (the control plane has no container backend yet).
import { spawnSync } from 'node:child_process';
import * as fs from 'node:fs';
import * as path from 'node:path';
import { startElasticMq } from './elasticmq';
import { startControlPlane } from './k8s/controlPlane';
import { startKafka } from './kafka';
import { ensureKedaCrd } from './keda';
import { onPath } from './onPath';
import { envFile, runDir } from './paths';
import { processBackendRefusal } from './processBackend';
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

/**
 * The real node (kubelet + containerd, test/env/k8s/node/README.md) where queue-agents run: after
 * the control plane it joins. Idempotent; builds its kubelet and images on a fresh machine.
 */
function startRealNode(): void {
  const started = Date.now();
  const run = spawnSync('bash', [path.join(__dirname, 'k8s', 'node', 'node.sh'), 'up'], {
    stdio: ['ignore', 'inherit', 'inherit'],
  });
  if (run.status !== 0) {
    console.error(`env:up: the real node did not come up (exit ${run.status ?? run.signal}); see above.`);
    process.exit(1);
  }
  console.log(`real node: Ready in ${((Date.now() - started) / 1000).toFixed(1)}s`);
}

function previousVars(): Record<string, string> {
  if (!fs.existsSync(envFile)) return {};
  const vars: Record<string, string> = {};
  for (const line of fs.readFileSync(envFile, 'utf8').split('\n')) {
    const eq = line.indexOf('=');
    if (eq > 0) vars[line.slice(0, eq)] = line.slice(eq + 1);
  }
  return vars;
}

const FLAGS = ['--brokers', '--containers'];

async function main(): Promise<void> {
  const args = process.argv.slice(2);
  const unknown = args.filter((a) => !FLAGS.includes(a));
  if (unknown.length > 0) {
    console.error(
      `env:up: unknown argument ${unknown.join(' ')}; the arguments are --brokers (Kafka, RabbitMQ and ElasticMQ only) and --containers (those brokers as containers)`,
    );
    process.exit(2);
  }
  const brokersOnly = args.includes('--brokers');
  const containers = args.includes('--containers');
  if (containers && !brokersOnly) {
    console.error(
      'env:up: --containers needs --brokers: the control plane and the real node have no container backend yet (issue 34); `npm run env:up -- --brokers --containers`',
    );
    process.exit(2);
  }
  fs.mkdirSync(runDir, { recursive: true });
  const started = Date.now();
  let starters: Array<() => Promise<Record<string, string>>>;
  if (containers) {
    const { ensureEngine } = await import('./containers/engine');
    const brokers = await import('./containers/brokers');
    try {
      const engine = await ensureEngine();
      console.log(
        `env:up: brokers as containers on ${engine === 'podman' ? "this project's podman service" : "the machine's container engine"}`,
      );
    } catch (err) {
      console.error(`env:up: ${err instanceof Error ? err.message : String(err)}`);
      process.exit(1);
    }
    starters = [brokers.startKafkaContainer, brokers.startRabbitMqContainer, brokers.startElasticMqContainer];
  } else {
    const refusal = processBackendRefusal(process.platform, onPath('dpkg-query'), brokersOnly);
    if (refusal) {
      console.error(refusal);
      process.exit(1);
    }
    ensureSystemDeps();
    starters = [
      startKafka,
      startRabbitMq,
      startElasticMq,
      ...(brokersOnly ? [] : [startControlPlane, () => Promise.resolve().then(ensureKedaCrd)]),
    ];
  }
  const results = await Promise.allSettled(starters.map((start) => start()));
  const failures = results.filter((r): r is PromiseRejectedResult => r.status === 'rejected');
  if (failures.length > 0) {
    for (const f of failures)
      console.error(`\n${f.reason instanceof Error ? f.reason.message : String(f.reason)}`);
    console.error('\nenv:up failed; `npm run env:down` stops what did start.');
    process.exit(1);
  }
  if (!brokersOnly) startRealNode();
  const vars = Object.assign(
    // --brokers keeps what a full env:up wrote before (a control plane that is up stays usable).
    brokersOnly ? previousVars() : {},
    ...results.map((r) => (r as PromiseFulfilledResult<Record<string, string>>).value),
  );
  fs.writeFileSync(
    envFile,
    Object.entries(vars)
      .map(([k, v]) => `${k}=${v}\n`)
      .join(''),
  );
  console.log(
    `env:up: ${brokersOnly ? 'brokers ' : ''}ready in ${((Date.now() - started) / 1000).toFixed(1)}s; addresses written to ${envFile}`,
  );
}

// A start whose promise can no longer settle (a request the engine dropped) empties the event loop
// and Node would exit 0 with nothing written: say so and fail instead.
let finished = false;
process.on('beforeExit', () => {
  if (finished) return;
  console.error('env:up: a broker start never finished (the engine dropped a request?); nothing was written');
  process.exit(1);
});
void main().then(() => {
  finished = true;
});
