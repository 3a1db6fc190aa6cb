// Prometheus metrics of the queue-agent. Labels are the logical queue and the destination kind
// (app | session), never route ids or filter values: those are unbounded and header values.
import { Counter, Gauge, Registry, collectDefaultMetrics } from 'prom-client';
import type { EngineStatus, ShadowLag } from '../engine/contract';
import type { SessionMetrics } from '../sessionStream/sessionServer';

export class AgentMetrics implements SessionMetrics {
  readonly registry = new Registry();
  private readonly published = new Gauge({
    name: 'queuesplit_messages_published',
    help: 'Messages published to shadows since the engine started, by destination kind.',
    labelNames: ['queue', 'destination'],
    registers: [this.registry],
  });
  private readonly inFlight = new Gauge({
    name: 'queuesplit_publishes_in_flight',
    help: 'Shadow publishes awaiting their broker acknowledgement.',
    labelNames: ['queue'],
    registers: [this.registry],
  });
  private readonly retrying = new Gauge({
    name: 'queuesplit_messages_retrying',
    help: 'Source messages held unacknowledged while their publish is retried.',
    labelNames: ['queue'],
    registers: [this.registry],
  });
  private readonly healthy = new Gauge({
    name: 'queuesplit_engine_healthy',
    help: '1 when the engine reports ok, 0 when degraded.',
    labelNames: ['queue'],
    registers: [this.registry],
  });
  private readonly retained = new Gauge({
    name: 'queuesplit_cleanup_pending_resources',
    help: 'Shadows verified empty but kept because no loss-proof delete exists.',
    labelNames: ['queue'],
    registers: [this.registry],
  });
  private readonly lag = new Gauge({
    name: 'queuesplit_shadow_lag_messages',
    help: 'Unconsumed messages in the shadows, by destination kind (session: summed over routes). Kafka: end minus committed offsets, an upper bound.',
    labelNames: ['queue', 'destination'],
    registers: [this.registry],
  });
  private readonly sourceBacklog = new Gauge({
    name: 'queuesplit_source_backlog_messages',
    help: 'Messages waiting in the source that the queue-agent has not copied yet, while it copies: what the split adds to the application lag. Growing: the source carries more than one queue-agent copies. Kafka: end minus the splitter committed offsets, an upper bound.',
    labelNames: ['queue'],
    registers: [this.registry],
  });
  readonly desiredGeneration = new Gauge({
    name: 'queuesplit_desired_generation',
    help: 'Generation of the desired document the controller wrote.',
    registers: [this.registry],
  });
  readonly observedGeneration = new Gauge({
    name: 'queuesplit_observed_generation',
    help: 'Generation the agent last reconciled.',
    registers: [this.registry],
  });
  readonly phaseSeconds = new Gauge({
    name: 'queuesplit_time_in_phase_seconds',
    help: 'Seconds the workload has spent in its current phase.',
    labelNames: ['phase'],
    registers: [this.registry],
  });
  readonly stepFailures = new Counter({
    name: 'queuesplit_step_failures_total',
    help: 'Engine steps that ended degraded or rejected (cleanup failures included).',
    labelNames: ['queue', 'step'],
    registers: [this.registry],
  });

  private readonly streamsReplaced = new Counter({
    name: 'queuesplit_session_streams_replaced_total',
    help: "Session streams ended because another client presented their route's secret (a split's sidecar running twice).",
    registers: [this.registry],
  });
  private readonly framesRefused = new Counter({
    name: 'queuesplit_session_frames_refused_total',
    help: 'Session hellos and client frames the agent refused, by refusal code (bad-frame: unreadable).',
    labelNames: ['code'],
    registers: [this.registry],
  });

  constructor() {
    collectDefaultMetrics({ register: this.registry });
  }

  streamReplaced(): void {
    this.streamsReplaced.inc();
  }

  frameRefused(code: string): void {
    this.framesRefused.inc({ code });
  }

  observeLag(queue: string, lag: ShadowLag): void {
    for (const destination of ['app', 'sessions'] as const) {
      const labels = { queue, destination: destination === 'app' ? 'app' : 'session' };
      const value = lag[destination];
      if (value === undefined) this.lag.remove(labels);
      else this.lag.set(labels, value);
    }
    if (lag.source === undefined) this.sourceBacklog.remove({ queue });
    else this.sourceBacklog.set({ queue }, lag.source);
  }

  observe(queue: string, status: EngineStatus): void {
    this.published.set({ queue, destination: 'app' }, status.app.published);
    this.published.set(
      { queue, destination: 'session' },
      status.routes.reduce((sum, r) => sum + r.published, 0),
    );
    this.inFlight.set({ queue }, status.inFlight);
    this.retrying.set({ queue }, status.retrying);
    this.healthy.set({ queue }, status.health === 'ok' ? 1 : 0);
    this.retained.set({ queue }, status.retained.length);
  }
}
