// The in-cluster agent: one image, two modes (controller, queue-agent). The modes arrive with
// the agent issue; this is its CLI shell.
import { Command } from 'commander';
import { productVersion } from '../core/version';

const program = new Command('queue-split-agent')
  .description('Queue Split controller and per-workload queue-agent.')
  .version(productVersion)
  .showHelpAfterError();

program.parse();
