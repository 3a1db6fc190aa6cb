// Plain data the extension's views and commands work on. No `vscode` and no Kubernetes client
// here: these types are what the pure view-model functions (and their unit tests) see.
import type { WorkloadSplitStatus } from '../../core/workloadStatus';
import type { QueueSplit } from '../../core/crd/queueSplitSchema';
import type { HeaderFilter } from '../../core/filter';
import type { SidecarDeliveryMode } from '../../core/sidecarProtocol';
import type { Provider } from '../../core/providers';

export type WorkloadKind = 'Deployment' | 'StatefulSet';

/** Which cluster and namespace the extension looks at. */
export interface KubeTargetInfo {
  context: string;
  namespace: string;
  /** Server URL of the context's cluster, for tooltips. */
  server?: string;
  /**
   * Who chose the context: pinned with "Select Context/Namespace…" (kept for this workspace),
   * the queueSplit.context setting, or the kubeconfig's current-context (followed as it changes).
   */
  contextFrom?: 'pinned' | 'setting' | 'kubeconfig';
  /** Who chose the namespace: pinned, the setting, the context's own, or `default`. */
  namespaceFrom?: 'pinned' | 'setting' | 'context' | 'default';
}

/** A logical queue from a workload's declaration. */
export interface DeclaredQueue {
  name: string;
  provider: Provider;
  /** The literal topic or queue the container consumes (not secret: a literal env value). */
  source: string;
  container: string;
}

/** An annotated workload as the tree and the pickers show it. */
export interface WorkloadInfo {
  kind: WorkloadKind;
  name: string;
  namespace: string;
  uid?: string;
  queues: DeclaredQueue[];
  /** Problems with the declaration (formatted "path: problem Fix: ..."); empty when valid. */
  errors: string[];
  /** The controller's workload-level status (core/workloadStatus.ts); it outlives the last split. */
  splitStatus?: WorkloadSplitStatus;
}

/** What the user asks for when starting a split (Start Split…, a launch configuration). */
export interface SplitRequest {
  target: KubeTargetInfo;
  workload: { kind: WorkloadKind; name: string };
  queues: string[];
  filter: HeaderFilter;
  owner: string;
  mode: SidecarDeliveryMode;
  /** http mode: where the sidecar POSTs messages. */
  httpTarget?: string;
  /** relay: each provider's local broker (queueSplit.delivery.relay… settings), and the local
   * topic/queue per queue. */
  relay?: { brokers: Partial<Record<Provider, string>>; to?: Record<string, string> };
}

export type { QueueSplit };
