// JSON documents kept in ConfigMaps: the controller's state and desired document, and the
// agent's observed document. Writes carry the resourceVersion read, so two writers can never
// silently overwrite each other.
import { CoreV1Api, type KubeConfig, type V1ConfigMap } from '@kubernetes/client-node';
import { isNotFound } from './client';

export interface StoredDoc {
  data: Record<string, string>;
  resourceVersion: string;
  labels?: Record<string, string>;
}

export class ConfigMapStore {
  private readonly core: CoreV1Api;

  constructor(
    kc: KubeConfig,
    readonly namespace: string,
  ) {
    this.core = kc.makeApiClient(CoreV1Api);
  }

  async read(name: string): Promise<StoredDoc | undefined> {
    try {
      const cm = await this.core.readNamespacedConfigMap({ name, namespace: this.namespace });
      return {
        data: cm.data ?? {},
        resourceVersion: cm.metadata?.resourceVersion ?? '',
        ...(cm.metadata?.labels ? { labels: cm.metadata.labels } : {}),
      };
    } catch (err) {
      if (isNotFound(err)) return undefined;
      throw err;
    }
  }

  /** Creates or replaces; `resourceVersion` (when given) makes the write conditional. */
  async write(
    name: string,
    data: Record<string, string>,
    options: { resourceVersion?: string; labels?: Record<string, string> } = {},
  ): Promise<string> {
    const body: V1ConfigMap = {
      metadata: {
        name,
        namespace: this.namespace,
        labels: options.labels,
        resourceVersion: options.resourceVersion,
      },
      data,
    };
    if (options.resourceVersion === undefined) {
      try {
        const created = await this.core.createNamespacedConfigMap({ namespace: this.namespace, body });
        return created.metadata?.resourceVersion ?? '';
      } catch (err) {
        if ((err as { code?: number }).code !== 409) throw err;
        const current = await this.read(name);
        body.metadata!.resourceVersion = current?.resourceVersion;
      }
    }
    const replaced = await this.core.replaceNamespacedConfigMap({ name, namespace: this.namespace, body });
    return replaced.metadata?.resourceVersion ?? '';
  }

  /**
   * Updates an existing ConfigMap (read + conditional replace): needs only get and update. Keeps
   * its labels: the controller's admission policy lets it delete only ConfigMaps that still carry
   * its label (deploy/admissionPolicy.ts).
   */
  async update(name: string, data: Record<string, string>): Promise<void> {
    const current = await this.read(name);
    if (!current) throw new Error(`ConfigMap ${this.namespace}/${name} does not exist`);
    await this.write(name, data, {
      resourceVersion: current.resourceVersion,
      ...(current.labels ? { labels: current.labels } : {}),
    });
  }

  /** The ConfigMaps a label selector finds, with their names. */
  async list(labelSelector: string): Promise<Array<StoredDoc & { name: string }>> {
    const list = await this.core.listNamespacedConfigMap({ namespace: this.namespace, labelSelector });
    return list.items.map((cm) => ({
      name: cm.metadata?.name ?? '',
      data: cm.data ?? {},
      resourceVersion: cm.metadata?.resourceVersion ?? '',
      ...(cm.metadata?.labels ? { labels: cm.metadata.labels } : {}),
    }));
  }

  async remove(name: string): Promise<void> {
    try {
      await this.core.deleteNamespacedConfigMap({ name, namespace: this.namespace });
    } catch (err) {
      if (!isNotFound(err)) throw err;
    }
  }
}
