// The queue-agent: one per split workload, in its namespace. It reads the desired document the
// controller wrote, runs one engine per logical queue, and writes what it observed to its own
// ConfigMap. It never reads a Secret: its broker credentials arrive as env references the
// kubelet resolves, copied from the workload's own container.
import type { EngineSettings } from '../providers/contract';
import { parseDesired, parseObserved } from '../../core/agentDocuments';
import {
  DESIRED_KEY,
  OBSERVED_API_VERSION,
  OBSERVED_KEY,
  type ObservedLag,
  type ObservedState,
} from '../../core/agentProtocol';
import { formatFieldError } from '../../core/result';
import { jsonLogger, describeError } from '../log';
import { ConfigMapStore } from '../kube/configMaps';
import { loadKubeConfig } from '../kube/client';
import { AgentMetrics } from './metrics';
import { portOf, startServer } from '../healthServer';
import { brokerReaders, SessionServer } from '../sessionStream/sessionServer';
import { StepRunner } from './stepRunner';
import { DesiredSeal } from './desiredSeal';
import { DesiredWatch } from './desiredWatch';
import { BacklogTrend } from './backlogTrend';

/** How often the shadow lag (the gauges, and the observed document's lag) is read from the brokers. */
const LAG_PROBE_MS = 5_000;

export interface QueueAgentOptions {
  namespace: string;
  desiredConfigMap: string;
  observedConfigMap: string;
  /** The desired document's seal in the controller's namespace (agent/controller/stateSeal.ts). */
  seal: { namespace: string; name: string };
  /** This pod's uid (the downward API's metadata.uid): session proofs are bound to it. */
  podUid: string;
  metricsPort: number;
  intervalMs: number;
  /** The providers' broker settings the controller passed on (agent/main.ts flags). */
  engineSettings: EngineSettings;
}

