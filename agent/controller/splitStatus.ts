// The status a developer sees on their QueueSplit, derived from the workload's state and what
// the queue-agent observed: phase, per-queue shadows and env overrides (names, never secrets),
// delivered counts and lag, and a condition that says what blocks and the safe next action.
import { RETRY_ANNOTATION, retryHint } from '../../core/state/operatorRetry';
import type { ObservedState } from '../../core/agentProtocol';
import type {
  QueueSplit,
  QueueSplitCondition,
  QueueSplitPhase,
  QueueSplitStatus,
} from '../../core/crd/queueSplitSchema';
import { consumerOverrides, envValues } from '../../core/queueConfig/consumerOverrides';
import type { ResolvedQueue } from '../../core/queueConfig/resolveQueues';
import { routePhaseForStatus } from '../../core/state/routeStatus';
import type { SplitState } from '../../core/state/stateDocument';
import { routeShadow } from './desired';
import { BEHIND_FLOOR } from '../queueAgent/backlogTrend';

export interface StatusInputs {
  state: SplitState | undefined;
  observed: ObservedState | undefined;
  resolved: readonly ResolvedQueue[];
  /** Set when the controller refused or failed this route: the reason and the fix. */
  verdict?: { phase: 'Rejected' | 'Failed' | 'Stopped'; reason: string; message: string };
  blocking?: string;
  /** Set while the controller cannot trust a document of the workload: Degraded, nothing acted on. */
  halted?: { reason: string; message: string; nextAction: string };
}

export function splitStatus(split: QueueSplit, inputs: StatusInputs): QueueSplitStatus {
  const { state, observed, resolved, verdict } = inputs;
  const routeId = split.spec.routeId;
  const phase: QueueSplitPhase = inputs.halted
    ? 'Degraded'
    : (verdict?.phase ?? (state ? routePhaseForStatus(state, routeId) : 'Pending'));
  const route = state?.routes.find((r) => r.routeId === routeId);
  const queues = split.spec.queues.map((name) => {
    const plan = resolved.find((q) => q.name === name);
    const shadow = state && route ? routeShadow(state, name, routeId) : undefined;
    const settings =
      plan && shadow ? consumerOverrides(plan, { source: shadow.shadow, group: shadow.sessionGroup }) : [];
    const envOverrides = envValues(settings);
    const fileOverrides = settings.flatMap((s) =>
      s.at.kind === 'file' ? [{ path: s.at.path, key: s.at.key, value: s.value }] : [],
    );
    const delivered = observed?.queues[name]?.published[routeId];
    const lag = observed?.queues[name]?.lag;
    const sessionLag = lag?.routes[routeId];
    return {
      name,
      phase,
      ...(shadow
        ? {
            shadow: { source: shadow.shadow, ...(shadow.sessionGroup ? { group: shadow.sessionGroup } : {}) },
          }
        : {}),
      ...(Object.keys(envOverrides).length > 0 ? { envOverrides } : {}),
      ...(fileOverrides.length > 0 ? { fileOverrides } : {}),
      ...(delivered !== undefined ? { delivered } : {}),
      ...(sessionLag !== undefined ? { lag: sessionLag } : {}),
      ...(shownBacklog(lag?.source) !== undefined ? { sourceBacklog: shownBacklog(lag?.source) } : {}),
    };
  });
  const delivered = queues.reduce((sum, q) => sum + (q.delivered ?? 0), 0);
  // A sum over a reading the agent could not make would understate it.
  const lag = queues.every((q) => q.lag !== undefined)
    ? queues.reduce((sum, q) => sum + (q.lag ?? 0), 0)
    : undefined;
  const condition = inputs.halted
    ? haltedCondition(inputs.halted)
    : conditionFor(phase, state, verdict, inputs.blocking, route?.lastError);
  return {
    phase,
    observedGeneration: split.metadata.generation ?? 0,
    queues,
    delivered,
    ...(lag !== undefined ? { lag } : {}),
    ...(condition.nextAction ? { nextAction: condition.nextAction } : {}),
    conditions: [condition.condition, ...restartCondition(observed), ...behindCondition(observed, queues)],
  };
}

