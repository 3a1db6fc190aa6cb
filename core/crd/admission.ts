// Which valid QueueSplits a workload accepts. An empty filter ({}) takes every message from the
// cluster app, so it is an opt-in of whoever owns the workload, not of whoever may create a
// QueueSplit: an annotation on the workload itself (developers hold only read access to
// workloads; README "Who may take a whole queue").
import { DEFAULT_FILTER_KEY, isEmptyFilter, type HeaderFilter } from '../filter';

/** Set to "true" on a Deployment/StatefulSet to accept splits with an empty filter. */
export const WHOLE_QUEUE_ANNOTATION = 'queuesplit.dev/allow-whole-queue';

export interface AdmissionRefusal {
  reason: string;
  message: string;
}

export function wholeQueueRefusal(
  filter: HeaderFilter,
  workload: { kind: string; namespace: string; name: string; annotations?: Readonly<Record<string, string>> },
): AdmissionRefusal | undefined {
  if (!isEmptyFilter(filter)) return undefined;
  if (workload.annotations?.[WHOLE_QUEUE_ANNOTATION] === 'true') return undefined;
  return {
    reason: 'WholeQueueNotAllowed',
    message: `spec.filter: is empty, which takes every message from ${workload.kind} ${workload.namespace}/${workload.name}, and the workload does not allow that. Fix: add a filter such as ${DEFAULT_FILTER_KEY}=<your name>; or, if you own the workload and mean it, annotate it: kubectl -n ${workload.namespace} annotate ${workload.kind.toLowerCase()}/${workload.name} ${WHOLE_QUEUE_ANNOTATION}=true`,
  };
}
