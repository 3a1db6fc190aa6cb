// `npm run env:down`: stops exactly the processes env:up started, by their recorded pids.
import { spawnSync } from 'node:child_process';
import * as fs from 'node:fs';
import * as path from 'node:path';
import { stopElasticMq } from './elasticmq';
import { stopControlPlane } from './k8s/controlPlane';
import { stopKafka } from './kafka';
import { envFile } from './paths';
import { stopRabbitMq } from './rabbitmq';

async function main(): Promise<void> {
  // The real node first: its drain deletes pods through the API server.
  const node = spawnSync('bash', [path.join(__dirname, 'k8s', 'node', 'node.sh'), 'down'], {
    stdio: ['ignore', 'inherit', 'inherit'],
  });
  if (node.status !== 0)
    console.error(`env:down: the real node's teardown failed (exit ${node.status}); continuing`);
  const [kafka] = await Promise.all([stopKafka(), stopRabbitMq(), stopElasticMq(), stopControlPlane()]);
  fs.rmSync(envFile, { force: true });
  console.log(
    `env:down: stopped${kafka ? ' kafka,' : ''} rabbitmq/epmd, elasticmq and the control plane if they were running; nothing of ours is left.`,
  );
}

void main();