function haltedCondition(halted: NonNullable<StatusInputs['halted']>): {
  condition: QueueSplitCondition;
  nextAction: string;
} {
  return {
    condition: {
      type: 'Ready',
      status: 'False',
      reason: halted.reason,
      message: `Degraded: ${halted.message}. ${halted.nextAction}`,
      lastTransitionTime: new Date().toISOString().replace(/\.\d{3}Z$/, 'Z'),
    },
    nextAction: halted.nextAction,
  };
}

/** The queue-agent restarted during this activation: the sidecar warns the developer, since
 * messages in flight may come again. */
function restartCondition(observed: ObservedState | undefined): QueueSplitCondition[] {
  const restarts = observed?.restarts;
  if (!restarts) return [];
  return [
    {
      type: 'AgentRestarted',
      status: 'True',
      reason: 'QueueAgentRestarted',
      message:
        `The queue-agent restarted (${restarts.count}x, last at ${restarts.lastAt}) and resumed from its checkpoints. ` +
        'Messages in flight at a restart may be delivered again (at most one pump chunk per crash, see README); a drain in progress resumes where it was.',
      lastTransitionTime: restarts.lastAt,
    },
  ];
}

/**
 * The source backlog as every split of the workload shows it: from about a chunk on (less is a
 * chunk in flight, not lag) and to two significant digits, since it moves at every reading of a
 * busy source and each change rewrites every split's status (the metric has the exact figure).
 */
export function shownBacklog(backlog: number | undefined): number | undefined {
  if (backlog === undefined || backlog < BEHIND_FLOOR) return undefined;
  const step = 10 ** (Math.floor(Math.log10(backlog)) - 1);
  return Math.floor(backlog / step) * step;
}

/** While the source of a queue this split routes keeps outgrowing what the queue-agent copies
 * (agent/queueAgent/backlogTrend.ts): the application falls further behind while splits last.
 * Informs; the split stays Ready. */
function behindCondition(
  observed: ObservedState | undefined,
  queues: readonly { name: string; sourceBacklog?: number }[],
): QueueSplitCondition[] {
  const behind = queues.flatMap((q) => {
    const since = observed?.queues[q.name]?.lag?.behindSince;
    return since ? [{ name: q.name, since, backlog: q.sourceBacklog }] : [];
  });
  if (behind.length === 0) return [];
  const since = behind.map((b) => b.since).sort()[0]!;
  return [
    {
      type: 'FallingBehind',
      status: 'True',
      reason: 'SourceBacklogGrowing',
      message:
        behind
          .map(
            (b) =>
              `${b.name}: ${b.backlog !== undefined ? `about ${b.backlog}` : 'more and more'} messages wait in the source`,
          )
          .join('; ') +
        `, and more at every reading since ${since}: the source carries more than the queue-agent copies, so the application reads them late for as long as the workload is split (nothing is lost). ` +
        'Stop the splits you no longer use: once the last one stops, the application reads its source directly again.',
      lastTransitionTime: since.replace(/\.\d{3}Z$/, 'Z'),
    },
  ];
}

