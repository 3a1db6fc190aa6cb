// The ConfigMaps a workload's queue declaration reads when it names its queue in a mounted file
// (sourceFile, groupFile: docs/design.md, "Queue names in mounted files"), read with the
// developer's own credentials as the connection's ConfigMaps are (brokerConnection.ts). A
// declaration without file settings reads none.
import { CoreV1Api } from '@kubernetes/client-node';
import type { ConfigMapData, ConfigMapLookup } from '../core/queueConfig/fileResolution';
import type { WorkloadLike } from '../core/queueConfig/podTemplate';
import { configMapsToRead } from '../core/queueConfig/resolveWorkload';
import { kubeError, kubeStatus, type KubeTarget } from './kube';

/** `declared`: the workload with its originals (withOriginalEnv), so a split's copy is not read. */
export async function declaredConfigMaps(kube: KubeTarget, declared: WorkloadLike): Promise<ConfigMapLookup> {
  const core = kube.kc.makeApiClient(CoreV1Api);
  const out = new Map<string, ConfigMapData | undefined>();
  for (const name of configMapsToRead(declared)) {
    try {
      const cm = await core.readNamespacedConfigMap({ name, namespace: kube.namespace });
      out.set(name, {
        ...(cm.data ? { data: cm.data } : {}),
        ...(cm.binaryData ? { binaryData: cm.binaryData } : {}),
      });
    } catch (err) {
      if (kubeStatus(err) !== 404) {
        throw kubeError(
          err,
          {
            verb: 'get',
            resource: 'configmaps',
            namespace: kube.namespace,
            name,
            purpose: 'to read the queue name the workload declares in a mounted file',
            forbiddenAction: `Ask your cluster admin for get on configmaps/${name} in namespace ${kube.namespace} (README, "The developer role").`,
          },
          kube.context,
        );
      }
      out.set(name, undefined);
    }
  }
  return out;
}
