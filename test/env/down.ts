// `npm run env:down`: stops exactly the processes env:up started, by their recorded pids.
import * as fs from 'node:fs';
import { stopKafka } from './kafka';
import { envFile } from './paths';
import { stopRabbitMq } from './rabbitmq';

async function main(): Promise<void> {
  const [kafka] = await Promise.all([stopKafka(), stopRabbitMq()]);
  fs.rmSync(envFile, { force: true });
  console.log(
    `env:down: stopped${kafka ? ' kafka,' : ''} rabbitmq/epmd if they were running; nothing of ours is left.`,
  );
}

void main();