function conditionFor(
  phase: QueueSplitPhase,
  state: SplitState | undefined,
  verdict: StatusInputs['verdict'],
  blocking: string | undefined,
  routeError: string | undefined,
): { condition: QueueSplitCondition; nextAction?: string } {
  const now = new Date().toISOString().replace(/\.\d{3}Z$/, 'Z');
  if (verdict) {
    return {
      condition: {
        type: 'Ready',
        status: 'False',
        reason: verdict.reason,
        message: verdict.message,
        lastTransitionTime: now,
      },
      nextAction: verdict.message,
    };
  }
  if (phase === 'Active') {
    return {
      condition: {
        type: 'Ready',
        status: 'True',
        reason: 'RouteActive',
        message: 'Matching messages reach your session shadow.',
        lastTransitionTime: now,
      },
    };
  }
  if (phase === 'Degraded') {
    const reason =
      state?.degraded?.reason ??
      (routeError ? `your route could not drain: ${routeError}` : 'a step could not be proven');
    const next = `Nothing was lost. Fix the cause named here, then ask an operator to retry (${state ? retryHint(state.workload) : `annotate the workload with ${RETRY_ANNOTATION}=now`}).`;
    return {
      condition: {
        type: 'Ready',
        status: 'False',
        reason: 'Degraded',
        message: `${reason}. ${next}`,
        lastTransitionTime: now,
      },
      nextAction: next,
    };
  }
  const why = blocking ?? (state ? `workload phase ${state.phase}` : 'waiting for the controller');
  return {
    condition: {
      type: 'Ready',
      status: 'False',
      reason: phase === 'Draining' ? 'Draining' : 'InProgress',
      message: why,
      lastTransitionTime: now,
    },
  };
}

/**
 * Statuses are compared without timestamps and whatever the order of their keys, so an unchanged
 * status is not rewritten every pass: the API server returns a custom resource's fields sorted,
 * and comparing text in the order the controller builds them rewrote a waiting split's status
 * on every pass (about once a second while Degraded). `observedGeneration` is not compared
 * either: the spec is immutable but for its lease, so a new generation is a lease renewal (every
 * third of the lease, by the sidecar), which changes nothing the status says, and would otherwise
 * cost one status write per renewal per split (docs/design.md §6, "What the controller reads and
 * writes"). A status written for another reason carries the current generation.
 */
export function sameStatus(a: QueueSplitStatus | undefined, b: QueueSplitStatus): boolean {
  const strip = (s: QueueSplitStatus | undefined) =>
    canonical({
      ...s,
      observedGeneration: undefined,
      conditions: s?.conditions?.map((c) => ({ ...c, lastTransitionTime: '' })),
    });
  return strip(a) === strip(b);
}

/**
 * `next` with each condition's lastTransitionTime taken from `previous` where that condition did
 * not transition (same type, status and reason): a status rewritten because something else in it
 * changed (a delivered count) does not pretend its condition just changed (Kubernetes API
 * conventions: the time of the last status change of the condition).
 */
export function keepTransitionTimes(
  previous: QueueSplitStatus | undefined,
  next: QueueSplitStatus,
): QueueSplitStatus {
  if (!previous?.conditions || !next.conditions) return next;
  return {
    ...next,
    conditions: next.conditions.map((c) => {
      const before = previous.conditions!.find(
        (p) => p.type === c.type && p.status === c.status && p.reason === c.reason,
      );
      return before?.lastTransitionTime ? { ...c, lastTransitionTime: before.lastTransitionTime } : c;
    }),
  };
}

/** JSON text with every object's keys sorted; undefined members are left out, as JSON does. */
function canonical(value: unknown): string {
  return JSON.stringify(value, (_key, v: unknown) =>
    v !== null && typeof v === 'object' && !Array.isArray(v)
      ? Object.fromEntries(Object.entries(v).sort(([x], [y]) => (x < y ? -1 : x > y ? 1 : 0)))
      : v,
  );
}

/** The status of an object the controller's validator refused: nothing of it was acted on. */
export function invalidSplitStatus(split: Pick<QueueSplit, 'metadata'>, problem: string): QueueSplitStatus {
  const message = `This QueueSplit is invalid and was not acted on: ${problem}`;
  return {
    phase: 'Rejected',
    observedGeneration: split.metadata.generation ?? 0,
    nextAction: 'Delete this QueueSplit and create a corrected one (its spec is immutable).',
    conditions: [
      {
        type: 'Ready',
        status: 'False',
        reason: 'InvalidSpec',
        message,
        lastTransitionTime: new Date().toISOString().replace(/\.\d{3}Z$/, 'Z'),
      },
    ],
  };
}
