// `npm run env:down`: stops exactly the processes env:up started, by their recorded pids, and the
// broker containers of `env:up -- --brokers --containers` by their recorded ids (then the podman
// service env:up started for them, if it did). `--containers` is accepted and changes nothing.
import { spawnSync } from 'node:child_process';
import * as fs from 'node:fs';
import * as path from 'node:path';
import { stopElasticMq } from './elasticmq';
import { stopControlPlane } from './k8s/controlPlane';
import { stopKafka } from './kafka';
import { envFile, runDir } from './paths';
import { stopRabbitMq } from './rabbitmq';

async function stopContainers(): Promise<string> {
  const { hasBrokerContainers, stopBrokerContainers } = await import('./containers/brokers');
  const { engineIfRunning, stopPodmanService } = await import('./containers/engine');
  const ours = await engineIfRunning();
  let stopped: string[] = [];
  if (hasBrokerContainers() || ours === 'podman') {
    try {
      stopped = await stopBrokerContainers();
    } catch (err) {
      console.error(
        `env:down: could not reach the container engine to stop the brokers' containers: ${err instanceof Error ? err.message : String(err)}`,
      );
    }
  }
  const podman = ours === 'podman' && (await stopPodmanService());
  return `${stopped.length > 0 ? ` the ${stopped.join(', ')} container(s),` : ''}${podman ? ' the podman service,' : ''}`;
}

async function main(): Promise<void> {
  const unknown = process.argv.slice(2).filter((a) => a !== '--containers');
  if (unknown.length > 0) {
    console.error(`env:down: unknown argument ${unknown.join(' ')}; it stops whatever env:up started`);
    process.exit(2);
  }
  // The real node first: its drain deletes pods through the API server. Only where this run
  // directory ever had one: its teardown also clears machine-wide things by fixed names (the
  // node's iptables chains, empty cgroups under its cgroup root), which belong to another
  // checkout's node when this one never started its own (a brokers-only environment).
  if (fs.existsSync(path.join(runDir, 'real-node'))) {
    const node = spawnSync('bash', [path.join(__dirname, 'k8s', 'node', 'node.sh'), 'down'], {
      stdio: ['ignore', 'inherit', 'inherit'],
    });
    if (node.status !== 0)
      console.error(`env:down: the real node's teardown failed (exit ${node.status}); continuing`);
  }
  const [kafka, , , , containers] = await Promise.all([
    stopKafka(),
    stopRabbitMq(),
    stopElasticMq(),
    stopControlPlane(),
    stopContainers(),
  ]);
  fs.rmSync(envFile, { force: true });
  console.log(
    `env:down: stopped${containers}${kafka ? ' kafka,' : ''} rabbitmq/epmd, elasticmq and the control plane if they were running; nothing of ours is left.`,
  );
}

void main();
