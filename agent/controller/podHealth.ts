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
  const ready = pod.status?.conditions?.some((c) => c.type === 'Ready' && c.status === 'True');
  const statuses = pod.status?.containerStatuses ?? [];
  return (
    Boolean(ready) &&
    statuses.length > 0 &&
    statuses.every((s) => {
      const started = s.state?.running?.startedAt;
      return s.ready && started !== undefined && nowMs - new Date(started).getTime() >= seconds * 1000;
    })
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
