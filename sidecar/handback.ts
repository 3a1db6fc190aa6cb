// The sidecar's last words after its QueueSplit is gone. "Your route drained" and "the workload is
// handed back" are different facts: the route drains first, then — when it was the last one —
// the controller hands the workload back (drains the app's shadow, restores its env), which can
// wait or get stuck. The controller reports that on the workload itself (core/workloadStatus.ts);
// this follows it for what is left of --detach-timeout and says which it is, with the reason and
// the safe action when the handback is not finished (sidecar/README.md, "Detaching").
import { setTimeout as sleep } from 'node:timers/promises';
import { AppsV1Api } from '@kubernetes/client-node';
import type { WorkloadRef } from '../core/crd/queueSplitSchema';
import {
  WORKLOAD_STATUS_ANNOTATION,
  handbackUnfinished,
  type WorkloadSplitStatus,
} from '../core/workloadStatus';
import { parseWorkloadStatus } from '../core/workloadStatusParse';
import type { KubeTarget } from '../laptop/kube';
import { QueueSplitClient } from '../laptop/queueSplitClient';
import type { Reporter } from './output';
import type { SplitRef } from '../core/sidecarProtocol';

/** The raw annotation (compared, never shown), or undefined when absent or unreadable. */
export async function workloadStatusText(kube: KubeTarget, ref: WorkloadRef): Promise<string | undefined> {
  const apps = kube.kc.makeApiClient(AppsV1Api);
  try {
    const workload =
      ref.kind === 'Deployment'
        ? await apps.readNamespacedDeployment({ name: ref.name, namespace: kube.namespace })
        : await apps.readNamespacedStatefulSet({ name: ref.name, namespace: kube.namespace });
    return workload.metadata?.annotations?.[WORKLOAD_STATUS_ANNOTATION];
  } catch {
    return undefined; // the last words fall back to what the route alone proves
  }
}

export interface HandbackOutcome {
  /** Undefined: the controller published no workload status (an older controller). */
  status?: WorkloadSplitStatus;
  message: string;
  /** Set when the handback is not finished: the warning to emit. */
  pending?: { message: string; suggestedAction: string };
}

/**
 * After the split is gone: waits (up to `timeoutMs`) until the workload status has moved on from
 * `before` (what it said before the delete), then until the handback ends (handed back, still
 * split for others, or Degraded), and words the outcome.
 */
export async function followHandback(options: {
  kube: KubeTarget;
  workload: WorkloadRef;
  split: SplitRef;
  before: string | undefined;
  timeoutMs: number;
  reporter: Reporter;
  pollMs?: number;
}): Promise<HandbackOutcome> {
  const { kube, workload, split, reporter } = options;
  const pollMs = options.pollMs ?? 1_000;
  const deadline = Date.now() + Math.max(0, options.timeoutMs);
  const where = `${workload.kind.toLowerCase()}/${workload.name}`;
  const describe = `kubectl describe ${where} -n ${kube.namespace}`;
  // Other routes on the workload, from the QueueSplits themselves: a controller before
  // agent/controller/workloadStatus.ts mayHoldBack counted routes held back a same-phase status
  // with a new route count for up to 15 s, so after one route left and ours came it could still
  // say 1 while another went on.
  const others = await otherRoutes(kube, workload, split.name);
  if (others !== undefined && others > 0) {
    const status = parseWorkloadStatus(await workloadStatusText(kube, workload));
    return {
      ...(status ? { status } : {}),
      message: `QueueSplit ${split.name} is gone: your route drained back to the app; ${where} stays split for ${others} other route(s).`,
    };
  }
  // The controller rewrites the status in the pass that released the split; a moment's wait for
  // that keeps a stale "Split (1 route)" — our own route — from being read as someone else's.
  // Not when other routes were split beside ours: the status may then stay as it was (the
  // controller holds back a rewrite that tells the same story), and its count, ours less, is
  // already the answer — waiting only made the sidecar exit 10 s late.
  const shared = sharedWithOthers(parseWorkloadStatus(options.before));
  const settleBy = shared ? Date.now() : Math.min(deadline, Date.now() + 10_000);
  let text = await workloadStatusText(kube, workload);
  while (text === options.before && text !== undefined && Date.now() < settleBy) {
    await sleep(pollMs);
    text = await workloadStatusText(kube, workload);
  }
  // Unchanged since before the delete: its route count still includes our own route.
  const ownCounted = text !== undefined && text === options.before;
  let status = parseWorkloadStatus(text);
  let reported = '';
  while (status !== undefined && handbackUnfinished(status) && status.phase !== 'Degraded') {
    if (status.message !== reported) {
      reporter.emit({
        type: 'progress',
        stage: 'draining',
        split,
        message: `Your route drained; handing ${where} back: ${status.message}`,
      });
      reported = status.message;
    }
    if (Date.now() >= deadline) break;
    await sleep(pollMs);
    status = parseWorkloadStatus(await workloadStatusText(kube, workload)) ?? status;
  }
  if (status === undefined) {
    return { message: `QueueSplit ${split.name} is gone: your route drained back to the app.` };
  }
  switch (status.phase) {
    case 'HandedBack':
      return {
        status,
        message: `QueueSplit ${split.name} is gone: your route drained, and ${where} is handed back (the app consumes its own sources again).`,
      };
    case 'Split':
    case 'Splitting': {
      const others = ownCounted ? status.routes - 1 : status.routes;
      return {
        status,
        message:
          others > 0
            ? `QueueSplit ${split.name} is gone: your route drained back to the app; ${where} stays split for ${others} other route(s).`
            : `QueueSplit ${split.name} is gone: your route drained back to the app.`,
      };
    }
    default:
      return {
        status,
        message: `QueueSplit ${split.name} is gone and your route drained, but ${where} is not handed back yet: ${status.message}`,
        pending: {
          message: `The handback of ${where} is not finished (${status.phase}): ${status.message}`,
          suggestedAction: `${status.nextAction ?? 'Nothing is lost; the controller goes on without the sidecar.'} Follow it with \`${describe}\`.`,
        },
      };
  }
}

/** A status read before our delete that counted routes besides ours (it counts ours too). */
function sharedWithOthers(before: WorkloadSplitStatus | undefined): boolean {
  return (before?.phase === 'Split' || before?.phase === 'Splitting') && before.routes > 1;
}

/** The QueueSplits on the workload other than ours (deleted ones still drain: they count), or
 * undefined when they cannot be listed (the workload status then says it). */
async function otherRoutes(
  kube: KubeTarget,
  workload: WorkloadRef,
  ours: string,
): Promise<number | undefined> {
  try {
    const splits = await new QueueSplitClient(kube.kc, kube.namespace).list();
    return splits.filter(
      (s) =>
        s.metadata.name !== ours &&
        s.spec.workload.kind === workload.kind &&
        s.spec.workload.name === workload.name,
    ).length;
  } catch {
    return undefined;
  }
}
