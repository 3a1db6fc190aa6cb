// Applies Queue Split's objects as `kubectl apply --server-side --force-conflicts` does: the API
// server merges the fields this install owns. Installs running at once (parallel test files, two
// people, the extension and a script) and the other writers of the same objects (the deployment
// controller's revision annotation and status, the API server's CRD status) never meet a 409, and
// an unchanged install writes nothing. A replace at a just-read resourceVersion dropped the
// deployment controller's annotation, which it wrote straight back: concurrent installs were
// refused five times in a row. A field a later install no longer sets is removed.
// Used by deploy/install.ts (tests, demo) and the extension's "Install Controller into Cluster…".
import {
  KubernetesObjectApi,
  PatchStrategy,
  type KubeConfig,
  type KubernetesObject,
} from '@kubernetes/client-node';
import { forClient } from './clientObject';

/** Who owns the fields an install sets (server-side apply's field manager). */
export const INSTALL_FIELD_MANAGER = 'queuesplit-install';

/** What applying one object did; a dry run says what it would have done. */
export type ApplyOutcome = 'created' | 'updated' | 'unchanged';

export interface ApplyOptions {
  /** The API server checks everything (validation, admission, RBAC) and persists nothing. */
  dryRun?: boolean;
  /** Called after each object, in order. */
  applied?: (object: KubernetesObject, outcome: ApplyOutcome) => void;
}

const status = (err: unknown) => (err as { code?: number }).code;

/**
 * The object as its owners declared it: less the bookkeeping of who set what, the version and the
 * status, which other writers change at any moment (the deployment controller, the API server's
 * CRD conditions). A dry run returns the changed object at the old resourceVersion, so the
 * declared object is compared rather than the version.
 */
const same = (before: KubernetesObject, after: KubernetesObject): boolean => {
  const declared = (o: KubernetesObject) =>
    JSON.stringify({
      ...o,
      metadata: { ...o.metadata, managedFields: undefined, resourceVersion: undefined },
      status: undefined,
    });
  return declared(before) === declared(after);
};

export async function applyObjects(
  kc: KubeConfig,
  objects: readonly KubernetesObject[],
  options: ApplyOptions = {},
): Promise<void> {
  const api = KubernetesObjectApi.makeApiClient(kc);
  for (const plain of objects) {
    const object = forClient(plain);
    // Read first only to tell the person what changed; the apply itself needs no version.
    const before = await api
      .read(object as KubernetesObject & { metadata: { name: string } })
      .catch((err: unknown) => {
        if (status(err) === 404) return undefined;
        throw err;
      });
    const after = await api.patch(
      object,
      undefined,
      options.dryRun === true ? 'All' : undefined,
      INSTALL_FIELD_MANAGER,
      true,
      PatchStrategy.ServerSideApply,
    );
    options.applied?.(
      object,
      before === undefined ? 'created' : same(before, after) ? 'unchanged' : 'updated',
    );
  }
}
