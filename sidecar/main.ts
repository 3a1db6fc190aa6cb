// The local sidecar: a child process of the extension (or a terminal command) that serves one
// developer session. Delivery modes arrive with the sidecar issue; this is its CLI shell.
import { Command } from 'commander';
import { productVersion } from '../core/version';

const program = new Command('queue-split-sidecar')
  .description('Consumes your session shadow of a Queue Split and forwards it to the process you debug.')
  .version(productVersion)
  .showHelpAfterError();

program.parse();
