// The queue-agent: one per split workload, in its namespace. It reads the desired document the
// controller wrote, runs one engine per logical queue, and writes what it observed to its own
// ConfigMap. It never reads a Secret: its broker credentials arrive as env references the
// kubelet resolves, copied from the workload's own container.
import { setTimeout as sleep } from 'node:timers/promises';
import { DESIRED_KEY, OBSERVED_KEY, type DesiredState, type ObservedState } from '../../core/agentProtocol';
import { jsonLogger, describeError } from '../engine/log';
import { ConfigMapStore } from '../kube/configMaps';
import { loadKubeConfig } from '../kube/client';
import { AgentMetrics } from './metrics';
import { portOf, startServer } from './server';
import { StepRunner } from './stepRunner';

/** How often the shadow lag gauges are read from the brokers. */
const LAG_PROBE_MS = 5_000;

export interface QueueAgentOptions {
  namespace: string;
  desiredConfigMap: string;
  observedConfigMap: string;
  metricsPort: number;
  intervalMs: number;
}

export async function runQueueAgent(options: QueueAgentOptions): Promise<void> {
  const log = jsonLogger().child({ component: 'queue-agent', namespace: options.namespace });
  const store = new ConfigMapStore(loadKubeConfig(), options.namespace);
  // What this agent (or the one before it) last observed: the freshest engine checkpoints.
  const previous = await store.read(options.observedConfigMap).catch(() => undefined);
  const seed = previous?.data[OBSERVED_KEY]
    ? (JSON.parse(previous.data[OBSERVED_KEY]) as ObservedState).queues
    : {};
  const runner = new StepRunner(log, seed);
  const metrics = new AgentMetrics();
  let lastPass = Date.now();
  let reconciledOnce = false;
  let phaseSince = { phase: '', at: Date.now() };
  const server = await startServer(options.metricsPort, metrics.registry, {
    live: () => Date.now() - lastPass < 120_000,
    ready: () => reconciledOnce,
  });
  log.info('agent.started', { metricsPort: portOf(server) });

  let stopping = false;
  const stop = () => {
    stopping = true;
  };
  process.once('SIGTERM', stop);
  process.once('SIGINT', stop);

  let lastWritten = '';
  let lagProbe: Promise<void> | undefined;
  let lagProbedAt = 0;
  while (!stopping) {
    lastPass = Date.now();
    try {
      const doc = await store.read(options.desiredConfigMap);
      const text = doc?.data[DESIRED_KEY];
      if (text) {
        const desired = JSON.parse(text) as DesiredState;
        metrics.desiredGeneration.set(desired.generation);
        if (phaseSince.phase !== desired.phase) phaseSince = { phase: desired.phase, at: Date.now() };
        metrics.phaseSeconds.reset();
        metrics.phaseSeconds.set({ phase: desired.phase }, (Date.now() - phaseSince.at) / 1000);
        const result = await runner.reconcile(desired);
        for (const { queue, status } of runner.engineStatuses()) metrics.observe(queue, status);
        if (!lagProbe && Date.now() - lagProbedAt >= LAG_PROBE_MS) {
          // Broker reads off the loop: a slow broker must not delay reconciling.
          lagProbedAt = Date.now();
          lagProbe = runner
            .shadowLags()
            .then((lags) => lags.forEach(({ queue, lag }) => metrics.observeLag(queue, lag)))
            .catch(() => undefined)
            .finally(() => {
              lagProbe = undefined;
            });
        }
        for (const [queue, q] of Object.entries(result.queues)) {
          if (q.outcome.kind === 'degraded' || q.outcome.kind === 'rejected') {
            metrics.stepFailures.inc({ queue, step: q.step });
          }
        }
        const observed: Omit<ObservedState, 'updatedAt'> = {
          activationId: desired.activationId,
          observedGeneration: desired.generation,
          queues: result.queues,
          routes: result.routes,
        };
        const body = JSON.stringify(observed);
        if (body !== lastWritten) {
          await store.update(options.observedConfigMap, {
            [OBSERVED_KEY]: JSON.stringify({ ...observed, updatedAt: new Date().toISOString() }),
          });
          lastWritten = body;
        }
        metrics.observedGeneration.set(desired.generation);
        reconciledOnce = true;
      }
    } catch (err) {
      log.error('agent.pass_failed', { reason: describeError(err) });
    }
    await sleep(options.intervalMs);
  }
  log.info('agent.stopping');
  await runner.close();
  server.close();
}
