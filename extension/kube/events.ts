// The recent Kubernetes Events of a split and its workload, for "Show Split Details" (the
// controller reports the workload's split status as Events on the workload: Split, HandingBack,
// SplitDegraded, …; the Deployment's own controller reports its rollouts). The developer role
// does not grant `list events`: a refusal is a line in the view saying so, never a failure.
import { CoreV1Api, type CoreV1Event } from '@kubernetes/client-node';
import type { EventLine, EventsView } from '../model/details';
import type { KubeConnection } from './connection';
import { httpStatus, kubeProblem } from './errors';

/** How many Events the view shows, newest first. */
export const MAX_EVENTS = 12;

export interface EventSubject {
  kind: string;
  name: string;
}

function timeOf(event: CoreV1Event): string | undefined {
  const at =
    event.lastTimestamp ?? event.eventTime ?? event.firstTimestamp ?? event.metadata.creationTimestamp;
  if (at === undefined || at === null) return undefined;
  const date = at instanceof Date ? at : new Date(String(at));
  return Number.isNaN(date.getTime()) ? undefined : date.toISOString();
}

export function eventLine(event: CoreV1Event): EventLine {
  const time = timeOf(event);
  const count = event.series?.count ?? event.count;
  return {
    ...(time !== undefined ? { time } : {}),
    type: event.type ?? 'Normal',
    reason: event.reason ?? '',
    object: `${event.involvedObject.kind ?? ''}/${event.involvedObject.name ?? ''}`,
    message: (event.message ?? '').trim(),
    ...(count !== undefined ? { count } : {}),
  };
}

/** Events about any of `subjects` in `namespace`, newest first; unavailable (with why) when refused. */
export async function listEventsOf(
  connection: KubeConnection,
  namespace: string,
  subjects: readonly EventSubject[],
): Promise<EventsView> {
  const core = connection.kc.makeApiClient(CoreV1Api);
  try {
    const lists = await Promise.all(
      subjects.map((s) =>
        core.listNamespacedEvent({
          namespace,
          fieldSelector: `involvedObject.kind=${s.kind},involvedObject.name=${s.name}`,
        }),
      ),
    );
    const lines = lists
      .flatMap((l) => l.items)
      .map(eventLine)
      .sort((a, b) => (b.time ?? '').localeCompare(a.time ?? ''))
      .slice(0, MAX_EVENTS);
    return { state: 'listed', events: lines };
  } catch (err) {
    if (httpStatus(err) === 403)
      return {
        state: 'unavailable',
        reason: `your credentials (context "${connection.target.context}") may not list events in namespace ${namespace}. The queuesplit-developer role does not grant it; a role that does (the built-in "view", for one) shows them here.`,
      };
    return {
      state: 'unavailable',
      reason: kubeProblem(err, {
        verb: 'list',
        resource: 'events',
        namespace,
        context: connection.target.context,
      }).message,
    };
  }
}
