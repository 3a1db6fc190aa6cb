// The in-cluster agent: one image, two modes (docs/design.md §2). `controller` runs cluster-wide and owns
// cutover; `queue-agent` runs one per split workload and hosts its engines. Each mode's code is
// imported when the mode runs: the bundle then evaluates only that mode's modules (esbuild makes
// a dynamic import in the bundle a lazily evaluated module), 8 MiB less RSS for a queue-agent.
import type { V1Toleration } from '@kubernetes/client-node';
import { Command, InvalidArgumentError, Option } from 'commander';
import { defaultAgentImage } from '../core/image';
import { productVersion } from '../core/version';
import { DEFAULT_METRICS_PORT } from './controller/agentDeployment';
import { CONTROLLER_HEALTH_PORT } from '../core/podSecurity';
import {
  parseMetricsFrom,
  parseNodeSelector,
  parseTolerations,
  type FlagResult,
} from './controller/placementFlags';
import type { EngineSettings } from './providers/contract';
import { brokerSettings } from '../core/providers/registry';

function sealRef(value: string): { namespace: string; name: string } {
  const [namespace, name, ...rest] = value.split('/');
  if (!namespace || !name || rest.length > 0)
    throw new InvalidArgumentError(
      `"${value}" is not <namespace>/<configmap>; e.g. queuesplit-system/qs-seal-app-1a2b3c`,
    );
  return { namespace, name };
}

const integer = (name: string, min: number) => (value: string) => {
  const n = Number(value);
  if (!Number.isInteger(n) || n < min)
    throw new InvalidArgumentError(`${name} must be an integer ≥ ${min}, got "${value}"`);
  return n;
};

/** Each provider's broker settings, one flag each on both commands: the controller passes
 * their values on to every queue-agent. */
function addBrokerSettings(command: Command): Command {
  for (const setting of brokerSettings()) {
    command.addOption(
      new Option(`--${setting.flag} <${setting.arg}>`, setting.help)
        .argParser(integer(`--${setting.flag}`, setting.min))
        .default(setting.default),
    );
  }
  return command;
}

/** The broker settings' values from a command's parsed options. */
function engineSettings(opts: Record<string, unknown>): EngineSettings {
  return Object.fromEntries(
    brokerSettings().flatMap((setting) => {
      const value = opts[new Option(`--${setting.flag} <${setting.arg}>`).attributeName()];
      return typeof value === 'number' ? [[setting.flag, value]] : [];
    }),
  );
}

/** A commander parser from a pure flag parser (agent/controller/placementFlags.ts). */
const flag =
  <T>(parse: (text: string) => FlagResult<T>) =>
  (text: string): T => {
    const result = parse(text);
    if (!result.ok) throw new InvalidArgumentError(result.error);
    return result.value;
  };

/** `a,b`: DNS-1123 namespace names, at least one, no duplicates. */
function watchNamespaces(value: string): string[] {
  const list = value.split(',').map((n) => n.trim());
  const bad = list.find((n) => !/^[a-z0-9]([-a-z0-9]{0,61}[a-z0-9])?$/.test(n));
  if (bad !== undefined)
    throw new InvalidArgumentError(
      `--watch-namespaces: "${bad}" is not a namespace name; give comma-separated namespace names, e.g. team-a,team-b`,
    );
  if (new Set(list).size !== list.length)
    throw new InvalidArgumentError('--watch-namespaces: a namespace is listed twice; list each once');
  return list;
}

const program = new Command('queue-split-agent')
  .description('Queue Split controller and per-workload queue-agent.')
  .version(productVersion)
  .showHelpAfterError();

