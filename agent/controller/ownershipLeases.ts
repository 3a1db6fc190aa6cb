// One ownership Lease per broker source (docs/design.md §6): two workloads declaring the same topic and
// group (or the same queue) on the same broker must not be split at once — each would move the
// other's messages. The key is a non-secret hash: the broker endpoint when it is a literal, the
// Secret/ConfigMap reference when it is not (the controller never reads a Secret value).
import { AppsV1Api, CoordinationV1Api, type KubeConfig } from '@kubernetes/client-node';
import { digest } from '../../core/hash';
import { sourceOwnershipKey } from '../../core/sourceOwnership';
import type { ResolvedQueue } from '../../core/queueConfig/resolveQueues';
import { isConflict, isNotFound } from '../kube/client';
import type { Workload } from './workloads';

/** The ownership Lease of a source key (exported for the tests that read the Leases). */
export const leaseName = (key: string) => `qs-own-${digest(['lease', key], 24)}`;

export class OwnershipLeases {
  private readonly leases: CoordinationV1Api;
  private readonly apps: AppsV1Api;

  constructor(kc: KubeConfig) {
    this.leases = kc.makeApiClient(CoordinationV1Api);
    this.apps = kc.makeApiClient(AppsV1Api);
  }

  /** Takes every queue's source for the workload; returns a conflict message, or undefined. */
  async acquire(
    controllerNamespace: string,
    namespace: string,
    workload: Workload,
    queues: readonly ResolvedQueue[],
  ) {
    const holder = `${namespace}/${workload.metadata?.name}/${workload.metadata?.uid}`;
    // Leases this call created or took over: given back when a later queue conflicts, so a
    // rejected split leaves no claim that would refuse an unrelated workload on those sources.
    const taken: string[] = [];
    const conflict = async (message: string) => {
      for (const name of taken) {
        await this.leases
          .deleteNamespacedLease({ name, namespace: controllerNamespace })
          .catch((err: unknown) => {
            if (!isNotFound(err)) throw err;
          });
      }
      return message;
    };
    for (const queue of queues) {
      const name = leaseName(sourceOwnershipKey(namespace, queue));
      try {
        await this.leases.createNamespacedLease({
          namespace: controllerNamespace,
          body: {
            metadata: { name, labels: { 'queuesplit.dev/ownership': 'true' } },
            spec: { holderIdentity: holder },
          },
        });
        taken.push(name);
      } catch (err) {
        if (!isConflict(err)) throw err;
        const current = await this.leases.readNamespacedLease({ name, namespace: controllerNamespace });
        const owner = current.spec?.holderIdentity;
        if (owner !== holder && owner && (await this.holderGone(owner))) {
          // The owner was deleted (with its split state) without a handback: the claim is stale.
          await this.leases.replaceNamespacedLease({
            name,
            namespace: controllerNamespace,
            body: { ...current, spec: { ...current.spec, holderIdentity: holder } },
          });
          taken.push(name);
          continue;
        }
        if (owner !== holder) {
          return conflict(
            `Queue ${queue.name} (${queue.provider} source ${queue.source}) is already split through workload ${owner?.split('/').slice(0, 2).join('/')}. Stop that split first, or split that workload.`,
          );
        }
      }
    }
    return undefined;
  }

  /** Whether the workload named by a holder identity (namespace/name/uid) is gone or re-created. */
  private async holderGone(owner: string): Promise<boolean> {
    const [namespace, name, uid] = owner.split('/');
    if (!namespace || !name || !uid) return false;
    for (const read of [
      () => this.apps.readNamespacedDeployment({ name, namespace }),
      () => this.apps.readNamespacedStatefulSet({ name, namespace }),
    ]) {
      try {
        if ((await read()).metadata?.uid === uid) return false;
      } catch (err) {
        if (!isNotFound(err)) throw err;
      }
    }
    return true;
  }

  /** Releases every ownership Lease the workload holds (found by holder, whatever the keys were). */
  async release(controllerNamespace: string, workloadUid: string) {
    const list = await this.leases.listNamespacedLease({
      namespace: controllerNamespace,
      labelSelector: 'queuesplit.dev/ownership=true',
    });
    for (const lease of list.items) {
      if (!lease.spec?.holderIdentity?.endsWith(`/${workloadUid}`)) continue;
      try {
        await this.leases.deleteNamespacedLease({
          name: lease.metadata!.name!,
          namespace: controllerNamespace,
        });
      } catch (err) {
        if (!isNotFound(err)) throw err;
      }
    }
  }
}
