// The objects "Install Controller into Cluster…" applies: the QueueSplit CRD (built from the same
// schema as deploy/crd/queuesplit.crd.yaml) and deploy/manifests.ts' controller manifests.
import type { KubernetesObject } from '@kubernetes/client-node';
import { queueSplitCrd } from '../../core/crd/crdManifest';
import { controllerManifests, defaultInstall, type InstallOptions } from '../../deploy/manifests';

export function installObjects(options: { image?: string; namespace?: string }): {
  crd: KubernetesObject;
  manifests: KubernetesObject[];
  install: InstallOptions;
} {
  const install: InstallOptions = {
    ...defaultInstall,
    ...(options.image !== undefined && options.image !== '' ? { image: options.image } : {}),
    ...(options.namespace !== undefined && options.namespace !== '' ? { namespace: options.namespace } : {}),
  };
  return {
    crd: queueSplitCrd() as unknown as KubernetesObject,
    manifests: controllerManifests(install) as unknown as KubernetesObject[],
    install,
  };
}
