// `agent controller`: installation id, leader election, then the control loop.
import type { EngineSettings } from '../providers/contract';
import { randomBytes } from 'node:crypto';
import * as os from 'node:os';
import { CoreV1Api, type KubeConfig } from '@kubernetes/client-node';
import { Registry, collectDefaultMetrics } from 'prom-client';
import { jsonLogger } from '../log';
import { portOf, startServer } from '../healthServer';
import { isConflict, loadKubeConfig } from '../kube/client';
import type { AgentPlacement } from './agentDeployment';
import { cacheMetrics } from './cacheMetrics';
import { Controller } from './controller';
import { LeaderElection } from './leaderElection';

export interface ControllerOptions {
  namespace: string;
  agentImage: string;
  agentMetricsPort: number;
  agentPlacement?: AgentPlacement;
  /** Namespace labels whose pods may reach the queue-agents' metrics port. */
  agentMetricsFrom?: Record<string, string>;
  /** The providers' broker settings (agent/main.ts flags), passed on to every queue-agent. */
  engineSettings: EngineSettings;
  stepTimeoutSeconds: number;
  agentStartTimeoutSeconds: number;
  leaseSeconds: number;
  resyncMs: number;
  /** /healthz and /readyz for the pod's probes (0: any free port, as in the test environment). */
  healthPort: number;
  /** A namespaced install: the only namespaces served (undefined: all). */
  watchNamespaces?: readonly string[];
}

/** A leading controller whose loop has not begun a pass for this long is not live. */
const STALLED_MS = 120_000;

/** One id per installation, kept in a ConfigMap so every replica and restart agrees on it. */
async function installId(kc: KubeConfig, namespace: string): Promise<string> {
  const core = kc.makeApiClient(CoreV1Api);
  const name = 'queuesplit-install';
  try {
    await core.createNamespacedConfigMap({
      namespace,
      body: { metadata: { name }, data: { installId: randomBytes(8).toString('hex') } },
    });
  } catch (err) {
    if (!isConflict(err)) throw err;
  }
  const cm = await core.readNamespacedConfigMap({ name, namespace });
  const id = cm.data?.installId;
  if (!id) throw new Error(`ConfigMap ${namespace}/${name} has no installId`);
  return id;
}

export async function runController(options: ControllerOptions): Promise<void> {
  const log = jsonLogger().child({ component: 'controller' });
  const kc = loadKubeConfig();
  // Unique per process, as client-go's (hostname + "_" + a random id): in a container the pid
  // is always 1, and a restarted replica must not take over its dead predecessor's lease as if
  // it still held it.
  const identity = `${os.hostname()}_${randomBytes(4).toString('hex')}`;
  const election = new LeaderElection(
    kc,
    {
      namespace: options.namespace,
      name: 'queuesplit-controller',
      identity,
      leaseSeconds: options.leaseSeconds,
    },
    log,
  );
  // Ready once up (a standby is ready too: it takes over when the leader goes); live while the
  // control loop keeps turning once this replica leads.
  const leading: { controller?: Controller } = {};
  // /metrics: the process's own (CPU, memory, event loop lag), what the chart's optional
  // ServiceMonitor scrapes (deploy/manifests.ts metricsManifests).
  const registry = new Registry();
  collectDefaultMetrics({ register: registry });
  const health = await startServer(options.healthPort, registry, {
    live: () => !leading.controller || Date.now() - leading.controller.lastPassAt < STALLED_MS,
    ready: () => true,
  });
  log.info('controller.waiting_for_leadership', {
    identity,
    healthPort: portOf(health),
    namespaces: options.watchNamespaces?.join(',') ?? '*',
  });
  // Installed before the election: Node as a container's pid 1 ignores a SIGTERM it has no
  // handler for, and a standby that ignored it would take the lease when the leader goes and
  // act (with an old install's settings, during an upgrade) until the kubelet kills it.
  // A leader stops its loop and releases the lease; one that has just won it does so as soon
  // as its loop exists.
  let acquired = false;
  let stopRequested = false;
  const onSignal = () => {
    stopRequested = true;
    if (leading.controller) return leading.controller.stop();
    if (acquired) return;
    log.info('controller.stopped', { leading: false });
    process.exit(0);
  };
  process.once('SIGTERM', onSignal);
  process.once('SIGINT', onSignal);
  await election.acquire();
  acquired = true;
  const controller = new Controller(
    kc,
    {
      installId: await installId(kc, options.namespace),
      controllerNamespace: options.namespace,
      stepTimeoutMs: options.stepTimeoutSeconds * 1000,
      agentStartTimeoutMs: options.agentStartTimeoutSeconds * 1000,
      agent: {
        image: options.agentImage,
        controllerNamespace: options.namespace,
        metricsPort: options.agentMetricsPort,
        ...(options.agentPlacement ? { placement: options.agentPlacement } : {}),
        engineSettings: options.engineSettings,
        ...(options.agentMetricsFrom ? { metricsFrom: options.agentMetricsFrom } : {}),
      },
      resyncMs: options.resyncMs,
      ...(options.watchNamespaces ? { watchNamespaces: options.watchNamespaces } : {}),
    },
    log,
    cacheMetrics(registry),
  );
  election.keepRenewing((why) => {
    log.error('leader.lost', { why });
    process.exit(3); // stop acting at once; the Deployment restarts us as a follower
  });
  leading.controller = controller;
  if (stopRequested) controller.stop();
  await controller.run();
  await election
    .release()
    .catch((err: unknown) => log.warn('leader.release_failed', { reason: String(err) }));
  log.info('controller.stopped');
  process.exit(0); // the renewal timer must not keep a stopped controller alive
}