addBrokerSettings(
  program
    .command('controller')
    .description('Watch QueueSplit objects and drive each split workload through its phases.')
    .requiredOption(
      '--namespace <ns>',
      'namespace of the controller (leader Lease, install id, ownership Leases)',
      process.env.POD_NAMESPACE,
    )
    .option('--agent-image <image>', 'image of the per-workload queue-agent', defaultAgentImage)
    .option(
      '--agent-node-selector <key=value,...>',
      'run queue-agents only on nodes with these labels',
      flag(parseNodeSelector),
    )
    .option(
      '--agent-tolerations <key[=value]:Effect,...>',
      'let queue-agents run on nodes with these taints',
      flag(parseTolerations),
    )
    .option(
      '--agent-metrics-from <key=value,...>',
      "namespaces (by label) whose pods may reach the queue-agents' metrics port; without it the agents' NetworkPolicy admits no ingress",
      flag(parseMetricsFrom),
    )
    .option(
      '--agent-metrics-port <port>',
      'metrics/health port of queue-agents (0: any free port)',
      integer('--agent-metrics-port', 0),
      DEFAULT_METRICS_PORT,
    )
    .option(
      '--step-timeout <seconds>',
      'a step pending longer than this aborts or degrades',
      integer('--step-timeout', 5),
      600,
    )
    .option(
      '--agent-start-timeout <seconds>',
      'a queue-agent crash-looping or unready this long fails its step (an unpullable image or a refused pod fails it at once)',
      integer('--agent-start-timeout', 5),
      120,
    )
    .option('--lease-seconds <seconds>', 'leader Lease duration', integer('--lease-seconds', 3), 15)
    .option('--resync-ms <ms>', 'interval between full passes', integer('--resync-ms', 100), 1000)
    .option(
      '--health-port <port>',
      'port of /healthz and /readyz (0: any free port)',
      integer('--health-port', 0),
      CONTROLLER_HEALTH_PORT,
    )
    .option(
      '--watch-namespaces <list>',
      'a namespaced install: serve only these comma-separated namespaces (its RBAC is bound there alone)',
      watchNamespaces,
    ),
).action(
  async (
    opts: {
      namespace: string;
      watchNamespaces?: string[];
      agentImage: string;
      agentNodeSelector?: Record<string, string>;
      agentTolerations?: V1Toleration[];
      agentMetricsFrom?: Record<string, string>;
      agentMetricsPort: number;
      stepTimeout: number;
      agentStartTimeout: number;
      leaseSeconds: number;
      resyncMs: number;
      healthPort: number;
    } & Record<string, unknown>,
  ) => {
    const { runController } = await import('./controller/run');
    await runController({
      namespace: opts.namespace,
      agentImage: opts.agentImage,
      agentMetricsPort: opts.agentMetricsPort,
      ...(opts.agentMetricsFrom ? { agentMetricsFrom: opts.agentMetricsFrom } : {}),
      ...(opts.agentNodeSelector || opts.agentTolerations
        ? {
            agentPlacement: {
              ...(opts.agentNodeSelector ? { nodeSelector: opts.agentNodeSelector } : {}),
              ...(opts.agentTolerations ? { tolerations: opts.agentTolerations } : {}),
            },
          }
        : {}),
      engineSettings: engineSettings(opts),
      stepTimeoutSeconds: opts.stepTimeout,
      agentStartTimeoutSeconds: opts.agentStartTimeout,
      leaseSeconds: opts.leaseSeconds,
      resyncMs: opts.resyncMs,
      healthPort: opts.healthPort,
      ...(opts.watchNamespaces ? { watchNamespaces: opts.watchNamespaces } : {}),
    });
  },
);

addBrokerSettings(
  program
    .command('queue-agent')
    .description('Run the engines of one split workload (started by the controller).')
    .requiredOption('--namespace <ns>', 'namespace of the workload')
    .requiredOption('--desired <configmap>', 'ConfigMap with the desired document')
    .requiredOption('--observed <configmap>', 'ConfigMap to write the observed document to')
    .requiredOption(
      '--seal <namespace/configmap>',
      "the desired document's seal, in the controller's namespace",
      sealRef,
    )
    .requiredOption(
      '--pod-uid <uid>',
      "this pod's uid, which session proofs name (the controller sets QS_POD_UID from the downward API)",
      process.env.QS_POD_UID,
    )
    .option(
      '--metrics-port <port>',
      'metrics and health port (0: any free port)',
      integer('--metrics-port', 0),
      DEFAULT_METRICS_PORT,
    )
    .option('--interval-ms <ms>', 'reconcile interval', integer('--interval-ms', 100), 500),
).action(
  async (
    opts: {
      namespace: string;
      desired: string;
      observed: string;
      seal: { namespace: string; name: string };
      podUid: string;
      metricsPort: number;
      intervalMs: number;
    } & Record<string, unknown>,
  ) => {
    const { runQueueAgent } = await import('./queueAgent/main');
    await runQueueAgent({
      namespace: opts.namespace,
      desiredConfigMap: opts.desired,
      observedConfigMap: opts.observed,
      seal: opts.seal,
      podUid: opts.podUid,
      metricsPort: opts.metricsPort,
      intervalMs: opts.intervalMs,
      engineSettings: engineSettings(opts),
    });
  },
);

program.parseAsync().catch((err: unknown) => {
  console.error(err instanceof Error ? err.message : String(err));
  process.exit(1);
});
