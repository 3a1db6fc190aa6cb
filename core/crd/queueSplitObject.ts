// A new QueueSplit object as the extension and the sidecar create it: its labels (who manages
// it, whose it is, which workload) and its spec. One builder, so both make the same object.
import type { SidecarDeliveryMode } from '../sidecarProtocol';
import type { HeaderFilter } from '../filter';
import { filterSpecFields } from './validateQueueSplit';
import { labelValue } from '../names';
import {
  QUEUE_SPLIT_API_VERSION,
  QUEUE_SPLIT_KIND,
  type QueueSplit,
  type QueueSplitSpec,
  type WorkloadRef,
} from './queueSplitSchema';

export const MANAGED_BY_LABEL = 'app.kubernetes.io/managed-by';
export const OWNER_LABEL = 'queuesplit.dev/owner';
export const WORKLOAD_LABEL = 'queuesplit.dev/workload';

/** The managed-by label's value of each creator. */
export const CREATED_BY = { extension: 'queue-split-vscode', sidecar: 'queue-split-sidecar' } as const;

export interface NewQueueSplit {
  name: string;
  namespace: string;
  createdBy: keyof typeof CREATED_BY;
  workload: WorkloadRef;
  queues: readonly string[];
  filter: HeaderFilter;
  owner: string;
  routeId: string;
  lease: QueueSplitSpec['lease'];
  mode: SidecarDeliveryMode;
  /** http/relay: the hash of the session secret the sidecar proves to the queue-agent. */
  sessionPublicKey?: string;
}

export function queueSplitObject(split: NewQueueSplit): QueueSplit {
  return {
    apiVersion: QUEUE_SPLIT_API_VERSION,
    kind: QUEUE_SPLIT_KIND,
    metadata: {
      name: split.name,
      namespace: split.namespace,
      labels: {
        [MANAGED_BY_LABEL]: CREATED_BY[split.createdBy],
        [OWNER_LABEL]: labelValue(split.owner),
        [WORKLOAD_LABEL]: labelValue(split.workload.name),
      },
    },
    spec: {
      workload: { ...split.workload },
      queues: [...split.queues],
      ...filterSpecFields(split.filter),
      owner: split.owner,
      routeId: split.routeId,
      lease: split.lease,
      delivery: { mode: split.mode },
      ...(split.sessionPublicKey !== undefined ? { session: { publicKey: split.sessionPublicKey } } : {}),
    },
  };
}
