// The in-cluster agent: one image, two modes (DESIGN §2). `controller` runs cluster-wide and owns
// cutover; `queue-agent` runs one per split workload and hosts its engines.
import { Command, InvalidArgumentError } from 'commander';
import { productVersion } from '../core/version';
import { runController } from './controller/run';
import { runQueueAgent } from './queueAgent/main';

const integer = (name: string, min: number) => (value: string) => {
  const n = Number(value);
  if (!Number.isInteger(n) || n < min)
    throw new InvalidArgumentError(`${name} must be an integer ≥ ${min}, got "${value}"`);
  return n;
};

const program = new Command('queue-split-agent')
  .description('Queue Split controller and per-workload queue-agent.')
  .version(productVersion)
  .showHelpAfterError();

program
  .command('controller')
  .description('Watch QueueSplit objects and drive each split workload through its phases.')
  .requiredOption(
    '--namespace <ns>',
    'namespace of the controller (leader Lease, install id, ownership Leases)',
    process.env.POD_NAMESPACE,
  )
  .option(
    '--agent-image <image>',
    'image of the per-workload queue-agent',
    `queuesplit/agent:${productVersion}`,
  )
  .option(
    '--agent-metrics-port <port>',
    'metrics/health port of queue-agents (0: any free port)',
    integer('--agent-metrics-port', 0),
    9090,
  )
  .option(
    '--step-timeout <seconds>',
    'a step pending longer than this aborts or degrades',
    integer('--step-timeout', 5),
    600,
  )
  .option('--lease-seconds <seconds>', 'leader Lease duration', integer('--lease-seconds', 3), 15)
  .option('--resync-ms <ms>', 'interval between full passes', integer('--resync-ms', 100), 1000)
  .action(
    async (opts: {
      namespace: string;
      agentImage: string;
      agentMetricsPort: number;
      stepTimeout: number;
      leaseSeconds: number;
      resyncMs: number;
    }) => {
      await runController({
        namespace: opts.namespace,
        agentImage: opts.agentImage,
        agentMetricsPort: opts.agentMetricsPort,
        stepTimeoutSeconds: opts.stepTimeout,
        leaseSeconds: opts.leaseSeconds,
        resyncMs: opts.resyncMs,
      });
    },
  );

program
  .command('queue-agent')
  .description('Run the engines of one split workload (started by the controller).')
  .requiredOption('--namespace <ns>', 'namespace of the workload')
  .requiredOption('--desired <configmap>', 'ConfigMap with the desired document')
  .requiredOption('--observed <configmap>', 'ConfigMap to write the observed document to')
  .option(
    '--metrics-port <port>',
    'metrics and health port (0: any free port)',
    integer('--metrics-port', 0),
    9090,
  )
  .option('--interval-ms <ms>', 'reconcile interval', integer('--interval-ms', 100), 500)
  .action(
    async (opts: {
      namespace: string;
      desired: string;
      observed: string;
      metricsPort: number;
      intervalMs: number;
    }) => {
      await runQueueAgent({
        namespace: opts.namespace,
        desiredConfigMap: opts.desired,
        observedConfigMap: opts.observed,
        metricsPort: opts.metricsPort,
        intervalMs: opts.intervalMs,
      });
    },
  );

program.parseAsync().catch((err: unknown) => {
  console.error(err instanceof Error ? err.message : String(err));
  process.exit(1);
});
