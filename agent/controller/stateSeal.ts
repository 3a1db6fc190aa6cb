// Integrity of the state document (README "Trust boundaries"). The state ConfigMap lives in the
// tenant namespace, next to the workload and its queue-agent, where anyone who may write
// ConfigMaps could forge it. Its SHA-256 is kept in a "seal" ConfigMap in the controller's own
// namespace, which tenants cannot write; a state whose digest the seal does not list is not
// loaded. The seal is written before the state and lists the previous digest too, so a
// controller killed between the two writes still finds the state it left.
// The desired document, which shares the state's ConfigMap, is sealed the same way under its
// own key, and the queue-agent refuses one its seal does not list (agent/queueAgent/main.ts).
import type { KubeConfig } from '@kubernetes/client-node';
import { isConflict, isNotFound } from '../kube/client';
import { ConfigMapStore } from '../kube/configMaps';
import {
  DESIRED_DIGESTS_KEY,
  documentDigest,
  sealDigests,
  sealLists,
  STATE_DIGESTS_KEY as DIGESTS_KEY,
} from '../kube/sealDocument';

export const stateDigest = documentDigest;

/** The controller's admission policy lets it change only ConfigMaps labelled with their workload. */
const sealLabels = (workload: string) => ({
  'queuesplit.dev/seal': 'true',
  'queuesplit.dev/workload': workload,
});

export class StateSeals {
  private readonly store: ConfigMapStore;
  /** Each seal's resourceVersion as last written here: the next write replaces it directly
   * instead of trying a create (409) and reading it first, three requests for every state write. */
  private readonly versions = new Map<string, string>();

  constructor(kc: KubeConfig, controllerNamespace: string) {
    this.store = new ConfigMapStore(kc, controllerNamespace);
  }

  /**
   * Whether `text` is a state this controller wrote: `sealed`; `unlisted` when the seal lists
   * other digests; `absent` when there is no seal at all (never written, or deleted with the
   * controller's namespace: README "Uninstall").
   */
  async verify(name: string, text: string): Promise<'sealed' | 'unlisted' | 'absent'> {
    const seal = await this.store.read(name);
    if (!seal) return 'absent';
    return sealLists(seal.data, DIGESTS_KEY, text) ? 'sealed' : 'unlisted';
  }

  /** Whether the seal lists `desired` (a document the queue-agent will accept). */
  async listsDesired(name: string, desired: string): Promise<boolean> {
    const seal = await this.store.read(name);
    return seal !== undefined && sealLists(seal.data, DESIRED_DIGESTS_KEY, desired);
  }

  /** The digest of the newest desired document the seal lists ('' when none). */
  async newestDesired(name: string): Promise<string> {
    const seal = await this.store.read(name);
    return seal ? (sealDigests(seal.data, DESIRED_DIGESTS_KEY)[0] ?? '') : '';
  }

  /** The command an operator runs to seal a state they have checked (README "Uninstall"). */
  resealCommand(name: string, text: string, workload: string): string {
    const ns = this.store.namespace;
    const labels = Object.entries(sealLabels(workload))
      .map(([k, v]) => `${k}=${v}`)
      .join(' ');
    // Labelled as the controller labels its seals, or it may not rewrite this one later.
    return `kubectl -n ${ns} create configmap ${name} --from-literal=${DIGESTS_KEY}=${stateDigest(text)} && kubectl -n ${ns} label configmap ${name} ${labels}`;
  }

  /**
   * Seals `next` state and `desired` document before they are written; what the ConfigMap holds
   * now (`current` state, the desired document whose digest is `sealedDesired`) stays valid.
   */
  async seal(
    name: string,
    doc: { next: string; current: string; desired: string; sealedDesired: string },
    workload: string,
  ): Promise<void> {
    const list = (...digests: string[]) => [...new Set(digests.filter((d) => d !== ''))].join(',');
    const data = {
      [DIGESTS_KEY]: list(stateDigest(doc.next), doc.current ? stateDigest(doc.current) : ''),
      [DESIRED_DIGESTS_KEY]: list(doc.desired ? documentDigest(doc.desired) : '', doc.sealedDesired),
    };
    const labels = sealLabels(workload);
    const known = this.versions.get(name);
    this.versions.delete(name);
    let version: string;
    try {
      version = await this.store.write(name, data, { labels, resourceVersion: known });
    } catch (err) {
      // Changed (an operator's reseal) or deleted since our last write: written as before, after a read.
      if (known === undefined || !(isConflict(err) || isNotFound(err))) throw err;
      version = await this.store.write(name, data, { labels });
    }
    this.versions.set(name, version);
  }

  async remove(name: string): Promise<void> {
    this.versions.delete(name);
    await this.store.remove(name);
  }
}
