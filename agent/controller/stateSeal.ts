// Integrity of the state document (README "Trust boundaries"). The state ConfigMap lives in the
// tenant namespace, next to the workload and its queue-agent, where anyone who may write
// ConfigMaps could forge it. Its SHA-256 is kept in a "seal" ConfigMap in the controller's own
// namespace, which tenants cannot write; a state whose digest the seal does not list is not
// loaded. The seal is written before the state and lists the previous digest too, so a
// controller killed between the two writes still finds the state it left.
import { createHash } from 'node:crypto';
import type { KubeConfig } from '@kubernetes/client-node';
import { ConfigMapStore } from '../kube/configMaps';

const DIGESTS_KEY = 'digests';

export const stateDigest = (text: string): string => createHash('sha256').update(text).digest('hex');

/** The controller's admission policy lets it change only ConfigMaps labelled with their workload. */
const sealLabels = (workload: string) => ({
  'queuesplit.dev/seal': 'true',
  'queuesplit.dev/workload': workload,
});

export class StateSeals {
  private readonly store: ConfigMapStore;

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
    return (seal.data[DIGESTS_KEY] ?? '').split(',').includes(stateDigest(text)) ? 'sealed' : 'unlisted';
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

  /** Seals `next` before it is written; `current` (what the ConfigMap holds now) stays valid. */
  async seal(name: string, next: string, current: string, workload: string): Promise<void> {
    const digests = [stateDigest(next), ...(current ? [stateDigest(current)] : [])];
    await this.store.write(name, { [DIGESTS_KEY]: digests.join(',') }, { labels: sealLabels(workload) });
  }

  remove(name: string): Promise<void> {
    return this.store.remove(name);
  }
}
