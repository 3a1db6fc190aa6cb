// The QueueSplit resource of one namespace, with the developer's own credentials: the calls the
// extension and the sidecar make. Failures come back as the API client threw them; each caller
// turns them into its own actionable error (a 404 may mean the CRD is not installed).
import {
  CustomObjectsApi,
  PatchStrategy,
  Watch,
  setHeaderOptions,
  type KubeConfig,
} from '@kubernetes/client-node';
import {
  QUEUE_SPLIT_GROUP,
  QUEUE_SPLIT_PLURAL,
  QUEUE_SPLIT_VERSION,
  type QueueSplit,
  type QueueSplitSpec,
} from '../core/crd/queueSplitSchema';

/** The resource as RBAC and error messages name it. */
export const QUEUE_SPLIT_RESOURCE = `${QUEUE_SPLIT_PLURAL}.${QUEUE_SPLIT_GROUP}`;

const REF = { group: QUEUE_SPLIT_GROUP, version: QUEUE_SPLIT_VERSION, plural: QUEUE_SPLIT_PLURAL };
const MERGE_PATCH = setHeaderOptions('Content-Type', PatchStrategy.MergePatch);

export class QueueSplitClient {
  private readonly api: CustomObjectsApi;

  constructor(
    kc: KubeConfig,
    readonly namespace: string,
  ) {
    this.api = kc.makeApiClient(CustomObjectsApi);
  }

  async list(): Promise<QueueSplit[]> {
    const list = (await this.api.listNamespacedCustomObject({ ...REF, namespace: this.namespace })) as {
      items?: QueueSplit[];
    };
    return list.items ?? [];
  }

  async get(name: string): Promise<QueueSplit> {
    return (await this.api.getNamespacedCustomObject({
      ...REF,
      namespace: this.namespace,
      name,
    })) as QueueSplit;
  }

  async create(body: QueueSplit): Promise<QueueSplit> {
    return (await this.api.createNamespacedCustomObject({
      ...REF,
      namespace: this.namespace,
      body,
    })) as QueueSplit;
  }

  async patchSpec(name: string, spec: Partial<QueueSplitSpec>): Promise<QueueSplit> {
    return (await this.api.patchNamespacedCustomObject(
      { ...REF, namespace: this.namespace, name, body: { spec } },
      MERGE_PATCH,
    )) as QueueSplit;
  }

  /** Deletes exactly this object when `uid` is given (a precondition: 409 for another one). */
  async delete(name: string, uid?: string): Promise<void> {
    await this.api.deleteNamespacedCustomObject({
      ...REF,
      namespace: this.namespace,
      name,
      ...(uid !== undefined ? { body: { preconditions: { uid } } } : {}),
    });
  }
}

/** Watches one QueueSplit by name: `onEvent` on each change (and once for the object as it is
 * when the watch opens), `onEnd` when the watch closes (`err` unset when the server ended it). */
export function watchQueueSplit(
  kc: KubeConfig,
  namespace: string,
  name: string,
  handlers: { onEvent: () => void; onEnd: (err: unknown) => void },
): Promise<AbortController> {
  return new Watch(kc).watch(
    `/apis/${QUEUE_SPLIT_GROUP}/${QUEUE_SPLIT_VERSION}/namespaces/${namespace}/${QUEUE_SPLIT_PLURAL}`,
    { fieldSelector: `metadata.name=${name}` },
    () => handlers.onEvent(),
    (err: unknown) => handlers.onEnd(err),
  );
}
