// The objects "Install Controller into Cluster…" applies: the QueueSplit CRD (built from the same
// schema as deploy/crd/queuesplit.crd.yaml) and deploy/manifests.ts' controller manifests.
import type { KubernetesObject } from '@kubernetes/client-node';
import { queueSplitCrd } from '../../core/crd/crdManifest';
import { parseImageReference } from '../../core/image';
import { controllerManifests, defaultInstall, type InstallOptions } from '../../deploy/manifests';

/**
 * `image` and `namespace` come from the settings (empty: the defaults); `overrides` is for
 * automation that installs a non-default build (the e2e test re-applies the test install).
 */
export function installObjects(
  options: { image?: string; namespace?: string },
  overrides: Partial<InstallOptions> = {},
): {
  crd: KubernetesObject;
  manifests: KubernetesObject[];
  install: InstallOptions;
} {
  // The setting is the user's: a short name or an unpinned image is refused before anything is applied.
  const image =
    options.image !== undefined && options.image !== ''
      ? parseImageReference(options.image, 'queueSplit.install.image').reference
      : undefined;
  const install: InstallOptions = {
    ...defaultInstall,
    ...(image !== undefined ? { image } : {}),
    ...(options.namespace !== undefined && options.namespace !== '' ? { namespace: options.namespace } : {}),
    ...overrides,
  };
  return {
    crd: queueSplitCrd() as unknown as KubernetesObject,
    manifests: controllerManifests(install) as unknown as KubernetesObject[],
    install,
  };
}
