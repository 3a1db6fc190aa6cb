// How the controller judges the pods of a new template during a rollout. A pod counts once every
// container is ready and has kept running for a while (like minReadySeconds: a consumer that
// crashes a second after start is not rolled out). A pod whose container keeps crashing or
// cannot start will not become ready by waiting: REDIRECTING_APP fails on it instead of waiting
// out the step timeout, so the split aborts into the proved rollback within seconds.
import type { V1ContainerStatus, V1Pod } from '@kubernetes/client-node';

/** How long every container of a pod must have run, ready, before the pod counts as rolled out. */
export const MIN_STABLE_SECONDS = 5;

/** Ready, and every container running for at least `seconds` (the workload's minReadySeconds if longer). */
export function stablyReady(pod: V1Pod, nowMs: number, seconds = MIN_STABLE_SECONDS): boolean {
  return msUntilStable(pod, nowMs, seconds) === 0;
}

/**
 * How long until a ready pod has run `seconds`: 0 once it has, undefined while it is not ready
 * (nothing to wait for by the clock then: a change of the pod says when). The controller re-checks
 * at that moment instead of at its next interval pass.
 */
export function msUntilStable(pod: V1Pod, nowMs: number, seconds = MIN_STABLE_SECONDS): number | undefined {
  const ready = pod.status?.conditions?.some((c) => c.type === 'Ready' && c.status === 'True');
  const statuses = pod.status?.containerStatuses ?? [];
  if (!ready || statuses.length === 0) return undefined;
  let wait = 0;
  for (const s of statuses) {
    const started = s.state?.running?.startedAt;
    if (!s.ready || started === undefined) return undefined;
    wait = Math.max(wait, new Date(started).getTime() + seconds * 1000 - nowMs);
  }
  return wait;
}

/**
 * Ready, every container ready, running and never restarted. With a consumer on each of the
 * workload's application shadows (the queue-agent's live read), the controller counts such a pod
 * as rolled out without the rest of the stable window: the window is there for an app that
 * cannot consume its shadow and crashes within seconds, and this one consumes it.
 */
export function readyUnrestarted(pod: V1Pod): boolean {
  const ready = pod.status?.conditions?.some((c) => c.type === 'Ready' && c.status === 'True');
  const statuses = pod.status?.containerStatuses ?? [];
  return (
    ready === true &&
    statuses.length > 0 &&
    statuses.every((s) => s.ready && s.restartCount === 0 && s.state?.running !== undefined)
  );
}

/** Restarts after which a crashing container counts as crash-looping, not as a one-off. */
export const CRASH_LOOP_RESTARTS = 3;

/** Waiting reasons the kubelet does not leave without a change to the pod spec. */
const STUCK_REASONS = ['ErrImagePull', 'ImagePullBackOff', 'InvalidImageName', 'CreateContainerError'];

function lastExit(status: V1ContainerStatus): string {
  const t = status.state?.terminated ?? status.lastState?.terminated;
  return t ? `, last exit code ${t.exitCode}${t.reason ? ` (${t.reason})` : ''}` : '';
}

/** Why the first of `pods` will not become ready on its own, or undefined when none is stuck. */
export function stuckPod(pods: readonly V1Pod[]): string | undefined {
  for (const pod of pods) {
    for (const status of pod.status?.containerStatuses ?? []) {
      const waiting = status.state?.waiting?.reason;
      const name = `pod ${pod.metadata?.name} container ${status.name}`;
      if (status.restartCount >= CRASH_LOOP_RESTARTS && !status.ready) {
        return `${name} is crash-looping (${status.restartCount} restarts${lastExit(status)})`;
      }
      if (waiting && STUCK_REASONS.includes(waiting)) {
        return `${name} cannot start (${waiting})`;
      }
    }
  }
  return undefined;
}

/** Waiting reasons of a queue-agent container that waiting will not cure: fail the step now. */
const AGENT_CANNOT_START = [
  'ErrImagePull',
  'ImagePullBackOff',
  'InvalidImageName',
  'CreateContainerError',
  'CreateContainerConfigError',
];

export interface AgentPodView {
  /** The agent Deployment's conditions (the deployment controller copies ReplicaFailure there). */
  conditions: { type: string; status: string; reason?: string; message?: string }[];
  pods: readonly V1Pod[];
  /** The newest Warning event message per pod name (kubelet: Failed, BackOff, Unhealthy). */
  warnings: ReadonlyMap<string, string>;
}

export interface AgentTrouble {
  /** Waiting will not help (refused pod, image that cannot be pulled): fail the step now. */
  permanent: boolean;
  /** What the pods and events say, with the safe next action. Names and reasons, never values. */
  cause: string;
}

/**
 * Why the queue-agent is not running ready, or undefined when it is (or nothing says why yet and
 * waiting may still help). The coordinator fails the current step on a permanent cause at once,
 * and on any cause once the agent has stayed unready for the agent start timeout.
 */
export function agentTrouble(view: AgentPodView): AgentTrouble | undefined {
  const refused = view.conditions.find((c) => c.type === 'ReplicaFailure' && c.status === 'True');
  const live = view.pods.filter((p) => !p.metadata?.deletionTimestamp);
  if (live.length === 0) {
    if (refused) {
      return {
        permanent: true,
        cause: `the cluster refused the queue-agent pod (${refused.reason ?? 'FailedCreate'}: ${refused.message ?? 'no message'}). Allow the pod in this namespace (PodSecurity level, quota, LimitRange or admission policy), then retry`,
      };
    }
    return { permanent: false, cause: 'no queue-agent pod exists yet' };
  }
  for (const pod of live) {
    const name = pod.metadata?.name ?? '?';
    const warning = view.warnings.get(name);
    const seen = warning ? `; last event: ${warning}` : '';
    for (const s of pod.status?.containerStatuses ?? []) {
      const waiting = s.state?.waiting;
      if (waiting?.reason && AGENT_CANNOT_START.includes(waiting.reason)) {
        return {
          permanent: true,
          cause: `queue-agent pod ${name} cannot start its container (${waiting.reason}${seen}). Check the controller's --agent-image and that the node can pull it, then retry`,
        };
      }
      if (s.ready) continue;
      // A crash loop is told as one even in the second the container runs again between two
      // crashes: the last termination says more than the readiness probe it has not passed yet.
      if (s.restartCount > 0 && (!s.state?.running || s.lastState?.terminated)) {
        return {
          permanent: false,
          cause: `queue-agent pod ${name} keeps crashing (${s.restartCount} restarts${lastExit(s)}${seen}). Read its logs (kubectl -n ${pod.metadata?.namespace} logs ${name} --previous), fix the cause, then retry`,
        };
      }
      if (s.state?.running) {
        return {
          permanent: false,
          cause: `queue-agent pod ${name} runs but does not pass its readiness probe (/readyz${seen}). Read its logs (kubectl -n ${pod.metadata?.namespace} logs ${name}), fix the cause, then retry`,
        };
      }
    }
    if ((pod.status?.containerStatuses ?? []).length === 0) {
      return {
        permanent: false,
        cause: `queue-agent pod ${name} is ${pod.status?.phase ?? 'Pending'}${seen}`,
      };
    }
  }
  const ready = live.some((p) =>
    p.status?.conditions?.some((c) => c.type === 'Ready' && c.status === 'True'),
  );
  return ready ? undefined : { permanent: false, cause: 'the queue-agent pod is not ready yet' };
}
