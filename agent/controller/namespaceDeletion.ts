// A split whose workload's namespace is being deleted: the namespace controller
// deletes the queue-agent and the state ConfigMap, and nothing can be created there again, so no
// handback can finish. The record of every broker resource goes to the controller's namespace
// (which outlives the workload's), with a Warning Event pointing at it (README, "When a split is
// Degraded").
import * as os from 'node:os';
import { CoreV1Api, type KubeConfig } from '@kubernetes/client-node';
import { CLEANUP_KEY } from '../../core/agentProtocol';
import type { SplitState } from '../../core/state/stateDocument';
import { describeError, type Logger } from '../log';
import { isNotFound } from '../kube/client';
import { ConfigMapStore } from '../kube/configMaps';
import { namespaceDeletedRecord } from './cleanupRecord';

export const NAMESPACE_DELETED_REASON = 'NamespaceDeletedDuringSplit';

export class NamespaceDeletion {
  private readonly core: CoreV1Api;
  private readonly records: ConfigMapStore;

  constructor(
    kc: KubeConfig,
    private readonly controllerNamespace: string,
    private readonly log: Logger,
  ) {
    this.core = kc.makeApiClient(CoreV1Api);
    this.records = new ConfigMapStore(kc, controllerNamespace);
  }

  /** Whether the namespace is being deleted (or already gone). */
  async terminating(namespace: string): Promise<boolean> {
    try {
      const ns = await this.core.readNamespace({ name: namespace });
      return Boolean(ns.metadata?.deletionTimestamp) || ns.status?.phase === 'Terminating';
    } catch (err) {
      if (isNotFound(err)) return true;
      throw err;
    }
  }

  /**
   * Writes (or adds to) the record `name` in the controller's namespace: every resource of the
   * state's inventory and the workload's earlier record (`earlier`, read from the terminating
   * namespace while it still exists), then a Warning Event on it.
   */
  async record(name: string, state: SplitState, earlier: string | undefined): Promise<void> {
    const existing = await this.records.read(name);
    const data = namespaceDeletedRecord(state, [existing?.data[CLEANUP_KEY], earlier]);
    const { namespace, name: workload } = state.workload;
    await this.records.write(name, data, {
      labels: {
        'queuesplit.dev/cleanup': 'true',
        'queuesplit.dev/workload': workload,
        'queuesplit.dev/workload-namespace': namespace,
      },
      resourceVersion: existing?.resourceVersion,
    });
    const count = (JSON.parse(data[CLEANUP_KEY]!) as unknown[]).length;
    this.log.warn('workload.namespace_deleted', {
      configMap: `${this.controllerNamespace}/${name}`,
      resources: count,
    });
    await this.event(
      name,
      `Namespace ${namespace} was deleted during a split of ${data.workload}: nothing could be handed back. ` +
        `${count} broker resource(s) were kept and may hold messages; they are listed in ConfigMap ` +
        `${this.controllerNamespace}/${name}. ${data.safeAction}`,
    );
  }

  /** When the state was already gone: the operator still learns which workload to look for. */
  async stateLost(workload: string): Promise<void> {
    this.log.error('workload.namespace_deleted_state_lost', { workload });
    // Best effort: the log says it too, and a failed Event must not keep the finalizers (and so
    // the namespace) for good.
    await this.event(
      undefined,
      `Namespace of ${workload} was deleted during a split and its split state was already gone: ` +
        'broker resources named qs-* for this workload may remain and hold messages. Check the broker ' +
        'for them, move any messages to the source, then delete them.',
    ).catch((err: unknown) => this.log.warn('workload.event_unwritten', { reason: describeError(err) }));
  }

  private async event(configMap: string | undefined, message: string): Promise<void> {
    const now = new Date();
    await this.core.createNamespacedEvent({
      namespace: this.controllerNamespace,
      body: {
        metadata: { generateName: 'queuesplit.namespace-deleted.', namespace: this.controllerNamespace },
        involvedObject: configMap
          ? { apiVersion: 'v1', kind: 'ConfigMap', name: configMap, namespace: this.controllerNamespace }
          : // The API server wants an Event's involved object in the Event's namespace (422 without).
            {
              apiVersion: 'v1',
              kind: 'Namespace',
              name: this.controllerNamespace,
              namespace: this.controllerNamespace,
            },
        reason: NAMESPACE_DELETED_REASON,
        // The Events API caps messages at 1 KiB.
        message: message.length > 1024 ? `${message.slice(0, 1021)}...` : message,
        type: 'Warning',
        source: { component: 'queuesplit-controller' },
        reportingComponent: 'queuesplit.dev/controller',
        reportingInstance: os.hostname(),
        firstTimestamp: now,
        lastTimestamp: now,
        count: 1,
      },
    });
  }
}
