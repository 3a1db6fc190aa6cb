// `npm run env:down`: stops exactly the processes env:up started, by their recorded pids.
import * as fs from 'node:fs';
import { stopControlPlane } from './k8s/controlPlane';
import { stopKafka } from './kafka';
import { envFile } from './paths';
import { stopRabbitMq } from './rabbitmq';

async function main(): Promise<void> {
  const [kafka] = await Promise.all([stopKafka(), stopRabbitMq(), stopControlPlane()]);
  fs.rmSync(envFile, { force: true });
  console.log(
    `env:down: stopped${kafka ? ' kafka,' : ''} rabbitmq/epmd and the control plane if they were running; nothing of ours is left.`,
  );
}

void main();