export async function runQueueAgent(options: QueueAgentOptions): Promise<void> {
  const log = jsonLogger().child({ component: 'queue-agent', namespace: options.namespace });
  const kc = loadKubeConfig();
  const store = new ConfigMapStore(kc, options.namespace);
  const seal = new DesiredSeal(new ConfigMapStore(kc, options.seal.namespace), options.seal.name);
  // What this agent (or the one before it) last observed: the freshest engine checkpoints.
  const previous = await store.read(options.observedConfigMap).catch(() => undefined);
  const seedDoc = previous?.data[OBSERVED_KEY] ? parseObserved(previous.data[OBSERVED_KEY]) : undefined;
  if (seedDoc && !seedDoc.ok) {
    log.warn('agent.observed_unreadable', { problem: seedDoc.errors.map(formatFieldError).join('; ') });
  }
  const prior = seedDoc?.ok ? seedDoc.value : undefined;
  // Its activation too: counts carry over only within the same activation.
  const seed = prior ? { activationId: prior.activationId, queues: prior.queues } : { queues: {} };
  // What the last observed document said, kept when a desired document is refused.
  let lastObserved: Omit<ObservedState, 'updatedAt'> | undefined = prior
    ? { ...prior, refused: undefined }
    : undefined;
  const runner = new StepRunner(log, seed, options.engineSettings);
  // A predecessor wrote the document: this start is a restart of the activation it served.
  const startedAt = new Date().toISOString().replace(/\.\d{3}Z$/, 'Z');
  const restartOf = (activationId: string): ObservedState['restarts'] =>
    prior?.activationId !== activationId
      ? undefined
      : { count: (prior.restarts?.count ?? 0) + 1, lastAt: startedAt };
  const metrics = new AgentMetrics();
  let lastPass = Date.now();
  let reconciledOnce = false;
  let phaseSince = { phase: '', at: Date.now() };
  const server = await startServer(options.metricsPort, metrics.registry, {
    live: () => Date.now() - lastPass < 120_000,
    ready: () => reconciledOnce,
  });
  // Session streams to the routes' sidecars, on the same port (core/sessionStream.ts).
  const sessions = new SessionServer(
    log.child({ component: 'session' }),
    options.podUid,
    brokerReaders,
    metrics,
  );
  sessions.attach(server);
  log.info('agent.started', { metricsPort: portOf(server) });

  // Wakes the loop when the controller writes a new desired document; the interval stays the fallback.
  const desiredWatch = new DesiredWatch(
    kc,
    options.namespace,
    options.desiredConfigMap,
    DESIRED_KEY,
    log.child({ component: 'desired-watch' }),
  );
  desiredWatch.start();

  let stopping = false;
  const stop = () => {
    stopping = true;
    desiredWatch.stop();
  };
  process.once('SIGTERM', stop);
  process.once('SIGINT', stop);

  let lastWritten = '';
  // The document is read every pass but changes once per generation; parsing it checks every
  // route's filter and names (about 0.1-0.2 s and megabytes of garbage at 1,000 routes), so the
  // last text's result is kept. Parsing is pure: the same text, the same result.
  let lastParsed: { text: string; result: ReturnType<typeof parseDesired> } | undefined;
  const parseOnce = (text: string) => {
    if (lastParsed?.text !== text) lastParsed = { text, result: parseDesired(text) };
    return lastParsed.result;
  };
  let lagProbe: Promise<void> | undefined;
  let lagProbedAt = 0;
  // The latest lag per queue, written with the next observed document; a reading that did not
  // change leaves the document unchanged (a steady split writes nothing).
  const lags = new Map<string, ObservedLag>();
  const trends = new Map<string, BacklogTrend>();
  while (!stopping) {
    lastPass = Date.now();
    try {
      const read = async () => (await store.read(options.desiredConfigMap))?.data[DESIRED_KEY];
      const text = await read();
      const unsealed = text ? await seal.check(text, read) : undefined;
      if (unsealed === 'changed') continue; // rewritten while checked: read it again
      const parsed = text && !unsealed ? parseOnce(text) : undefined;
      if (unsealed || (parsed && !parsed.ok)) {
        // A document this agent cannot trust is acted on in no part; the controller reports it.
        const refused = unsealed
          ? unsealed.refused
          : parsed && !parsed.ok
            ? parsed.errors.map(formatFieldError).join(' | ')
            : '';
        const observed: Omit<ObservedState, 'updatedAt'> = {
          apiVersion: OBSERVED_API_VERSION,
          activationId: lastObserved?.activationId ?? '',
          observedGeneration: lastObserved?.observedGeneration ?? 0,
          queues: lastObserved?.queues ?? {},
          routes: lastObserved?.routes ?? {},
          refused,
        };
        const body = JSON.stringify(observed);
        if (body !== lastWritten) {
          log.error('agent.desired_refused', { problem: refused });
          await store.update(options.observedConfigMap, {
            [OBSERVED_KEY]: JSON.stringify({ ...observed, updatedAt: new Date().toISOString() }),
          });
          lastWritten = body;
        }
      } else if (parsed) {
        const desired = parsed.value;
        metrics.desiredGeneration.set(desired.generation);
        if (phaseSince.phase !== desired.phase) phaseSince = { phase: desired.phase, at: Date.now() };
        metrics.phaseSeconds.reset();
        metrics.phaseSeconds.set({ phase: desired.phase }, (Date.now() - phaseSince.at) / 1000);
        // Streams of routes that left ACTIVE end before the engines drain their shadows.
        await sessions.update(desired);
        const result = await runner.reconcile(desired);
        for (const { queue, status } of runner.engineStatuses()) metrics.observe(queue, status);
        if (!lagProbe && Date.now() - lagProbedAt >= LAG_PROBE_MS) {
          // Broker reads off the loop: a slow broker must not delay reconciling.
          lagProbedAt = Date.now();
          lagProbe = runner
            .shadowLags()
            .then((readings) => {
              for (const { queue, lag } of readings) {
                metrics.observeLag(queue, lag);
                const trend = trends.get(queue) ?? trends.set(queue, new BacklogTrend()).get(queue)!;
                const behindSince = trend.observe(Date.now(), lag.source);
                lags.set(queue, {
                  routes: { ...lag.routes },
                  ...(lag.source !== undefined ? { source: lag.source } : {}),
                  ...(behindSince ? { behindSince: behindSince.toISOString() } : {}),
                });
              }
            })
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
        const restarts = restartOf(desired.activationId);
        const observed: Omit<ObservedState, 'updatedAt'> = {
          apiVersion: OBSERVED_API_VERSION,
          activationId: desired.activationId,
          observedGeneration: desired.generation,
          queues: Object.fromEntries(
            Object.entries(result.queues).map(([queue, q]) => {
              // Only this agent's own readings: a predecessor's (in the seed) may be stale.
              const { lag: _seeded, ...rest } = q;
              const lag = lags.get(queue);
              return [queue, lag ? { ...rest, lag } : rest];
            }),
          ),
          routes: result.routes,
          ...(restarts ? { restarts } : {}),
        };
        lastObserved = observed;
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
    await desiredWatch.wait(options.intervalMs);
  }
  log.info('agent.stopping');
  await sessions.close();
  await runner.close();
  server.close();
}
